-- materialized: table
-- Fact: judged choices counted per (player, kind, dice, turn-points bucket), with the sums the
-- decision-quality reports re-aggregate (choices, judged, loss_points, optimal: loss < 1e-6,
-- blunders: loss > f_blunder_threshold) and, in blunder_rows, the blunders themselves (one
-- struct per judged choice losing more than the threshold), so that one pass over the choices
-- gives every figure and the per-choice rows are never stored.
with choices as (
    select * from int_choice_values
),

final as (
    select
        player,
        kind,
        dice,
        points_lo,
        count(*) as choices,
        count(*) filter (where judged) as judged,
        coalesce(sum(loss) filter (where judged), 0.0) as loss_points,
        count(*) filter (where judged and loss < 1e-6) as optimal,
        count(*) filter (where judged and loss > getvariable('f_blunder_threshold')) as blunders,
        list(
            struct_pack(
                game_no := game_no,
                seq := seq,
                turn := turn,
                points := points,
                opened := opened,
                roll_key := roll_key,
                kept_key := kept_key,
                choice := choice,
                best := best,
                value_made := value_made,
                value_best := value_best,
                loss := loss
            )
        ) filter (where judged and loss > getvariable('f_blunder_threshold')) as blunder_rows
    from choices
    group by all
)

select * from final

-- Fact: fct_decision_quality's counts over the choices of the two-player games, read from
-- the judge's output (int_choices_judged), which passes each choice's single-turn columns on:
-- the choices are computed once for both yardsticks (the loss and the points bucket worked
-- out here as int_choice_values has them: two columns fewer held in Python).
with choices as (
    select
        *,
        value_best - value_made as loss,
        points_bucket_lo(points) as points_lo
    from int_choices_judged
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

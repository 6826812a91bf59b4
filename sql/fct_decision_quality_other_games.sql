-- Fact: fct_decision_quality's counts over the choices of the games of any other number of
-- players than two, straight from int_choice_values_other_games (int_choice_values over
-- int_other_games: on a dataset of two-player games it reads almost nothing). Spark computes
-- it where the rows are; the two-player half needs the judge on the driver.
with choices as (
    select * from int_choice_values_other_games
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

-- materialized: table
-- Fact: each player's choices in each two-player game in scope (fct_race_choices), counted
-- and summed in one pass over the choices, for the figures that re-aggregate them
-- (rpt_race_quality, fct_game_race_loss): choices, judged (by winning chance), loss_pp
-- (summed over the judged ones, percentage points), accuracy_sum (race_accuracy summed over
-- the judged ones), optimal (loss below 1e-9 pp), mistakes (more than f_race_mistake_pp, up
-- to f_race_blunder_pp) and blunders (more than f_race_blunder_pp).
with choices as (
    select game_no, player, race_judged, loss_pp from fct_race_choices
),

final as (
    select
        game_no,
        player,
        count(*) as choices,
        count(*) filter (where race_judged) as judged,
        coalesce(sum(loss_pp) filter (where race_judged), 0.0) as loss_pp,
        coalesce(sum(race_accuracy(loss_pp)) filter (where race_judged), 0.0) as accuracy_sum,
        count(*) filter (where race_judged and loss_pp < 1e-9) as optimal,
        count(*) filter (
            where race_judged and loss_pp > getvariable('f_race_mistake_pp')
            and loss_pp <= getvariable('f_race_blunder_pp')
        ) as mistakes,
        count(*) filter (where race_judged and loss_pp > getvariable('f_race_blunder_pp')) as blunders
    from choices
    group by game_no, player
)

select * from final

-- Intermediate: every choice of the games in scope judged against the exact single-turn
-- policy, one row per choice: int_choice_values with the game id and the dice as text (the
-- per-choice view that tests and the Python API read; the reports read fct_decision_quality).
--   kind 'keep'    points = turn points before the roll, dice = dice rolled; roll = the roll,
--                  made/best = kept dice ("1 5")
--   kind 'action'  points = turn points with the keep (corrected), dice = dice left to roll;
--                  made/best = 'bank' / 'roll'
-- loss = value_best - value_made (>= 0); judged false (values null) when the state is not
-- valid (see int_choice_values).
with choices as (
    select * from int_choice_values
),

games as (
    select game_id, game_no from int_games_in_scope
),

final as (
    select
        choices.kind,
        games.game_id,
        choices.seq,
        choices.player,
        choices.turn,
        choices.ruleset_id,
        choices.points,
        choices.dice,
        choices.opened,
        dice_text(choices.roll_key) as roll,
        case when choices.kind = 'keep' then dice_text(choices.kept_key) else choices.choice end as made,
        choices.best,
        choices.value_made,
        choices.value_best,
        choices.judged,
        choices.loss,
        choices.points_lo
    from choices
    inner join games on choices.game_no = games.game_no
)

select * from final

-- Intermediate: every choice of the two-player games in scope (int_choice_values_two_player:
-- int_choice_values over int_two_player_games, its single-turn judgement included) as the judge (pipeline.solved.judge, the Python model
-- int_choices_judged) reads it, so that their choices are computed once for both yardsticks:
-- the judge passes every column on to its output (fct_decision_quality_two_player's
-- single-turn figures, which work out the loss and the points bucket themselves: two columns
-- fewer held) and judges by winning chance the choices of those games' turns (int_race_turns,
-- matched to the choices by game, player and turn in the judge). It reads, in place, the
-- fixed-width numbers: ruleset_id, points, dice, the dice keys and
--   flags   1 judged against the single turn (int_choice_values.judged: a legal keep on the
--           grid, a bank-or-roll following it), 2 opened, 4 a keep, 8 rolled
-- Games with any other number of players are not here: they keep the single-turn yardstick,
-- their choices counted straight from int_choice_values_other_games
-- (fct_decision_quality_other_games).
with choices as (
    select * from int_choice_values_two_player
),

final as (
    select
        game_no,
        seq,
        kind,
        player,
        turn,
        points,
        dice,
        opened,
        roll_key,
        kept_key,
        choice,
        best,
        value_made,
        value_best,
        judged,
        start_total,
        other_start_total,
        ruleset_id::integer as ruleset_id,
        (
            case when judged then 1 else 0 end
            + case when opened then 2 else 0 end
            + case when kind = 'keep' then 4 else 0 end
            + case when choice = 'roll' then 8 else 0 end
        )::tinyint as flags
    from choices
)

select * from final

-- Intermediate: every choice in scope (int_choice_values: its single-turn judgement
-- included) as the judge of both yardsticks (pipeline.solved.judge, the Python model
-- int_choices_judged) reads it, so that the choices are computed once for both: the judge
-- passes every column on to its output (fct_decision_quality's single-turn figures, which
-- work out the loss and the points bucket themselves: two columns fewer held) and
-- judges by winning chance the choices of the two-player games' turns (int_race_turns,
-- matched to the choices by game, player and turn in the judge; the rest keep the
-- single-turn yardstick). It reads, in place, the fixed-width numbers: ruleset_id, points,
-- dice, the dice keys and
--   flags   1 judged against the single turn (int_choice_values.judged: a legal keep on the
--           grid, a bank-or-roll following it), 2 opened, 4 a keep, 8 rolled
with choices as (
    select * from int_choice_values
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

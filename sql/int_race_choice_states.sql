-- materialized: table
-- Intermediate: every choice of the two-player games in scope (int_choice_values) with both
-- banked totals at its turn's start (int_race_turns): the state the winning-chance yardstick
-- judges it in. A table, so the choices are worked out once for the judge's input
-- (int_race_judge_input) and the fact that joins its output back (fct_race_choices).
-- `judged` is the single-turn validity (a legal keep on the grid, a bank-or-roll following
-- it); pipeline.solved.judge adds the two-player checks.
with choices as (
    select game_no, seq, kind, player, turn, ruleset_id, points, dice, opened, roll_key, kept_key, choice, judged
    from int_choice_values
),

final as (
    select
        choices.game_no,
        choices.seq,
        choices.kind,
        choices.player,
        choices.turn,
        choices.ruleset_id,
        choices.points,
        choices.dice,
        choices.opened,
        choices.roll_key,
        choices.kept_key,
        choices.choice,
        choices.judged,
        race.mover_total,
        race.other_total
    from choices
    inner join int_race_turns as race
        on choices.game_no = race.game_no
        and choices.player = race.player
        and choices.turn = race.turn
)

select * from final

-- Intermediate: every choice of the two-player games in scope (int_choice_values) with the
-- state the winning-chance yardstick needs: both banked totals at the turn's start
-- (int_race_turns). Numbers only (the ruleset by id: int_race_rulesets), so the Python model
-- that reads it (int_race_choices) holds millions of rows in little memory. `judged` is the
-- single-turn validity (a legal keep on the grid, a bank-or-roll following it);
-- pipeline.solved.judge adds the two-player checks.
with choices as (
    select game_no, seq, kind, player, turn, ruleset_id, points, dice, opened, roll_key, kept_key, choice, judged
    from int_choice_values
),

final as (
    select
        choices.game_no,
        choices.seq,
        choices.kind = 'keep' as is_keep,
        choices.ruleset_id,
        choices.points,
        choices.dice,
        coalesce(choices.opened, false) as opened,
        coalesce(choices.roll_key, 0) as roll_key,
        coalesce(choices.kept_key, 0) as kept_key,
        coalesce(choices.choice = 'roll', false) as rolled,
        coalesce(choices.judged, false) as judged,
        race.mover_total,
        race.other_total
    from choices
    inner join int_race_turns as race
        on choices.game_no = race.game_no
        and choices.player = race.player
        and choices.turn = race.turn
)

select * from final

-- Intermediate: every choice of the two-player games in scope (int_choice_values) with the
-- state the winning-chance yardstick needs: the ruleset, both banked totals at the turn's
-- start (int_race_turns). `judged` is the single-turn validity (a legal keep on the grid, a
-- bank-or-roll following it); pipeline.stats.race_judge adds the two-player checks.
with choices as (
    select game_no, seq, kind, player, turn, ruleset_id, points, dice, opened, roll_key, kept_key, choice, judged
    from int_choice_values
),

games as (
    select distinct ruleset_id, ruleset from int_games_in_scope
),

final as (
    select
        choices.*,
        games.ruleset,
        race.mover_total,
        race.other_total
    from choices
    inner join int_race_turns as race
        on choices.game_no = race.game_no
        and choices.player = race.player
        and choices.turn = race.turn
    inner join games on choices.ruleset_id = games.ruleset_id
)

select * from final

-- Intermediate: the games every filter but --player selects, with how each ended. The league
-- figures are computed over these: a rating depends on every game its opponents played, so
-- --player narrows their rows, never their games. int_games_in_scope narrows these to the
-- games a --player sat in.
-- start_ts is the game's start: its first timestamp (games.first_ts), the game_start's ts
-- whenever that line has one. Filters (DuckDB variables set by pipeline.stats, null = none):
--   f_game      a game_id
--   f_rulesets  the canonical ruleset texts equal to --rules (resolved in Python)
--   f_since     games that started at or after this instant (UTC)
--   f_until     games that started at or before this instant (the last microsecond of --until)
with games as (
    select * from stg_games
),

finished as (
    select game_id, ended, finished from int_finished_games
),

final as (
    select
        games.game_id,
        games.ruleset,
        games.ruleset_name,
        games.complete,
        games.first_ts as start_ts,
        finished.ended,
        finished.finished
    from games
    inner join finished on games.game_id = finished.game_id
    where (getvariable('f_game') is null or games.game_id = getvariable('f_game'))
      and (getvariable('f_rulesets') is null or list_contains(getvariable('f_rulesets')::varchar[], games.ruleset))
      and (getvariable('f_since') is null or games.first_ts >= getvariable('f_since'))
      and (getvariable('f_until') is null or games.first_ts <= getvariable('f_until'))
)

select * from final

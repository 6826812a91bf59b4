-- materialized: table
-- Intermediate: the games the filters select, with their canonical ruleset and a small
-- integer ruleset_id (cheaper to group and join on than the ruleset's JSON text), and a
-- game_no (an integer stand-in for game_id where millions of rows are sorted or joined).
-- Filters (DuckDB variables set by pipeline.stats, null = no filter):
--   f_game      a game_id
--   f_rulesets  the canonical ruleset texts equal to --rules (resolved in Python)
--   f_since     games whose first event is at or after this instant (UTC)
--   f_until     games whose first event is before this instant (the day after --until)
--   f_player    games this player sat in
with games as (
    select * from stg_games
),

game_players as (
    select * from stg_game_players
),

filtered as (
    select
        games.game_id,
        games.ruleset,
        games.ruleset_name,
        games.complete
    from games
    where (getvariable('f_game') is null or games.game_id = getvariable('f_game'))
      and (getvariable('f_rulesets') is null or list_contains(getvariable('f_rulesets')::varchar[], games.ruleset))
      and (getvariable('f_since') is null or games.first_ts >= getvariable('f_since'))
      and (getvariable('f_until') is null or games.first_ts < getvariable('f_until'))
      and (
          getvariable('f_player') is null
          or games.game_id in (
              select game_players.game_id
              from game_players
              where game_players.player = getvariable('f_player')
          )
      )
),

final as (
    select
        game_id,
        ruleset,
        dense_rank() over (order by ruleset) as ruleset_id,
        row_number() over (order by game_id) as game_no,
        ruleset_name,
        complete
    from filtered
)

select * from final

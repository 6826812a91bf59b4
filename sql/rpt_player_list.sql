-- Report: the players, one row each, by name: what `farkle-logs players` lists. Over the
-- league scope (every filter but --player; f_players: only these players' rows).
--   games            games sat in; finished_games: those finished (int_finished_games)
--   first_seen, last_seen  the start of their first and last game (null: no timestamps)
with games as (
    select game_id, start_ts, finished from int_league_games
),

seats as (
    select game_id, player from stg_game_players
),

final as (
    select
        seats.player,
        count(*) as games,
        count(*) filter (where games.finished) as finished_games,
        min(games.start_ts) as first_seen,
        max(games.start_ts) as last_seen
    from seats
    inner join games on seats.game_id = games.game_id
    where player_in_scope(seats.player)
    group by seats.player
)

select * from final
order by player

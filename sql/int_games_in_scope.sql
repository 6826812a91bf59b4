-- materialized: table
-- Intermediate: the games the filters select (int_league_games, narrowed to the games a
-- --player sat in), with their canonical ruleset and a small integer ruleset_id (cheaper to
-- group and join on than the ruleset's JSON text), and a game_no (an integer stand-in for
-- game_id where millions of rows are sorted or joined), and whether it has two seats
-- (two_player: the games judged by winning chance, int_two_player_games).
--   f_players   the --player names (null = every player): games one of them sat in
with games as (
    select * from int_league_games
),

game_players as (
    select * from stg_game_players
),

seats as (
    select game_id, count(*) as seats from game_players group by game_id
),

filtered as (
    select
        games.game_id,
        games.ruleset,
        games.ruleset_name,
        games.complete,
        games.finished,
        coalesce(seats.seats = 2, false) as two_player
    from games
    left join seats on games.game_id = seats.game_id
    where getvariable('f_players') is null
       or games.game_id in (
           select game_players.game_id
           from game_players
           where player_in_scope(game_players.player)
       )
),

final as (
    select
        game_id,
        ruleset,
        dense_rank() over (order by ruleset) as ruleset_id,
        row_number() over (order by game_id) as game_no,
        ruleset_name,
        complete,
        finished,
        two_player
    from filtered
)

select * from final

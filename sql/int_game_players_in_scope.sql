-- Intermediate: (game, player) seats of games in scope, with the game's completeness
-- (complete: it has a game_end; finished: one that is not abandoned, int_finished_games).
with game_players as (
    select * from stg_game_players
),

games as (
    select game_id, complete, finished from int_games_in_scope
),

final as (
    select
        game_players.game_id,
        game_players.player,
        games.complete,
        games.finished,
        game_players.claimed_total,
        game_players.corrected_total,
        game_players.won_claimed,
        game_players.won_corrected
    from game_players
    inner join games on game_players.game_id = games.game_id
    where player_in_scope(game_players.player)
)

select * from final

-- Intermediate: rolls of games in scope (and of the --player, if given), with the game's
-- ruleset_id (see int_games_in_scope).
with rolls as (
    select * from stg_rolls
),

games as (
    select game_id, ruleset_id from int_games_in_scope
),

final as (
    select
        rolls.game_id,
        rolls.player,
        games.ruleset_id,
        rolls.dice_count,
        rolls.farkled,
        rolls.dice
    from rolls
    inner join games on rolls.game_id = games.game_id
    where player_in_scope(rolls.player)
)

select * from final

-- Fact: each player's winning chance lost in each two-player game in scope, summed over
-- their judged choices (fct_race_game_players), in percentage points: the report's
-- distribution of loss per game.
with counted as (
    select game_no, player, choices, judged, loss_pp from fct_race_game_players
),

games as (
    select game_id, game_no from int_games_in_scope
),

final as (
    select
        games.game_id,
        counted.player,
        counted.choices,
        counted.judged,
        counted.loss_pp
    from counted
    inner join games on counted.game_no = games.game_no
    where counted.judged > 0
)

select * from final

-- materialized: table
-- Fact: each player's winning chance lost in each two-player game in scope, summed over
-- their judged choices (fct_race_choices), in percentage points: the report's distribution
-- of loss per game.
with choices as (
    select game_no, player, race_judged, loss_pp from fct_race_choices
),

games as (
    select game_id, game_no from int_games_in_scope
),

counted as (
    select
        game_no,
        player,
        count(*) as choices,
        count(*) filter (where race_judged) as judged,
        coalesce(sum(loss_pp) filter (where race_judged), 0.0) as loss_pp
    from choices
    group by game_no, player
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

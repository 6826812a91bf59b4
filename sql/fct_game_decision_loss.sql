-- materialized: table
-- Fact: each player's choices in each game in scope judged against the exact single-turn
-- policy (int_choice_values), summed per (game, player): what the trends show as decision
-- loss. A figure judged another way (the chance of winning a two-player game, say) adds its
-- own sums here, per (game, player), and rpt_trends its mean beside mean_decision_loss.
--   choices      keeps and bank-or-roll choices; judged: those whose state was valid
--   loss_points  expected points of the turn given up against the best choice, summed
with choices as (
    select game_no, player, judged, loss from int_choice_values
),

games as (
    select game_id, game_no from int_games_in_scope
),

counted as (
    select
        game_no,
        player,
        count(*) as choices,
        count(*) filter (where judged) as judged,
        coalesce(sum(loss) filter (where judged), 0.0) as loss_points
    from choices
    group by game_no, player
),

final as (
    select
        games.game_id,
        counted.player,
        counted.choices,
        counted.judged,
        counted.loss_points
    from counted
    inner join games on counted.game_no = games.game_no
)

select * from final

-- Report: how well each player chose in two-player games, judged by the winning chance each
-- choice cost (yardstick: the chance of winning the game, pipeline.strategy.race; games of
-- three or more players are not here, they keep the single-turn yardstick of
-- rpt_decision_quality). Losses in percentage points (pp) of winning chance:
--   loss_pp              summed over the judged choices
--   loss_per_choice      loss_pp / judged
--   games                games played by the player (overall: by each player) with a judged choice
--   loss_per_game        loss_pp / games
--   accuracy             the mean over judged choices of the macro race_accuracy of the loss
--                        (summed per game and player in fct_race_game_players)
--   mistakes, blunders   judged choices losing more than f_race_mistake_pp (up to
--                        f_race_blunder_pp) and more than f_race_blunder_pp
with games as (
    select * from fct_race_game_players
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        sum(choices)::bigint as choices,
        sum(judged)::bigint as judged,
        sum(choices - judged)::bigint as not_judged,
        count(*) filter (where judged > 0)::bigint as games,
        coalesce(sum(loss_pp), 0.0) as loss_pp,
        sum(accuracy_sum) / nullif(sum(judged), 0) as accuracy,
        sum(optimal)::bigint as optimal,
        sum(mistakes)::bigint as mistakes,
        sum(blunders)::bigint as blunders
    from games
    group by grouping sets ((), (player))
    having sum(choices) > 0
),

final as (
    select
        'winning chance (two players)' as yardstick,
        scope,
        player,
        games,
        choices,
        judged,
        not_judged,
        loss_pp,
        rate(loss_pp, judged) as loss_per_choice,
        rate(loss_pp, games) as loss_per_game,
        accuracy,
        optimal,
        rate(optimal, judged) as optimal_share,
        mistakes,
        blunders,
        getvariable('f_race_mistake_pp')::double as mistake_pp,
        getvariable('f_race_blunder_pp')::double as blunder_pp
    from grouped
)

select * from final
order by scope = 'player', loss_per_choice nulls last, player

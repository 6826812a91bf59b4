-- Report: how well each player chose in two-player games, judged by the winning chance each
-- choice cost (yardstick: the chance of winning the game, pipeline.strategy.race; games of
-- three or more players are not here, they keep the single-turn yardstick of
-- rpt_decision_quality). Losses in percentage points (pp) of winning chance:
--   loss_pp              summed over the judged choices
--   loss_per_choice      loss_pp / judged
--   games                games played by the player (overall: by each player) with a judged choice
--   loss_per_game        loss_pp / games
--   accuracy             the mean over judged choices of the macro race_accuracy of the loss
--   mistakes, blunders   judged choices losing more than f_race_mistake_pp (up to
--                        f_race_blunder_pp) and more than f_race_blunder_pp
with choices as (
    select * from fct_race_choices
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        count(*)::bigint as choices,
        count(*) filter (where race_judged)::bigint as judged,
        count(*) filter (where not race_judged)::bigint as not_judged,
        count(distinct game_no::varchar || '|' || player) filter (where race_judged)::bigint as games,
        coalesce(sum(loss_pp) filter (where race_judged), 0.0) as loss_pp,
        avg(race_accuracy(loss_pp)) filter (where race_judged) as accuracy,
        count(*) filter (where race_judged and loss_pp < 1e-9)::bigint as optimal,
        count(*) filter (
            where race_judged and loss_pp > getvariable('f_race_mistake_pp')
            and loss_pp <= getvariable('f_race_blunder_pp')
        )::bigint as mistakes,
        count(*) filter (where race_judged and loss_pp > getvariable('f_race_blunder_pp'))::bigint as blunders
    from choices
    group by grouping sets ((), (player))
    having count(*) > 0
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

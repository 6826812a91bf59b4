-- Report: how well each player chose, judged against the exact single-turn policy
-- (pipeline.strategy: farkle penalties and the race to the target are outside the model).
-- Choices are keeps and bank-or-rolls (int_choice_values, counted in fct_decision_quality).
-- loss_points is the sum of the losses (expected points given up this turn), so mean_loss =
-- loss_points / judged; optimal = judged choices losing less than 1e-6 points; blunders =
-- judged choices losing more than the threshold (DuckDB variable f_blunder_threshold, 150 by
-- default). not_judged: choices whose state was not valid (findings in the turn, a ruleset
-- not solved).
with counts as (
    select * from fct_decision_quality
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        sum(choices)::bigint as choices,
        sum(judged)::bigint as judged,
        (sum(choices) - sum(judged))::bigint as not_judged,
        sum(loss_points) as loss_points,
        sum(optimal)::bigint as optimal,
        sum(blunders)::bigint as blunders,
        coalesce(sum(judged) filter (where kind = 'keep'), 0)::bigint as keeps_judged,
        coalesce(sum(loss_points) filter (where kind = 'keep'), 0.0) as keep_loss_points,
        coalesce(sum(judged) filter (where kind = 'action'), 0)::bigint as actions_judged,
        coalesce(sum(loss_points) filter (where kind = 'action'), 0.0) as action_loss_points
    from counts
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no choices (as the other reports)
),

final as (
    select
        scope,
        player,
        choices,
        judged,
        not_judged,
        loss_points,
        rate(loss_points, judged) as mean_loss,
        optimal,
        rate(optimal, judged) as optimal_share,
        blunders,
        rate(blunders, judged) as blunder_rate,
        keeps_judged,
        keep_loss_points,
        rate(keep_loss_points, keeps_judged) as mean_keep_loss,
        actions_judged,
        action_loss_points,
        rate(action_loss_points, actions_judged) as mean_action_loss,
        getvariable('f_blunder_threshold')::double as blunder_threshold
    from grouped
)

select * from final
order by scope = 'player', mean_loss nulls last, player

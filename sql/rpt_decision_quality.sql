-- Report: how well each player chose, judged against the exact single-turn policy
-- (pipeline.strategy: farkle penalties and the race to the target are outside the model).
-- Choices are keeps and bank-or-rolls (int_decision_values). loss_points is the sum of the
-- losses (expected points given up this turn), so mean_loss = loss_points / judged;
-- optimal = judged choices losing less than 1e-6 points; blunders = judged choices losing more
-- than the threshold (DuckDB variable f_blunder_threshold, 150 by default). not_judged:
-- choices whose state was not valid (findings in the turn, a ruleset not solved).
with choices as (
    select * from int_decision_values
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        count(*)::bigint as choices,
        count(*) filter (where judged)::bigint as judged,
        count(*) filter (where not judged)::bigint as not_judged,
        coalesce(sum(loss) filter (where judged), 0.0) as loss_points,
        count(*) filter (where judged and loss < 1e-6)::bigint as optimal,
        count(*) filter (where judged and loss > getvariable('f_blunder_threshold'))::bigint as blunders,
        count(*) filter (where judged and kind = 'keep')::bigint as keeps_judged,
        coalesce(sum(loss) filter (where judged and kind = 'keep'), 0.0) as keep_loss_points,
        count(*) filter (where judged and kind = 'action')::bigint as actions_judged,
        coalesce(sum(loss) filter (where judged and kind = 'action'), 0.0) as action_loss_points
    from choices
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

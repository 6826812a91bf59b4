-- Report: loss against the exact single-turn policy (farkle penalties and the race to the
-- target are outside it) by kind of choice, dice and turn-points bucket. keep: dice rolled and
-- turn points before the roll; action (bank-or-roll): dice left to roll and turn points with
-- the keep. Judged choices only; loss_points / judged = mean_loss.
with counts as (
    select * from fct_decision_quality where judged > 0
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        kind,
        dice,
        points_lo,
        sum(judged)::bigint as judged,
        sum(loss_points) as loss_points,
        sum(optimal)::bigint as optimal
    from counts
    group by grouping sets ((kind, dice, points_lo), (player, kind, dice, points_lo))
),

final as (
    select
        scope,
        player,
        kind,
        dice,
        points_bucket_label(points_lo) as bucket,
        points_lo,
        judged,
        loss_points,
        rate(loss_points, judged) as mean_loss,
        optimal,
        rate(optimal, judged) as optimal_share
    from grouped
)

select * from final
order by scope = 'player', player, kind, dice, points_lo

-- Report: after a keep, how often the player banked vs rolled on, by the turn's claimed
-- points so far (this keep included), in buckets [points_lo, points_hi) of 250, the last open.
with counts as (
    select * from fct_decision_counts
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        points_lo,
        sum(decisions)::bigint as decisions,
        sum(banks)::bigint as banks,
        sum(rolls)::bigint as rolls,
        sum(rolled_farkles)::bigint as rolled_farkles
    from counts
    group by grouping sets ((points_lo), (player, points_lo))
),

final as (
    select
        scope,
        player,
        points_bucket_label(points_lo) as bucket,
        points_lo,
        case when points_lo < 3000 then points_lo + 250 end as points_hi,
        decisions,
        banks,
        rolls,
        rate(banks, decisions) as bank_rate,
        rolled_farkles,
        rate(rolled_farkles, rolls) as farkle_rate_after_roll
    from grouped
)

select * from final
order by scope = 'player', player, points_lo

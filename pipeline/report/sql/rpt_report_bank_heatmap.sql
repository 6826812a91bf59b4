-- Report (report page): bank-or-roll choices after a keep by (dice left, turn points so far),
-- points in buckets [points_lo, points_hi) of 250, the last one open. Counts with their
-- opportunities: bank_rate = banks / decisions.
with counts as (
    select * from fct_decision_counts
),

grouped as (
    select
        dice_left,
        points_lo,
        sum(decisions)::bigint as decisions,
        sum(banks)::bigint as banks,
        sum(rolls)::bigint as rolls,
        sum(rolled_farkles)::bigint as rolled_farkles
    from counts
    where dice_left is not null and points_lo is not null
    group by all
),

final as (
    select
        dice_left,
        points_lo,
        case when points_lo < 3000 then points_lo + 250 end as points_hi,
        points_bucket_label(points_lo) as bucket,
        decisions,
        banks,
        rolls,
        rate(banks, decisions) as bank_rate,
        rolled_farkles,
        rate(rolled_farkles, rolls) as farkle_rate_after_roll
    from grouped
)

select * from final
order by dice_left, points_lo

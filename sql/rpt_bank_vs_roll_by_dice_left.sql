-- Report: after a keep, how often the player banked vs rolled on, by the dice that were left
-- to roll (6 after hot dice). rolled_farkles: rolls on that scored nothing.
with counts as (
    select * from fct_decision_counts
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        dice_left,
        sum(decisions)::bigint as decisions,
        sum(banks)::bigint as banks,
        sum(rolls)::bigint as rolls,
        sum(rolled_farkles)::bigint as rolled_farkles
    from counts
    group by grouping sets ((dice_left), (player, dice_left))
),

final as (
    select
        scope,
        player,
        dice_left,
        decisions,
        banks,
        rolls,
        rate(banks, decisions) as bank_rate,
        rolled_farkles,
        rate(rolled_farkles, rolls) as farkle_rate_after_roll
    from grouped
)

select * from final
order by scope = 'player', player, dice_left

-- Report: distribution of points per finished turn. Farkled turns form their own bucket
-- ('farkle', points 0); banked turns fall in [points_lo, points_hi) buckets of 250, the last
-- one open (points_hi null). share = turns / scope_turns.
with counts as (
    select * from fct_turn_points
),

bucketed as (
    select
        player,
        farkled,
        case when farkled then null else points_bucket_lo(points) end as points_lo,
        turns
    from counts
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        farkled,
        points_lo,
        sum(turns)::bigint as turns
    from bucketed
    group by grouping sets ((farkled, points_lo), (player, farkled, points_lo))
),

final as (
    select
        scope,
        player,
        case when farkled then 'farkle' else points_bucket_label(points_lo) end as bucket,
        points_lo,
        case when points_lo < 3000 then points_lo + 250 end as points_hi,
        turns,
        sum(turns) over (partition by scope, player)::bigint as scope_turns,
        rate(turns, sum(turns) over (partition by scope, player)) as share
    from grouped
)

select * from final
order by scope = 'player', player, points_lo nulls first

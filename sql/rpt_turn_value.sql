-- Report: points per finished turn, overall and per player. A farkled turn counts as 0
-- (an app that left them out inflated its average); mean_banked_only is the mean over banked
-- turns alone, for comparison with such figures. Points are corrected (audited) values.
-- median_points is exact: the middle value (the mean of the two middle ones for an even
-- count) of the turn-points histogram.
with counts as (
    select * from fct_turn_points
),

histogram as (
    select
        grouping(player) = 1 as is_overall,
        player,
        points,
        sum(turns)::bigint as turns,
        sum(turns) filter (where not farkled)::bigint as banked_turns,
        sum(turns) filter (where farkled)::bigint as farkled_turns
    from counts
    group by grouping sets ((points), (player, points))
),

cumulated as (
    select
        *,
        sum(turns) over (partition by is_overall, player order by points rows unbounded preceding) as running,
        sum(turns) over (partition by is_overall, player) as total
    from histogram
),

grouped as (
    select
        is_overall,
        player,
        sum(turns)::bigint as turns,
        coalesce(sum(banked_turns), 0)::bigint as banked_turns,
        coalesce(sum(farkled_turns), 0)::bigint as farkled_turns,
        sum(points * turns)::bigint as points,
        (
            min(points) filter (where running >= (total + 1) // 2)
            + min(points) filter (where running >= total // 2 + 1)
        ) / 2 as median_points
    from cumulated
    group by all
),

final as (
    select
        case when is_overall then 'overall' else 'player' end as scope,
        player,
        turns,
        banked_turns,
        farkled_turns,
        points,
        rate(points, turns) as mean_points,
        median_points,
        rate(points, banked_turns) as mean_banked_only
    from grouped
)

select * from final
order by scope = 'player', player

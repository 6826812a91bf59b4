-- materialized: table
-- partial sums: turns, hot_dice
-- Fact: finished turns counted per (player, farkled, corrected points, small claimed bank),
-- with their hot dice. Additive: every turn statistic (means, exact medians, buckets, the
-- player summary) is re-aggregated from these counts.
--   small_bank: a banked turn whose claimed points were under 300.
with turns as (
    select * from int_turns_in_scope
),

final as (
    select
        player,
        farkled,
        points,
        not farkled and claimed_points < 300 as small_bank,
        count(*) as turns,
        sum(hot_dice)::bigint as hot_dice
    from turns
    group by all
)

select * from final

-- materialized: table
-- Intermediate: each distinct state a judged keep was made in, (ruleset, roll, turn points,
-- opened), judged once, whatever the number of keeps made in it: for every legal keep K of
-- the roll, the value of the state it leads to, V(points + value(K), dice left after K, 6
-- after hot dice), V = max(bank, roll): below the cap from int_policy_values, at or above it
-- the closed form (bank = points there, as the cap is above every floor). value_best and
-- best: the best keep of the state; on equal value fewer dice, then the lower faces
-- (Policy.keep_values' order). A few tens of thousands of rows for millions of keeps.
with states as (
    select distinct ruleset_id, roll_key, points, opened
    from int_roll_keeps
    where judged
),

after_keep as (
    select
        s.ruleset_id,
        s.roll_key,
        s.points,
        s.opened,
        o.kept_key,
        o.kept_dice,
        o.kept_n,
        coalesce(
            v.value,
            greatest((s.points + o.keep_value)::double,
                     (1.0 - t.farkle_prob) * (s.points + o.keep_value) + t.a_inf)
        ) as value
    from states as s
    inner join int_keep_options as o on s.ruleset_id = o.ruleset_id and s.roll_key = o.roll_key
    inner join int_policy_tail as t on s.ruleset_id = t.ruleset_id and o.dice_after = t.dice_left
    left join int_policy_values as v
        on s.ruleset_id = v.ruleset_id
        and s.points + o.keep_value = v.points
        and o.dice_after = v.dice_left
        and s.opened = v.opened
),

best_keep as (
    select
        ruleset_id,
        roll_key,
        points,
        opened,
        max(value) as value_best,
        arg_min(kept_dice, [-value, kept_n::double]) as best
    from after_keep
    group by ruleset_id, roll_key, points, opened
),

final as (
    select
        after_keep.ruleset_id,
        after_keep.roll_key,
        after_keep.points,
        after_keep.opened,
        after_keep.kept_key,
        after_keep.value as value_made,
        best_keep.value_best,
        best_keep.best
    from after_keep
    inner join best_keep
        on after_keep.ruleset_id = best_keep.ruleset_id
        and after_keep.roll_key = best_keep.roll_key
        and after_keep.points = best_keep.points
        and after_keep.opened = best_keep.opened
)

select * from final

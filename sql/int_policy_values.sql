-- Intermediate: the solved single-turn policy's states below the cap (the Arrow table
-- policy_values that pipeline.strategy.judge builds per ruleset) for the rulesets in scope,
-- keyed by ruleset_id: V(points, dice_left, opened) with its bank and roll values.
with rulesets as (
    select distinct ruleset, ruleset_id from int_games_in_scope
),

final as (
    select
        rulesets.ruleset_id,
        v.points,
        v.dice_left,
        v.opened,
        v.bank_value,
        v.roll_value,
        v.value
    from policy_values as v
    inner join rulesets on v.ruleset = rulesets.ruleset
)

select * from final

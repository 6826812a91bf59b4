-- Intermediate: the policy at or above the solver's cap (policy_tail), per ruleset in scope and
-- dice left: bank = points there, roll = (1 - farkle_prob) * points + a_inf (the closed form
-- Policy.roll_value uses), and the ruleset's grid (granularity) that valid turn points lie on.
with rulesets as (
    select distinct ruleset, ruleset_id from int_games_in_scope
),

final as (
    select
        rulesets.ruleset_id,
        t.dice_left,
        t.cap,
        t.granularity,
        t.farkle_prob,
        t.a_inf
    from policy_tail as t
    inner join rulesets on t.ruleset = rulesets.ruleset
)

select * from final

-- Intermediate: every legal keep of each roll of 1-6 dice (keep_options), per ruleset in scope:
-- the roll's and the keep's dice keys (macros.sql dice_key), the kept dice as text ("1 5"),
-- the keep's value and the dice left to roll after it (6 after hot dice).
with rulesets as (
    select distinct ruleset, ruleset_id from int_games_in_scope
),

final as (
    select
        rulesets.ruleset_id,
        o.roll_key,
        o.kept_key,
        o.kept_dice,
        o.kept_n,
        o.keep_value,
        o.dice_after
    from keep_options as o
    inner join rulesets on o.ruleset = rulesets.ruleset
)

select * from final

-- materialized: table
-- partial sums: rolls, farkles, expected_farkles, expected_var
-- Fact: rolls and farkles per (player, ruleset, dice), with the exact expectation from the
-- rules engine (exact_odds, registered by pipeline.stats). Additive: re-aggregate by summing.
-- expected_farkles = rolls * p and expected_var = rolls * p * (1 - p); farkle_prob and both
-- expectations are null when the ruleset's odds are unknown (an unreadable ruleset).
with rolls as (
    select * from int_rolls_in_scope
),

rulesets as (
    select distinct ruleset_id, ruleset from int_games_in_scope
),

odds as (
    select * from exact_odds
),

counted as (
    select
        player,
        ruleset_id,
        dice_count as dice,
        count(*) as rolls,
        count(*) filter (where farkled) as farkles
    from rolls
    group by all
),

final as (
    select
        counted.player,
        rulesets.ruleset,
        counted.dice,
        counted.rolls,
        counted.farkles,
        odds.farkle_prob,
        counted.rolls * odds.farkle_prob as expected_farkles,
        counted.rolls * odds.farkle_prob * (1 - odds.farkle_prob) as expected_var
    from counted
    inner join rulesets on counted.ruleset_id = rulesets.ruleset_id
    left join odds
        on rulesets.ruleset = odds.ruleset
       and counted.dice = odds.dice
)

select * from final

-- Report: bust (farkle) rate by dice left (the dice thrown in the roll), overall and per player.
-- rolls/farkles are the rate's numerator and opportunities. exact_rate is the rules engine's
-- exact farkle probability for each roll's game ruleset, averaged over the rolls (so it is the
-- exact expectation even when games of several rulesets are mixed); null if a ruleset could
-- not be read. z: (farkles - expected) over the exact standard deviation, the direction and
-- size of the gap. p_value: the exact two-sided test of the farkle count against the odds
-- (binomial, or a sum of binomials over several rulesets), p_adjusted: Holm's correction over
-- the rows of its scope, off: p_adjusted below 0.05; the three come from the Python model
-- bust_rate_tests (pipeline/stats/significance.py; docs/stats.md says why these tests).
with counts as (
    select * from fct_roll_counts
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        dice,
        sum(rolls)::bigint as rolls,
        sum(farkles)::bigint as farkles,
        case when count(farkle_prob) = count(*) then sum(expected_farkles) end as expected_farkles,
        case when count(farkle_prob) = count(*) then sum(expected_var) end as expected_var
    from counts
    group by grouping sets ((dice), (player, dice))
),

rated as (
    select
        scope,
        player,
        dice,
        rolls,
        farkles,
        rate(farkles, rolls) as bust_rate,
        wilson_lo(farkles, rolls) as wilson_lo,
        wilson_hi(farkles, rolls) as wilson_hi,
        expected_farkles,
        rate(expected_farkles, rolls) as exact_rate,
        (farkles - expected_farkles) / sqrt(nullif(expected_var, 0)) as z
    from grouped
),

tests as (
    select * from bust_rate_tests
),

final as (
    select
        rated.*,
        tests.p_value,
        tests.p_adjusted,
        tests.p_adjusted < 0.05 as off,
        tests.test
    from rated
    left join tests
        on rated.scope = tests.scope
       and rated.player is not distinct from tests.player
       and rated.dice = tests.dice
)

select * from final
order by scope = 'player', player, dice

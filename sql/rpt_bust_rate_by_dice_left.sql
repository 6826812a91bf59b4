-- Report: bust (farkle) rate by dice left (the dice thrown in the roll), overall and per player.
-- rolls/farkles are the rate's numerator and opportunities. exact_rate is the rules engine's
-- exact farkle probability for each roll's game ruleset, averaged over the rolls (so it is the
-- exact expectation even when games of several rulesets are mixed); null if a ruleset could
-- not be read. off: the exact rate lies outside the observed rate's Wilson 95 % interval.
-- z and p_value: normal approximation of (farkles - expected) with the exact variance.
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

final as (
    select
        *,
        normal_two_sided_p(z) as p_value,
        exact_rate < wilson_lo or exact_rate > wilson_hi as off
    from rated
)

select * from final
order by scope = 'player', player, dice

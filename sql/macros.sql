-- Macros shared by the models (run first by pipeline.stats; not a model itself).
-- Wilson score interval at 95 % for k successes in n trials; exactly 0 at k = 0 and 1 at
-- k = n (the formula's value there, without its rounding error).
create or replace temp macro wilson_lo(k, n) as case when k = 0 then 0.0 else greatest(0.0,
    ((k / n) + 1.959963984540054 ^ 2 / (2 * n)
     - 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n + 1.959963984540054 ^ 2 / (4 * n * n)))
    / (1 + 1.959963984540054 ^ 2 / n)
) end;
create or replace temp macro wilson_hi(k, n) as case when k = n then 1.0 else least(1.0,
    ((k / n) + 1.959963984540054 ^ 2 / (2 * n)
     + 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n + 1.959963984540054 ^ 2 / (4 * n * n)))
    / (1 + 1.959963984540054 ^ 2 / n)
) end;
-- Points buckets of width 250, the last one open: 0-250, 250-500, ..., 2750-3000, 3000+.
create or replace temp macro points_bucket_lo(points) as least((points // 250) * 250, 3000);
create or replace temp macro points_bucket_label(lo) as
    case when lo >= 3000 then '3000+' else lo::varchar || '-' || (lo + 250)::varchar end;
-- A rate from its numerator and opportunities; null when there were no opportunities.
create or replace temp macro rate(num, den) as num / nullif(den, 0);
-- erfc(x), the complementary error function, which DuckDB lacks: the Chebyshev fit of
-- Numerical Recipes (erfcc), fractional error below 1.2e-7 everywhere, so it stays exact
-- enough for tiny p-values too.
create or replace temp macro erfc_nonneg(t, x) as (
    t * exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
        + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
        + t * (-0.82215223 + t * 0.17087277)))))))))
);
create or replace temp macro erfc(x) as
    case when x >= 0 then erfc_nonneg(1 / (1 + 0.5 * x), x)
         else 2 - erfc_nonneg(1 / (1 - 0.5 * x), -x) end;
-- Two-sided p-value of a standard normal score z: P(|Z| >= |z|).
create or replace temp macro normal_two_sided_p(z) as least(1.0, erfc(abs(z) / sqrt(2)));  -- the fit is 1 + 3e-8 at 0
-- P(X >= x) for X chi-square with 5 degrees of freedom, closed form for odd degrees:
-- erfc(sqrt(x/2)) + sqrt(2/pi) * exp(-x/2) * (sqrt(x) + x^(3/2)/3); 1 for x <= 0.
create or replace temp macro chi2_sf_5df(x) as
    case when x <= 0 then 1.0
         else least(1.0, erfc(sqrt(x / 2)) + sqrt(2 / pi()) * exp(-x / 2) * (sqrt(x) + x ^ 1.5 / 3)) end;
-- Integer key of a multiset of dice (pipeline.rules.table.dice_key): one decimal digit per
-- face count, 1s first ([1, 1, 5] -> 200010). Joins the rolls to keep_options.
create or replace temp macro dice_key(dice) as
    list_sum(list_transform(dice, lambda d: [100000, 10000, 1000, 100, 10, 1][d]))::bigint;
-- The dice of a dice key as text, faces in order ("1 1 5" for 200010): what
-- array_to_string(list_sort(dice), ' ') gives for the list, for at most 9 of a face.
create or replace temp macro dice_text(key) as rtrim(
    repeat('1 ', ((key // 100000) % 10)::integer) || repeat('2 ', ((key // 10000) % 10)::integer)
    || repeat('3 ', ((key // 1000) % 10)::integer) || repeat('4 ', ((key // 100) % 10)::integer)
    || repeat('5 ', ((key // 10) % 10)::integer) || repeat('6 ', (key % 10)::integer));
-- Whether a row of player p is in scope: --player (repeatable) is the list f_players, null
-- when no player was named.
create or replace temp macro player_in_scope(p) as
    (getvariable('f_players') is null or list_contains(getvariable('f_players')::varchar[], p));
-- The accuracy of one choice, in percent, from the winning chance it lost in percentage
-- points: lichess's curve with the loss scaled by ten (pipeline.solved.judge.accuracy,
-- held equal by a test; docs/stats.md says why).
create or replace temp macro race_accuracy(loss_pp) as
    greatest(0.0, least(100.0, 103.1668 * exp(-0.4354 * loss_pp) - 3.1669));

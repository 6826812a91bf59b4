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
-- Whether a keep can be judged against the single-turn policy (int_roll_keeps, and a
-- bank-or-roll's link to its keep in int_choice_values): it is a legal scoring keep of its roll
-- (found among keep_options), the opened state is known, and the turn points before the roll
-- are on the ruleset's grid.
create or replace temp macro keep_judgeable(found, opened, points, granularity) as
    coalesce(found and opened is not null and points >= 0 and points % granularity = 0, false);
-- Whether a row of player p is in scope: --player (repeatable) is the list f_players, null
-- when no player was named.
create or replace temp macro player_in_scope(p) as
    (getvariable('f_players') is null or list_contains(getvariable('f_players')::varchar[], p));
-- The accuracy of one choice, in percent, from the winning chance it lost in percentage
-- points: lichess's curve with the loss scaled by ten (pipeline.solved.judge.accuracy,
-- held equal by a test; docs/stats.md says why).
create or replace temp macro race_accuracy(loss_pp) as
    greatest(0.0, least(100.0, 103.1668 * exp(-0.4354 * loss_pp) - 3.1669));

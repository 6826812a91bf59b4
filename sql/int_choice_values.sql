-- Intermediate: every choice of the games in scope judged against the exact single-turn
-- policy (pipeline.strategy; a single-turn model: farkle penalties and the race to the
-- target are outside it), one row per choice, narrow (int_decision_values adds the game id
-- and the dice as text). Values come from small per-ruleset tables: the distinct keep states
-- are judged once (keep_values below) and each keep or bank-or-roll only joins to them.
--   kind 'keep'    a keep taken from a roll: points = turn points before the roll, dice = dice
--                  rolled; roll_key / kept_key the roll and the keep (dice keys)
--   kind 'action'  the bank-or-roll after a keep: points = turn points with the keep
--                  (corrected), dice = dice left to roll, choice = 'bank' / 'roll'
-- best: the best keep ("1 5") or 'bank' / 'roll'; loss = value_best - value_made (>= 0).
-- judged is false (values null) when the state is not valid: the keep is not a legal scoring
-- keep of its roll, points are off the grid, the bank-or-roll does not follow a judged keep
-- (the last roll of its turn before it) with the points and dice it implies, or the ruleset
-- could not be solved.
with games as (
    select game_id, game_no, ruleset_id from int_games_in_scope
),

-- named once (DuckDB materializes it), read twice: the keep states and the keeps
roll_keeps as (
    select * from int_roll_keeps
),

-- each distinct state a judged keep was made in, (ruleset, roll, turn points, opened), judged
-- once, whatever the number of keeps made in it: for every legal keep K of the roll, the value
-- of the state it leads to, V(points + value(K), dice left after K, 6 after hot dice),
-- V = max(bank, roll): below the cap from int_policy_values, at or above it the closed form
-- (bank = points there, as the cap is above every floor). value_best and best: the best keep
-- of the state; on equal value fewer dice, then the lower faces (Policy.keep_values' order).
-- A few tens of thousands of rows for millions of keeps. Here, not in a model of its own,
-- so that the rolls are read once: from roll_keeps, which DuckDB materializes.
keep_states as (
    select distinct ruleset_id, roll_key, points, opened
    from roll_keeps
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
    from keep_states as s
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

keep_values as (
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
),

keep_rows as (
    select
        'keep' as kind,
        rolls.game_no,
        rolls.seq,
        rolls.player,
        rolls.turn,
        rolls.ruleset_id,
        rolls.points,
        rolls.dice_count as dice,
        rolls.opened,
        rolls.roll_key,
        rolls.kept_key,
        null::varchar as choice,
        case when rolls.judged then v.best end as best,
        case when rolls.judged then v.value_made end as value_made,
        case when rolls.judged then v.value_best end as value_best,
        rolls.judged,
        rolls.start_total,
        rolls.other_start_total
    from roll_keeps as rolls
    left join keep_values as v
        on rolls.ruleset_id = v.ruleset_id
        and rolls.roll_key = v.roll_key
        and rolls.points = v.points
        and rolls.opened = v.opened
        and rolls.kept_key = v.kept_key
    where rolls.kept_key is not null
),

grid as (
    select distinct ruleset_id, granularity from int_policy_tail
),

-- each bank-or-roll with the keep it follows: the roll that keep came from, as the replay
-- stored it on the choice (from_roll_key, from_kept_key, from_points_before: the last roll of
-- the turn before it; int_choice_links derives the same from the rows), judged as
-- int_roll_keeps judges that roll's keep (a roll that scored nothing has no keep_options)
linked as (
    select
        games.game_no,
        decisions.seq,
        decisions.player,
        decisions.turn,
        games.ruleset_id,
        decisions.turn_points_corrected as points,
        decisions.dice_left,
        decisions.opened,
        decisions.choice,
        decisions.start_total,
        decisions.other_start_total,
        keep_judgeable(
            options.kept_key is not null, decisions.opened, decisions.from_points_before, grid.granularity
        ) as keep_judged,
        decisions.from_points_before + options.keep_value as points_after,
        options.dice_after
    from stg_decision_states as decisions
    inner join games on decisions.game_id = games.game_id
    left join grid on games.ruleset_id = grid.ruleset_id
    left join int_keep_options as options
        on games.ruleset_id = options.ruleset_id
        and decisions.from_roll_key = options.roll_key
        and decisions.from_kept_key = options.kept_key
    where player_in_scope(decisions.player)
),

actions as (
    select
        linked.*,
        coalesce(
            linked.keep_judged
            and linked.points_after = linked.points
            and linked.dice_after = linked.dice_left
            and linked.choice in ('bank', 'roll')
            and linked.opened is not null,
            false
        ) as judged,
        case when linked.points < tail.cap then v.bank_value
             else linked.points::double end as bank_value,
        case when linked.points < tail.cap then v.roll_value
             else (1.0 - tail.farkle_prob) * linked.points + tail.a_inf end as roll_value
    from linked
    left join int_policy_tail as tail on linked.ruleset_id = tail.ruleset_id and linked.dice_left = tail.dice_left
    left join int_policy_values as v
        on linked.ruleset_id = v.ruleset_id
        and linked.points = v.points
        and linked.dice_left = v.dice_left
        and linked.opened = v.opened
),

action_rows as (
    select
        'action' as kind,
        game_no,
        seq,
        player,
        turn,
        ruleset_id,
        points,
        dice_left as dice,
        opened,
        null::bigint as roll_key,
        null::bigint as kept_key,
        choice,
        case when judged then (case when roll_value > bank_value + 1e-7 then 'roll' else 'bank' end) end as best,
        case when judged then (case when choice = 'bank' then bank_value else roll_value end) end as value_made,
        case when judged then greatest(bank_value, roll_value) end as value_best,
        judged,
        start_total,
        other_start_total
    from actions
),

unioned as (
    select * from keep_rows
    union all
    select * from action_rows
),

final as (
    select
        *,
        value_best - value_made as loss,
        points_bucket_lo(points) as points_lo
    from unioned
)

select * from final

-- materialized: table
-- Intermediate: every choice of the games in scope judged against the exact single-turn
-- policy (pipeline.strategy; a single-turn model: farkle penalties and the race to the
-- target are outside it). One row per choice:
--   kind 'keep'    a keep taken from a roll: points = turn points before the roll, dice = dice
--                  rolled; made/best = kept dice ("1 5"); a keep K is worth
--                  V(points + value(K), dice left after K, 6 after hot dice), V = max(bank, roll)
--   kind 'action'  the bank-or-roll after a keep: points = turn points with the keep (corrected),
--                  dice = dice left to roll; made/best = 'bank' / 'roll'
-- loss = value_best - value_made (>= 0). Values come from the Arrow tables that
-- pipeline.strategy.judge builds per ruleset: policy_values (states below the cap),
-- policy_tail (at or above the cap: bank = points, roll = (1 - farkle_prob) * points + a_inf)
-- and keep_options (every legal keep of each roll). The same formulas as judge.py's (tested).
-- judged is false (values null) when the state is not valid: the keep is not a legal scoring
-- keep of its roll, points are off the grid, the bank-or-roll does not follow such a keep with
-- the points and dice it implies, or the ruleset could not be solved.
with games as (
    select game_id, ruleset, ruleset_id from int_games_in_scope
),

rulesets as (
    select distinct ruleset, ruleset_id from games
),

state_values as (
    select rulesets.ruleset_id, v.points, v.dice_left, v.opened, v.bank_value, v.roll_value, v.value
    from policy_values as v
    inner join rulesets on v.ruleset = rulesets.ruleset
),

tail as (
    select rulesets.ruleset_id, t.dice_left, t.cap, t.granularity, t.farkle_prob, t.a_inf
    from policy_tail as t
    inner join rulesets on t.ruleset = rulesets.ruleset
),

grid as (
    select distinct ruleset_id, cap, granularity from tail
),

options as (
    select rulesets.ruleset_id, o.roll_key, o.kept_key, o.kept_dice, o.kept_n, o.keep_value, o.dice_after
    from keep_options as o
    inner join rulesets on o.ruleset = rulesets.ruleset
),

-- the rolls and choices of the games in scope (and of the --player, if given)
rolls_in_scope as (
    select rolls.*, games.ruleset_id
    from stg_roll_states as rolls
    inner join games on rolls.game_id = games.game_id
    where getvariable('f_player') is null or rolls.player = getvariable('f_player')
),

rolls as (
    select
        rolls_in_scope.*,
        dice_key(rolls_in_scope.dice) as roll_key,
        dice_key(rolls_in_scope.kept) as kept_key
    from rolls_in_scope
    where rolls_in_scope.kept is not null
),

-- the keep made: legal (found among the roll's options) and on the grid, or not judged
keeps as (
    select
        rolls.game_id,
        rolls.seq,
        rolls.player,
        rolls.turn,
        rolls.ruleset_id,
        rolls.points_before as points,
        rolls.dice_count as dice,
        rolls.opened,
        rolls.roll_key,
        rolls.kept_key,
        array_to_string(list_sort(rolls.dice), ' ') as roll,
        array_to_string(list_sort(rolls.kept), ' ') as made,
        options.keep_value,
        options.dice_after,
        coalesce(
            options.kept_key is not null
            and not rolls.farkled
            and rolls.opened is not null
            and rolls.points_before >= 0
            and rolls.points_before % grid.granularity = 0,
            false
        ) as judged
    from rolls
    left join grid on rolls.ruleset_id = grid.ruleset_id
    left join options
        on rolls.ruleset_id = options.ruleset_id
        and rolls.roll_key = options.roll_key
        and rolls.kept_key = options.kept_key
),

-- V(points, dice, opened) for the states keeps lead to: below the cap from the table, at or
-- above it the closed form (bank = points there, as the cap is above every floor)
keep_states as (
    select distinct keeps.ruleset_id, keeps.roll_key, keeps.points, keeps.opened
    from keeps
    where keeps.judged
),

after_keep as (
    select
        s.ruleset_id,
        s.roll_key,
        s.points,
        s.opened,
        o.kept_dice,
        o.kept_n,
        o.kept_key,
        coalesce(
            v.value,
            greatest((s.points + o.keep_value)::double,
                     (1.0 - t.farkle_prob) * (s.points + o.keep_value) + t.a_inf)
        ) as value
    from keep_states as s
    inner join options as o on s.ruleset_id = o.ruleset_id and s.roll_key = o.roll_key
    inner join tail as t on s.ruleset_id = t.ruleset_id and o.dice_after = t.dice_left
    left join state_values as v
        on s.ruleset_id = v.ruleset_id
        and s.points + o.keep_value = v.points
        and o.dice_after = v.dice_left
        and s.opened = v.opened
),

-- best keep per state: highest value; on equal value fewer dice, then the lower faces
-- (Policy.keep_values' order)
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

keep_rows as (
    select
        'keep' as kind,
        keeps.game_id,
        keeps.seq,
        keeps.player,
        keeps.turn,
        keeps.ruleset_id,
        keeps.points,
        keeps.dice,
        keeps.opened,
        keeps.roll,
        keeps.made,
        case when keeps.judged then best_keep.best end as best,
        case when keeps.judged then made_value.value end as value_made,
        case when keeps.judged then best_keep.value_best end as value_best,
        keeps.judged,
        -- for the bank-or-roll that follows: the state this keep leads to
        case when keeps.judged then keeps.points + keeps.keep_value end as points_after,
        case when keeps.judged then keeps.dice_after end as dice_after
    from keeps
    left join best_keep
        on keeps.ruleset_id = best_keep.ruleset_id
        and keeps.roll_key = best_keep.roll_key
        and keeps.points = best_keep.points
        and keeps.opened = best_keep.opened
    left join after_keep as made_value
        on keeps.ruleset_id = made_value.ruleset_id
        and keeps.roll_key = made_value.roll_key
        and keeps.points = made_value.points
        and keeps.opened = made_value.opened
        and keeps.kept_key = made_value.kept_key
),

decisions as (
    select decisions.*, games.ruleset_id
    from stg_decision_states as decisions
    inner join games on decisions.game_id = games.game_id
    where getvariable('f_player') is null or decisions.player = getvariable('f_player')
),

all_rolls as (
    select game_id, seq, player, turn from rolls_in_scope
),

-- each bank-or-roll with the last roll of its turn before it (its keep's roll), and that
-- roll's keep if it was judged
last_roll as (
    select decisions.*, all_rolls.seq as roll_seq
    from decisions
    asof left join all_rolls
        on decisions.game_id = all_rolls.game_id
        and decisions.player = all_rolls.player
        and decisions.turn = all_rolls.turn
        and decisions.seq > all_rolls.seq
),

linked as (
    select
        last_roll.*,
        keep_rows.judged as keep_judged,
        keep_rows.points_after,
        keep_rows.dice_after
    from last_roll
    left join keep_rows on last_roll.game_id = keep_rows.game_id and last_roll.roll_seq = keep_rows.seq
),

actions as (
    select
        linked.*,
        (
            coalesce(
                linked.keep_judged
                and linked.points_after = linked.turn_points_corrected
                and linked.dice_after = linked.dice_left
                and linked.choice in ('bank', 'roll')
                and linked.opened is not null,
                false
            )
        ) as judged,
        case when linked.turn_points_corrected < tail.cap then v.bank_value
             else linked.turn_points_corrected::double end as bank_value,
        case when linked.turn_points_corrected < tail.cap then v.roll_value
             else (1.0 - tail.farkle_prob) * linked.turn_points_corrected + tail.a_inf end as roll_value
    from linked
    left join tail on linked.ruleset_id = tail.ruleset_id and linked.dice_left = tail.dice_left
    left join state_values as v
        on linked.ruleset_id = v.ruleset_id
        and linked.turn_points_corrected = v.points
        and linked.dice_left = v.dice_left
        and linked.opened = v.opened
),

action_rows as (
    select
        'action' as kind,
        game_id,
        seq,
        player,
        turn,
        ruleset_id,
        turn_points_corrected as points,
        dice_left as dice,
        opened,
        null::varchar as roll,
        choice as made,
        case when judged then (case when roll_value > bank_value + 1e-7 then 'roll' else 'bank' end) end as best,
        case when judged then (case when choice = 'bank' then bank_value else roll_value end) end as value_made,
        case when judged then greatest(bank_value, roll_value) end as value_best,
        judged
    from actions
),

unioned as (
    select kind, game_id, seq, player, turn, ruleset_id, points, dice, opened, roll, made, best,
           value_made, value_best, judged
    from keep_rows
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

-- Intermediate: every roll of the games in scope (and of the --player, if given) with the keep
-- taken from it, if any, and whether that keep can be judged against the single-turn policy:
-- it is a legal scoring keep of the roll (found among the roll's keep_options), the roll
-- scored, and the turn points before the roll are on the ruleset's grid. Rolls without a keep
-- stay in (judged false): a bank-or-roll is linked to the last roll before it (int_choice_values).
-- Dice are carried as dice keys (macros.sql: dice_key; dice_text gives them back as text), so
-- rows stay narrow:
--   roll_key, kept_key   the roll and the keep (kept_key null: no keep)
--   points_after, dice_after   the state a judged keep leads to (null when not judged)
with games as (
    select game_id, game_no, ruleset_id from int_games_in_scope
),

grid as (
    select distinct ruleset_id, granularity from int_policy_tail
),

options as (
    select ruleset_id, roll_key, kept_key, keep_value, dice_after from int_keep_options
),

rolls as (
    select
        games.game_no,
        rolls.seq,
        rolls.player,
        rolls.turn,
        games.ruleset_id,
        rolls.points_before as points,
        rolls.dice_count,
        rolls.opened,
        rolls.farkled,
        rolls.roll_key,
        rolls.kept_key,
        rolls.start_total,
        rolls.other_start_total
    from stg_roll_states as rolls
    inner join games on rolls.game_id = games.game_id
    where player_in_scope(rolls.player)
),

judged as (
    select
        rolls.*,
        options.keep_value,
        options.dice_after as option_dice_after,
        keep_judgeable(
            options.kept_key is not null and not rolls.farkled, rolls.opened, rolls.points, grid.granularity
        ) as judged
    from rolls
    left join grid on rolls.ruleset_id = grid.ruleset_id
    left join options
        on rolls.ruleset_id = options.ruleset_id
        and rolls.roll_key = options.roll_key
        and rolls.kept_key = options.kept_key
),

final as (
    select
        game_no,
        seq,
        player,
        turn,
        ruleset_id,
        points,
        dice_count,
        opened,
        roll_key,
        kept_key,
        judged,
        case when judged then points + keep_value end as points_after,
        case when judged then option_dice_after end as dice_after,
        start_total,
        other_start_total
    from judged
)

select * from final

-- Staging: one row per roll with the state it was rolled in and the keep taken from it, for
-- judging choices (int_decision_values). Apart from stg_rolls so that the other reports do not
-- need the columns added for it (points_before, opened).
with source as (
    select * from src_rolls
),

final as (
    select
        game_id::varchar as game_id,
        seq::bigint as seq,
        player::varchar as player,
        turn::integer as turn,
        dice_count::integer as dice_count,
        not scored as farkled,
        dice,
        kept,
        points_before::bigint as points_before,
        opened::boolean as opened,
        roll_key::bigint as roll_key,
        kept_key::bigint as kept_key,
        start_total::bigint as start_total,
        other_start_total::bigint as other_start_total
    from source
)

select * from final

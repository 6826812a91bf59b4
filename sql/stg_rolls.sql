-- Staging: one row per roll. `farkled` is the negation of ingest's `scored`.
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
        opened::boolean as opened
    from source
)

select * from final

-- Staging: one row per roll. `farkled` is the negation of ingest's `scored`.
with source as (
    select * from src_rolls
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        dice_count::integer as dice_count,
        not scored as farkled,
        dice
    from source
)

select * from final

-- Staging: one row per bank-or-roll choice made after a keep.
with source as (
    select * from src_decisions
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        dice_left::integer as dice_left,
        turn_points::bigint as turn_points,
        choice::varchar as choice,
        farkled::boolean as farkled
    from source
)

select * from final

-- Staging: one row per turn (bank, farkle, or open = cut off).
with source as (
    select * from src_turns
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        turn::integer as turn,
        outcome::varchar as outcome,
        rolls::integer as rolls,
        hot_dice::integer as hot_dice,
        claimed_points::bigint as claimed_points,
        corrected_points::bigint as corrected_points,
        start_seq::bigint as start_seq,
        end_seq::bigint as end_seq,
        corrected_total::bigint as corrected_total
    from source
)

select * from final

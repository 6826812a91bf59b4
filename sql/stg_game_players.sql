-- Staging: one row per (game, player) with claimed and corrected final totals.
with source as (
    select * from src_game_players
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        seat::integer as seat,
        claimed_total::bigint as claimed_total,
        corrected_total::bigint as corrected_total,
        coalesce(won_claimed, false) as won_claimed,
        coalesce(won_corrected, false) as won_corrected
    from source
)

select * from final

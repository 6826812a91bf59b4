-- Staging: one row per bank-or-roll choice with the corrected state it was made in, for
-- judging choices (int_decision_values). Apart from stg_decisions so that the other reports
-- do not need the column added for it (turn_points_corrected).
with source as (
    select * from src_decisions
),

final as (
    select
        game_id::varchar as game_id,
        seq::bigint as seq,
        player::varchar as player,
        turn::integer as turn,
        dice_left::integer as dice_left,
        turn_points_corrected::bigint as turn_points_corrected,
        opened::boolean as opened,
        choice::varchar as choice,
        start_total::bigint as start_total,
        other_start_total::bigint as other_start_total,
        from_roll_key::bigint as from_roll_key,
        from_kept_key::bigint as from_kept_key,
        from_points_before::bigint as from_points_before
    from source
)

select * from final

-- Staging: one row per game. Rename and cast only.
with source as (
    select * from src_games
),

final as (
    select
        game_id::varchar as game_id,
        ruleset::varchar as ruleset,
        ruleset_name::varchar as ruleset_name,
        complete::boolean as complete,
        ended::varchar as ended,
        first_ts::timestamptz as first_ts,
        last_ts::timestamptz as last_ts
    from source
)

select * from final

-- Staging: one row per audit finding.
with source as (
    select * from src_findings
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        code::varchar as code,
        severity::varchar as severity
    from source
)

select * from final

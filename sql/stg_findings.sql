-- Staging: one row per audit finding, as `farkle-logs audit` gives it.
with source as (
    select * from src_findings
),

final as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        code::varchar as code,
        severity::varchar as severity,
        seq::bigint as seq,
        file::varchar as file,
        line::bigint as line,
        message::varchar as message,
        claimed::double as claimed,
        expected::double as expected
    from source
)

select * from final

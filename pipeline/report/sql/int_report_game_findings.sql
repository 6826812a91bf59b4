-- Intermediate (report): every finding of the games detailed on the page
-- (getvariable('r_games'), a list of game ids), whatever the filters: a dispute view shows the
-- whole game. turn_start_seq: the turn the finding fell in (its seq between the turn's first
-- event and the next turn's), null for findings about the game as a whole. A turn whose end
-- was implied (end_implied: the ending line was lost) has end_seq = the roll that revealed
-- it, which is the next turn's first event: that seq belongs to the next turn.
with findings as (
    select
        game_id::varchar as game_id,
        seq::bigint as seq,
        file::varchar as file,
        line::bigint as line,
        player::varchar as player,
        code::varchar as code,
        severity::varchar as severity,
        message::varchar as message,
        claimed::double as claimed,
        expected::double as expected
    from src_findings
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

turn_spans as (
    select
        game_id::varchar as game_id,
        start_seq::bigint as start_seq,
        coalesce(
            case when end_implied then end_seq - 1 else end_seq end,
            lead(start_seq) over (partition by game_id order by start_seq) - 1
        )::bigint as last_seq
    from src_turns
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

final as (
    select
        findings.*,
        turn_spans.start_seq as turn_start_seq
    from findings
    left join turn_spans
        on findings.game_id = turn_spans.game_id
       and findings.seq >= turn_spans.start_seq
       and (turn_spans.last_seq is null or findings.seq <= turn_spans.last_seq)
)

select * from final

-- Report (report page): the turn-by-turn timeline of the games of getvariable('r_games'):
-- each turn's rolls (dice, what was kept, the points claimed for the keep and what the dice
-- were worth), its claimed and corrected points and running totals, and its findings
-- (finding_list, each with the player it names and its file and line; codes: their distinct
-- codes, comma-separated), the log lines of its events (first_line..last_line, in line_files
-- files: first_file..last_file; an implied end's revealing roll is the next turn's).
-- outcome_label says when the turn's ending line was lost and replay supplied the end the
-- log implies (end_implied).
with turns as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        turn::integer as turn,
        start_seq::bigint as start_seq,
        end_seq::bigint as end_seq,
        rolls::integer as rolls,
        hot_dice::integer as hot_dice,
        outcome::varchar as outcome,
        coalesce(end_implied, false)::boolean as end_implied,
        claimed_points::bigint as claimed_points,
        corrected_points::bigint as corrected_points,
        claimed_total::bigint as claimed_total,
        corrected_total::bigint as corrected_total,
        ts::timestamptz as ts
    from src_turns
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

rolls as (
    select
        game_id::varchar as game_id,
        player::varchar as player,
        turn::integer as turn,
        list(
            struct_pack(
                seq := seq::bigint,
                dice := dice::integer[],
                scored := scored::boolean,
                kept := kept::integer[],
                kept_claimed := kept_claimed::bigint,
                kept_value := kept_value::bigint
            )
            order by roll_in_turn, seq
        ) as roll_list
    from src_rolls
    where list_contains(getvariable('r_games')::varchar[], game_id)
    group by all
),

lines as (
    -- the log lines of each turn's events (seq start_seq..end_seq): the turn table's line column
    select
        turns.game_id,
        turns.start_seq,
        min(events.source_line)::bigint as first_line,
        max(events.source_line)::bigint as last_line,
        count(distinct events.source_file) as files,
        min(events.source_file)::varchar as first_file,
        max(events.source_file)::varchar as last_file
    from turns
    inner join src_events as events
        on events.game_id = turns.game_id
       and events.seq between turns.start_seq
           and coalesce(case when turns.end_implied then turns.end_seq - 1 else turns.end_seq end, turns.start_seq)
    where list_contains(getvariable('r_games')::varchar[], events.game_id)
    group by all
),

findings as (
    select
        game_id,
        turn_start_seq,
        list(
            struct_pack(seq := seq, code := code, severity := severity, message := message,
                        claimed := claimed, expected := expected, player := player, file := file, line := line)
            order by seq, code
        ) as finding_list,
        count(*) filter (where severity = 'error') as errors,
        string_agg(distinct code, ', ' order by code) as codes
    from int_report_game_findings
    where turn_start_seq is not null
    group by all
),

final as (
    select
        turns.game_id,
        row_number() over (partition by turns.game_id order by turns.start_seq) as position,
        turns.player,
        turns.turn,
        turns.start_seq,
        turns.end_seq,
        lines.first_line,
        lines.last_line,
        lines.files as line_files,
        lines.first_file,
        lines.last_file,
        turns.outcome,
        turns.end_implied,
        case
            when turns.end_implied then turns.outcome || ' (implied: the ' || turns.outcome || ' line is missing)'
            else turns.outcome
        end as outcome_label,
        turns.rolls,
        turns.hot_dice,
        turns.claimed_points,
        turns.corrected_points,
        turns.claimed_total,
        turns.corrected_total,
        strftime(turns.ts at time zone 'UTC', '%Y-%m-%d %H:%M:%S') as started,
        coalesce(rolls.roll_list, []) as roll_list,
        coalesce(findings.finding_list, []) as finding_list,
        coalesce(findings.errors, 0) as errors,
        coalesce(findings.codes, '') as codes
    from turns
    left join rolls
        on turns.game_id = rolls.game_id and turns.player = rolls.player and turns.turn = rolls.turn
    left join findings
        on turns.game_id = findings.game_id and turns.start_seq = findings.turn_start_seq
    left join lines
        on turns.game_id = lines.game_id and turns.start_seq = lines.start_seq
)

select * from final
order by game_id, start_seq

-- Intermediate (report): every audit finding in scope, with the time it belongs to.
-- Unlike int_findings_in_scope (findings against a player), this keeps game-level findings
-- (wrong_winner, game_incomplete, ...) too. Findings outside any stored game (bad lines,
-- events of unknown games) are in scope only when no filter is set: no filter can place them.
-- found_at: the finding's own ts, else the first event of its game (ingest leaves findings.ts null).
with findings as (
    select
        game_id::varchar as game_id,
        seq::bigint as seq,
        player::varchar as player,
        code::varchar as code,
        severity::varchar as severity,
        message::varchar as message,
        claimed::double as claimed,
        expected::double as expected,
        ts::timestamptz as ts
    from src_findings
),

games as (
    select game_id from int_games_in_scope
),

stored_games as (
    select game_id, first_ts from stg_games
),

unfiltered as (
    select
        getvariable('f_game') is null
        and getvariable('f_rulesets') is null
        and getvariable('f_since') is null
        and getvariable('f_until') is null
        and getvariable('f_players') is null as yes
),

final as (
    select
        findings.game_id,
        findings.seq,
        findings.player,
        findings.code,
        findings.severity,
        findings.message,
        findings.claimed,
        findings.expected,
        coalesce(findings.ts, stored_games.first_ts) as found_at,
        stored_games.game_id is not null as in_stored_game
    from findings
    left join stored_games on findings.game_id = stored_games.game_id
    where (
        findings.game_id in (select game_id from games)
        or ((select yes from unfiltered) and stored_games.game_id is null)
    )
      and player_in_scope(findings.player)
)

select * from final

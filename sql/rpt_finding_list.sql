-- Report: the stored findings, the rows `farkle-logs audit LOGS --format json` gives for the
-- logs the dataset holds: what `farkle-logs findings` lists, ordered by file, line, seq,
-- then code. Every finding, also those naming no game (bad lines) or no player.
-- Filters: f_codes (codes), f_severity, f_game (one game_id), f_players (findings naming
-- one of these players). --since, --until and --rules do not apply: a finding of a bad
-- line belongs to no game.
with findings as (
    select * from stg_findings
),

final as (
    select
        game_id,
        seq,
        file,
        line,
        player,
        code,
        severity,
        message,
        claimed,
        expected
    from findings
    where (getvariable('f_codes') is null or list_contains(getvariable('f_codes')::varchar[], code))
      and (getvariable('f_severity') is null or severity = getvariable('f_severity'))
      and (getvariable('f_game') is null or game_id = getvariable('f_game'))
      and (getvariable('f_players') is null or (player is not null and player_in_scope(player)))
)

select * from final
order by file, line, seq nulls first, code

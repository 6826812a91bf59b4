-- Report (report page): the findings of the games of getvariable('r_games') that fall in no
-- turn (about the game as a whole: wrong winner, final scores, incomplete log, ...).
with findings as (
    select * from int_report_game_findings
),

final as (
    select game_id, seq, file, line, player, code, severity, message, claimed, expected
    from findings
    where turn_start_seq is null
)

select * from final
order by game_id, seq nulls last, code

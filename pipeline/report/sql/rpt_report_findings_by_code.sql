-- Report (report page): audit findings by code and severity, with how many games and
-- players they touch.
with findings as (
    select * from int_report_findings_in_scope
),

final as (
    select
        code,
        severity,
        count(*) as findings,
        count(distinct game_id) as games,
        count(distinct player) as players
    from findings
    group by all
)

select * from final
order by findings desc, code, severity

-- Report (report page): audit findings per period and code. The period is a day, a week
-- (starting Monday) or a month, whichever keeps the covered span under about 100 bars.
-- period and period_end are UTC dates ('YYYY-MM-DD'), the period being [period, period_end).
-- Findings without any time (no ts, game without timestamps or outside any game) have
-- period null.
with findings as (
    select * from int_report_findings_in_scope
),

span as (
    select
        case
            when max(found_at) - min(found_at) <= interval 92 days then 'day'
            when max(found_at) - min(found_at) <= interval 730 days then 'week'
            else 'month'
        end as unit
    from findings
),

periods as (
    select
        span.unit,
        date_trunc(span.unit, findings.found_at at time zone 'UTC') as period_start,
        findings.code,
        findings.severity
    from findings, span
),

counted as (
    select
        unit,
        period_start,
        code,
        severity,
        count(*) as findings
    from periods
    group by all
),

final as (
    select
        unit,
        strftime(period_start, '%Y-%m-%d') as period,
        strftime(
            period_start + case unit when 'day' then interval 1 day when 'week' then interval 7 days
                                     else interval 1 month end,
            '%Y-%m-%d'
        ) as period_end,
        code,
        severity,
        findings
    from counted
)

select * from final
order by period nulls last, code

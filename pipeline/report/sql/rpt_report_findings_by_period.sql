-- Report (report page): audit findings per period and code. The period is an hour, a day,
-- a week (starting Monday) or a month, whichever keeps the span covered (the games in
-- scope and their findings, first to last) under about 100 bars: a set of games played on
-- one day is shown by the hour, not as one bar that fills the chart.
-- period and period_end are UTC ('YYYY-MM-DD', or 'YYYY-MM-DDTHH:00:00Z' by the hour), the
-- period being [period, period_end); axis_start and axis_end (same form, the same on every
-- row) are the periods the chart's time axis spans: the whole span covered, so findings
-- show where they fall in it. Findings without any time (no ts, game without timestamps or
-- outside any game) have period null.
with findings as (
    select * from int_report_findings_in_scope
),

games as (
    select stg_games.first_ts, coalesce(stg_games.last_ts, stg_games.first_ts) as last_ts
    from int_games_in_scope
    inner join stg_games on int_games_in_scope.game_id = stg_games.game_id
),

covered as (
    select
        least(min(games.first_ts), (select min(found_at) from findings)) as first_at,
        greatest(max(games.last_ts), (select max(found_at) from findings)) as last_at
    from games
),

span as (
    select
        case
            when last_at - first_at <= interval 2 days then 'hour'
            when last_at - first_at <= interval 92 days then 'day'
            when last_at - first_at <= interval 730 days then 'week'
            else 'month'
        end as unit,
        first_at,
        last_at
    from covered
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

bounds as (
    select
        unit,
        date_trunc(unit, first_at at time zone 'UTC') as axis_start,
        date_trunc(unit, last_at at time zone 'UTC') as axis_last
    from span
),

stamped as (
    select
        counted.unit,
        counted.period_start as period_at,
        counted.period_start + unit_step.step as period_end_at,
        counted.code,
        counted.severity,
        counted.findings,
        bounds.axis_start as axis_start_at,
        bounds.axis_last + unit_step.step as axis_end_at
    from counted
    cross join bounds
    cross join (
        select case unit when 'hour' then interval 1 hour when 'day' then interval 1 day
                         when 'week' then interval 7 days else interval 1 month end as step
        from span
    ) as unit_step
),

final as (
    select
        unit,
        case when unit = 'hour' then strftime(period_at, '%Y-%m-%dT%H:00:00Z')
             else strftime(period_at, '%Y-%m-%d') end as period,
        case when unit = 'hour' then strftime(period_end_at, '%Y-%m-%dT%H:00:00Z')
             else strftime(period_end_at, '%Y-%m-%d') end as period_end,
        code,
        severity,
        findings,
        case when unit = 'hour' then strftime(axis_start_at, '%Y-%m-%dT%H:00:00Z')
             else strftime(axis_start_at, '%Y-%m-%d') end as axis_start,
        case when unit = 'hour' then strftime(axis_end_at, '%Y-%m-%dT%H:00:00Z')
             else strftime(axis_end_at, '%Y-%m-%d') end as axis_end
    from stamped
)

select * from final
order by period nulls last, code

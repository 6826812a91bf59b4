-- Report (report page): the headline numbers, one row. Games, players, finished turns,
-- rolls and events of the games in scope (events: every valid event stored for them, as
-- counted by ingest); findings of int_report_findings_in_scope; the period covered by the
-- games' first and last events (games without timestamps are counted apart).
with games as (
    select game_id, ruleset_name, complete, finished from int_games_in_scope
),

game_rows as (
    select
        games.game_id,
        games.ruleset_name,
        games.complete,
        games.finished,
        src_games.events::bigint as events,
        src_games.first_ts::timestamptz as first_ts,
        src_games.last_ts::timestamptz as last_ts
    from games
    inner join src_games on games.game_id = src_games.game_id
),

game_totals as (
    select
        count(*) as games,
        count(*) filter (where complete) as complete_games,
        count(*) filter (where complete and not finished) as abandoned_games,
        coalesce(sum(events), 0)::bigint as events,
        min(first_ts) as first_ts,
        max(coalesce(last_ts, first_ts)) as last_ts,
        count(*) filter (where first_ts is null) as games_without_time,
        list(distinct ruleset_name order by ruleset_name) filter (where ruleset_name is not null) as rulesets
    from game_rows
),

players as (
    select count(distinct player) as players from int_game_players_in_scope
),

turns as (
    select coalesce(sum(turns), 0)::bigint as turns from fct_turn_points
),

rolls as (
    select coalesce(sum(rolls), 0)::bigint as rolls from fct_roll_counts
),

findings as (
    select
        count(*) as findings,
        count(*) filter (where severity = 'error') as error_findings,
        count(*) filter (where severity <> 'error') as other_findings,
        count(*) filter (where not in_stored_game) as findings_outside_games,
        count(distinct game_id) filter (where severity = 'error' and in_stored_game) as disputed_games
    from int_report_findings_in_scope
),

final as (
    select
        game_totals.games,
        game_totals.complete_games,
        game_totals.abandoned_games,
        players.players,
        turns.turns,
        rolls.rolls,
        game_totals.events,
        findings.findings,
        findings.error_findings,
        findings.other_findings,
        findings.findings_outside_games,
        findings.disputed_games,
        game_totals.first_ts,
        game_totals.last_ts,
        game_totals.games_without_time,
        coalesce(game_totals.rulesets, []) as rulesets
    from game_totals, players, turns, rolls, findings
)

select * from final

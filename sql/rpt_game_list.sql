-- Report: the games, one row each, in order of start (games without a timestamp last), then
-- game_id: what `farkle-logs games` lists. Games of the league scope (every filter but
-- --player); with f_players, the games every one of those players sat in (together).
--   players           in seat order
--   winner_claimed    the first game_end's winner(s); winner_corrected: on the dice (ties: all)
--   findings, errors  the audit's findings in the game (any severity; errors alone)
--   codes             their distinct codes, in name order
--   ended             int_finished_games: 'finished', 'abandoned', or null (no game_end)
-- f_with_findings: only the games with at least one finding.
with games as (
    select game_id, start_ts, ruleset_name, ended from int_league_games
),

stored as (
    select game_id, players, winner_claimed, winner_corrected, events from src_games
),

together as (
    select game_id
    from stg_game_players
    where player_in_scope(player)
    group by game_id
    having count(distinct player) = coalesce(array_length(getvariable('f_players')::varchar[]), 0)
),

findings as (
    select
        game_id,
        count(*) as findings,
        count(*) filter (where severity = 'error') as errors,
        list_sort(list(distinct code)) as codes
    from stg_findings
    where game_id is not null
    group by game_id
),

final as (
    select
        games.game_id,
        games.start_ts,
        stored.players,
        stored.winner_claimed,
        stored.winner_corrected,
        coalesce(findings.findings, 0) as findings,
        coalesce(findings.errors, 0) as errors,
        coalesce(findings.codes, []::varchar[]) as codes,
        games.ended,
        games.ruleset_name,
        stored.events
    from games
    inner join stored on games.game_id = stored.game_id
    left join findings on games.game_id = findings.game_id
    where (getvariable('f_players') is null or games.game_id in (select game_id from together))
      and (not coalesce(getvariable('f_with_findings'), false) or findings.findings > 0)
)

select * from final
order by start_ts nulls last, game_id

-- Intermediate: audit findings against a player (player not null) in games in scope.
-- Findings that name no player (e.g. game_incomplete, bad lines) are about the logs, not a
-- player: `farkle-logs audit` reports them.
with findings as (
    select * from stg_findings
),

games as (
    select game_id from int_games_in_scope
),

final as (
    select
        findings.game_id,
        findings.player,
        findings.code,
        findings.severity
    from findings
    where findings.player is not null
      and findings.game_id in (select game_id from games)
      and (getvariable('f_player') is null or findings.player = getvariable('f_player'))
)

select * from final

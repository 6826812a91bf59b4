-- Intermediate: audit findings against a player (a player of that game) in games in scope.
-- Findings that name no player (e.g. game_incomplete, bad lines) are about the logs, not a
-- player: `farkle-logs audit` reports them. So is a finding whose event names someone who
-- is not a player of the game (wrong_player on a mislabelled event): counting it would show
-- that name as a phantom player with no games.
with findings as (
    select * from stg_findings
),

games as (
    select game_id from int_games_in_scope
),

seats as (
    select game_id, player from stg_game_players
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
      and exists (
          select 1 from seats where seats.game_id = findings.game_id and seats.player = findings.player
      )
      and player_in_scope(findings.player)
)

select * from final

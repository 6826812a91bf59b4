-- Report: each shown player's games with findings (r_league_players: the players the league
-- sections show), among the games in scope: the r_player_games with the most errors, then
-- the most findings, then the latest, per player; `of_games` says how many there are in all.
--   findings, errors   the audit's findings in the game (int_report_findings_in_scope: game-level
--                      ones included); own_findings: those naming this player
--   codes              the distinct codes of the game's findings, in name order
--   won_claimed, won_corrected  whether the player won as claimed and on the dice
with players as (
    select unnest(getvariable('r_league_players')::varchar[]) as player
),

seats as (
    select game_id, player, won_claimed, won_corrected
    from int_game_players_in_scope
    where player in (select player from players)
),

findings as (
    select game_id, player, severity, code from int_report_findings_in_scope where game_id is not null
),

per_game as (
    select
        game_id,
        count(*) as findings,
        count(*) filter (where severity = 'error') as errors,
        list_sort(list(distinct code)) as codes
    from findings
    group by game_id
),

per_seat as (
    select game_id, player, count(*) as own_findings
    from findings
    where player is not null
    group by game_id, player
),

games as (
    select game_id, first_ts from stg_games
),

ranked as (
    select
        seats.player,
        seats.game_id,
        games.first_ts as started,
        per_game.findings,
        per_game.errors,
        coalesce(per_seat.own_findings, 0) as own_findings,
        per_game.codes,
        seats.won_claimed,
        seats.won_corrected,
        count(*) over (partition by seats.player) as of_games,
        row_number() over (
            partition by seats.player
            order by per_game.errors desc, per_game.findings desc, games.first_ts desc nulls last, seats.game_id
        ) as rank
    from seats
    inner join per_game on seats.game_id = per_game.game_id
    inner join games on seats.game_id = games.game_id
    left join per_seat on seats.game_id = per_seat.game_id and seats.player = per_seat.player
),

final as (
    select * from ranked where rank <= getvariable('r_player_games')
)

select * from final
order by player, rank

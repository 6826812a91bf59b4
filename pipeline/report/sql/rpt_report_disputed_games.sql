-- Report (report page): the games with the most audit findings (errors first), at most
-- getvariable('r_top_games') of them: who claimed to win, who won by the dice, and how many
-- points were claimed beyond what the dice were worth.
with findings as (
    select * from int_report_findings_in_scope where in_stored_game
),

by_game as (
    select
        game_id,
        count(*) as findings,
        count(*) filter (where severity = 'error') as errors,
        list(distinct code order by code) as codes
    from findings
    group by all
),

seats as (
    select
        game_id,
        sum(claimed_total - corrected_total)::bigint as overclaimed_points
    from stg_game_players
    where game_id in (select game_id from by_game)
    group by all
),

games as (
    select
        game_id::varchar as game_id,
        ruleset_name::varchar as ruleset_name,
        players,
        winner_claimed,
        winner_corrected,
        complete::boolean as complete,
        ended::varchar as how_ended,
        events::bigint as events,
        first_ts::timestamptz as first_ts
    from src_games
    where game_id in (select game_id from by_game)
),

final as (
    select
        by_game.game_id,
        by_game.findings,
        by_game.errors,
        by_game.codes,
        games.players,
        games.winner_claimed,
        games.winner_corrected,
        coalesce(list_sort(games.winner_claimed) <> list_sort(games.winner_corrected), false) as winner_changed,
        seats.overclaimed_points,
        games.complete,
        games.how_ended,
        games.events,
        games.ruleset_name,
        strftime(games.first_ts at time zone 'UTC', '%Y-%m-%d %H:%M') as started
    from by_game
    left join games on by_game.game_id = games.game_id
    left join seats on by_game.game_id = seats.game_id
)

select * from final
order by errors desc, winner_changed desc, findings desc, abs(coalesce(overclaimed_points, 0)) desc, game_id
limit getvariable('r_top_games')

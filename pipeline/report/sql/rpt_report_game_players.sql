-- Report (report page): the games of getvariable('r_games') with each seat's claimed and
-- corrected final total and who won by each.
with games as (
    select
        game_id::varchar as game_id,
        ruleset_name::varchar as ruleset_name,
        complete::boolean as complete,
        ended::varchar as how_ended,
        events::bigint as events,
        first_ts::timestamptz as first_ts,
        last_ts::timestamptz as last_ts
    from src_games
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

seats as (
    select
        game_id::varchar as game_id,
        seat::integer as seat,
        player::varchar as player,
        claimed_total::bigint as claimed_total,
        corrected_total::bigint as corrected_total,
        coalesce(won_claimed, false) as won_claimed,
        coalesce(won_corrected, false) as won_corrected
    from src_game_players
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

final as (
    select
        games.game_id,
        games.ruleset_name,
        games.complete,
        games.how_ended,
        games.events,
        strftime(games.first_ts at time zone 'UTC', '%Y-%m-%d %H:%M:%S') as started,
        strftime(games.last_ts at time zone 'UTC', '%Y-%m-%d %H:%M:%S') as ended,
        seats.seat,
        seats.player,
        seats.claimed_total,
        seats.corrected_total,
        seats.won_claimed,
        seats.won_corrected
    from games
    left join seats on games.game_id = seats.game_id
)

select * from final
order by game_id, seat

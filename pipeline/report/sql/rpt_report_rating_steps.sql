-- Report: the rating chart's data, each shown player's rating over time (r_league_players:
-- the players the league sections show). One point per rated game, at the game's start, while
-- those players have at most r_rating_points rated games with a start time; past that, one
-- point per player and day (at 00:00 UTC) while that gives at most r_rating_points points,
-- else one per player and week (from Monday, UTC): the rating after the player's last game of
-- the step. Rated games without a start time cannot be placed on a date axis: one row per
-- player with `moment` null counts them.
--   unit                'game', 'day' or 'week' (null on the row of games without a time)
--   games               the player's rated games in this step; rated_games: so far, these included
--   mu, sigma, ordinal  the rating after the step's last game (rating_history)
with history as (
    select player, start_ts, rated_games, mu, sigma, ordinal
    from rating_history
    where list_contains(getvariable('r_league_players')::varchar[], player)
),

counts as (
    select
        count(start_ts) as games,
        count(distinct (player, date_trunc('day', start_ts at time zone 'UTC'))) filter (
            where start_ts is not null
        ) as player_days
    from history
),

unit as (
    select
        case
            when games <= getvariable('r_rating_points') then 'game'
            when player_days <= getvariable('r_rating_points') then 'day'
            else 'week'
        end as unit
    from counts
),

stepped as (
    select
        history.*,
        case when history.start_ts is not null then unit.unit end as unit,
        case
            when history.start_ts is null then null
            when unit.unit = 'game' then history.start_ts
            else date_trunc(unit.unit, history.start_ts at time zone 'UTC') at time zone 'UTC'
        end as moment
    from history
    cross join unit
),

final as (
    select
        player,
        moment,
        any_value(unit) as unit,
        count(*) as games,
        max(rated_games) as rated_games,
        arg_max(mu, rated_games) as mu,
        arg_max(sigma, rated_games) as sigma,
        arg_max(ordinal, rated_games) as ordinal
    from stepped
    group by player, moment
)

select * from final
order by player, moment nulls last

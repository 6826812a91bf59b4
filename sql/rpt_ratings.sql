-- Report: the standings, one row per rated player, best first: their rating after their
-- last game (rating_history: openskill's Plackett-Luce, see pipeline/stats/ratings.py) and
-- what they did in the rated games (finished, two or more players).
--   mu, sigma        the rating's mean and uncertainty; ordinal = mu - 3 sigma, the sort key
--   games, wins      rated games; those with the highest corrected total (ties: each tied player)
--   win_share        wins / games
--   mean_final_total the mean of the player's corrected final totals
--   change_last_10   ordinal after the last game minus ordinal before the 10th-last (before the
--                    first when there are fewer than 10 games)
-- f_min_games: players with fewer rated games are not listed (still rated: they count for
-- their opponents); f_players: only these players' rows.
with history as (
    select * from rating_history
),

-- one pass (no self-join): each row knows the player's number of rated games
numbered as (
    select
        *,
        max(rated_games) over (partition by player) as games
    from history
),

per_player as (
    select
        player,
        count(*) as games,
        count(*) filter (where place = 1) as wins,
        avg(corrected_total) as mean_final_total,
        max(mu) filter (where rated_games = games) as mu,
        max(sigma) filter (where rated_games = games) as sigma,
        max(ordinal) filter (where rated_games = games) as ordinal,
        max(ordinal_before) filter (where rated_games = greatest(games - 9, 1)) as ordinal_ten_back
    from numbered
    group by player
),

final as (
    select
        player,
        mu,
        sigma,
        ordinal,
        games,
        wins,
        rate(wins, games) as win_share,
        mean_final_total,
        ordinal - ordinal_ten_back as change_last_10
    from per_player
    where games >= getvariable('f_min_games')
      and player_in_scope(player)
)

select * from final
order by ordinal desc, player

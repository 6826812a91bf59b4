-- Report: who finishes above whom. One row per ordered pair of players who met in finished
-- games (fct_game_results), compared on their corrected final totals in those games.
--   games               finished games both sat in
--   above, below, tied  games where player's total was higher, lower, equal
--   share               above / (above + below): player's share of the games one of the two
--                       finished above the other (ties left out, so share(a, b) = 1 - share(b, a))
--   share_lo, share_hi  its Wilson score interval at 95 % (null when every game was tied)
--   before_*, after_*   the same over the games where player sat before the opponent (played
--                       earlier in each round) and after them: seat order gives the first
--                       player an edge, so a pair's record is read per seating
-- f_players: only these players' rows (as player; any opponent).
with results as (
    select game_id, player, seat, corrected_total from fct_game_results
),

pairs as (
    select
        mine.player,
        theirs.player as opponent,
        mine.seat < theirs.seat as sat_before,
        mine.corrected_total > theirs.corrected_total as above,
        mine.corrected_total < theirs.corrected_total as below
    from results as mine
    inner join results as theirs on mine.game_id = theirs.game_id and mine.player <> theirs.player
    where player_in_scope(mine.player)
),

counted as (
    select
        player,
        opponent,
        count(*) as games,
        count(*) filter (where above) as above,
        count(*) filter (where below) as below,
        count(*) filter (where sat_before) as before_games,
        count(*) filter (where sat_before and above) as before_above,
        count(*) filter (where sat_before and below) as before_below,
        count(*) filter (where not sat_before) as after_games,
        count(*) filter (where not sat_before and above) as after_above,
        count(*) filter (where not sat_before and below) as after_below
    from pairs
    group by player, opponent
),

final as (
    select
        player,
        opponent,
        games,
        above,
        below,
        games - above - below as tied,
        rate(above, above + below) as share,
        case when above + below > 0 then wilson_lo(above, above + below) end as share_lo,
        case when above + below > 0 then wilson_hi(above, above + below) end as share_hi,
        before_games,
        before_above,
        before_below,
        before_games - before_above - before_below as before_tied,
        rate(before_above, before_above + before_below) as before_share,
        after_games,
        after_above,
        after_below,
        after_games - after_above - after_below as after_tied,
        rate(after_above, after_above + after_below) as after_share
    from counted
)

select * from final
order by player, opponent

-- materialized: table
-- Fact: one row per seat of each finished game of the league (int_league_games: every
-- filter but --player), with the game's place in the rating order and the seat's place in
-- the game. What the ratings, the standings, head-to-head and the trends' win shares count.
--   game_order       1, 2, ...: games by start (start_ts, games without one last), then game_id
--   seat             1-based position in the game's players (who plays first)
--   players          seats of the game
--   corrected_total  the final total on the dice (the audit's corrected total, not the claim)
--   place            1 + the number of players of the game with a higher corrected total:
--                    equal totals share a place (rank() over the totals, highest first)
--   won              place = 1 (a tie for the highest total is a win for each tied player)
with games as (
    select game_id, start_ts from int_league_games where finished
),

seats as (
    select game_id, player, seat, corrected_total from stg_game_players
),

ordered as (
    select
        game_id,
        start_ts,
        row_number() over (order by start_ts asc nulls last, game_id asc) as game_order
    from games
),

final as (
    select
        ordered.game_order,
        ordered.game_id,
        ordered.start_ts,
        seats.player,
        seats.seat,
        count(*) over (partition by seats.game_id) as players,
        coalesce(seats.corrected_total, 0) as corrected_total,
        rank() over (partition by seats.game_id order by coalesce(seats.corrected_total, 0) desc) as place,
        rank() over (partition by seats.game_id order by coalesce(seats.corrected_total, 0) desc) = 1 as won
    from ordered
    inner join seats on ordered.game_id = seats.game_id
)

select * from final

-- Report: each player's rating after every rated game, in rating order (the data of a
-- rating-over-time chart; start_ts gives its date axis).
--   rated_games  the player's rated games so far, this one included
--   place        the player's place in the game (1 = highest corrected total, ties share)
--   mu, sigma, ordinal  the rating after the game; *_before in the model rating_history
with history as (
    select * from rating_history
),

final as (
    select
        player,
        game_order,
        game_id,
        start_ts,
        rated_games,
        place,
        corrected_total,
        mu,
        sigma,
        ordinal
    from history
    where player_in_scope(player)
)

select * from final
order by game_order, player

-- Report (report page): each player's winning chance lost per two-player game, as a
-- distribution (fct_game_race_loss: the percentage points their judged choices gave up in
-- one game, summed): games, mean, and the 10th, 25th, 50th, 75th and 90th percentiles.
with per_game as (
    select player, loss_pp from fct_game_race_loss
),

final as (
    select
        player,
        count(*)::bigint as games,
        avg(loss_pp) as mean_pp,
        quantile_cont(loss_pp, 0.10) as p10,
        quantile_cont(loss_pp, 0.25) as p25,
        quantile_cont(loss_pp, 0.50) as p50,
        quantile_cont(loss_pp, 0.75) as p75,
        quantile_cont(loss_pp, 0.90) as p90
    from per_game
    group by player
)

select * from final
order by mean_pp, player

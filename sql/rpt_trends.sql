-- Report: each player's figures per period of game start (f_period: 'week', from Monday, or
-- 'month'; UTC), so a player sees whether they improve. One row per (player, period) they
-- played in; period is the first day of the week or month (null: games without timestamps).
--   games                  games sat in (in scope)
--   finished_games, wins   finished ones (int_finished_games); those won on corrected totals
--   win_share              wins / finished_games
--   rolls, farkles         every roll; bust_rate = farkles / rolls
--   turns, points          finished turns and their corrected points (a farkle is 0);
--                          mean_turn_value = points / turns
--   judged_choices, decision_loss_points, mean_decision_loss
--                          choices judged against the exact single-turn policy
--                          (fct_game_decision_loss) and the expected points they gave up
with games as (
    select
        game_id,
        date_trunc(getvariable('f_period'), start_ts at time zone 'UTC')::date as period
    from int_league_games
),

seats as (
    select game_id, player from int_game_players_in_scope
),

results as (
    select game_id, player, won from fct_game_results
),

rolls as (
    select game_id, player, count(*) as rolls, count(*) filter (where farkled) as farkles
    from int_rolls_in_scope
    group by game_id, player
),

turns as (
    select game_id, player, count(*) as turns, sum(points) as points
    from int_turns_in_scope
    group by game_id, player
),

choices as (
    select game_id, player, judged, loss_points from fct_game_decision_loss
),

per_game as (
    select
        seats.player,
        games.period,
        results.won is not null as finished,
        coalesce(results.won, false) as won,
        coalesce(rolls.rolls, 0) as rolls,
        coalesce(rolls.farkles, 0) as farkles,
        coalesce(turns.turns, 0) as turns,
        coalesce(turns.points, 0) as points,
        coalesce(choices.judged, 0) as judged,
        coalesce(choices.loss_points, 0.0) as loss_points
    from seats
    inner join games on seats.game_id = games.game_id
    left join results on seats.game_id = results.game_id and seats.player = results.player
    left join rolls on seats.game_id = rolls.game_id and seats.player = rolls.player
    left join turns on seats.game_id = turns.game_id and seats.player = turns.player
    left join choices on seats.game_id = choices.game_id and seats.player = choices.player
),

final as (
    select
        player,
        period,
        count(*) as games,
        count(*) filter (where finished) as finished_games,
        count(*) filter (where won) as wins,
        rate(count(*) filter (where won), count(*) filter (where finished)) as win_share,
        sum(rolls)::bigint as rolls,
        sum(farkles)::bigint as farkles,
        rate(sum(farkles), sum(rolls)) as bust_rate,
        sum(turns)::bigint as turns,
        sum(points)::bigint as points,
        rate(sum(points), sum(turns)) as mean_turn_value,
        sum(judged)::bigint as judged_choices,
        sum(loss_points) as decision_loss_points,
        rate(sum(loss_points), sum(judged)) as mean_decision_loss
    from per_game
    group by player, period
)

select * from final
order by player, period nulls last

-- Report: the games each league figure leaves out, so that every figure can say so.
-- Ratings count the finished games of the league (every filter but --player) with two or
-- more players; head-to-head the same among the games in scope (a --player's games);
-- trends' win shares the finished games in scope.
--   games       games the figure looks at; counted: those it counts
--   unfinished  left out: not finished (int_finished_games: no game_end, or abandoned)
--   one_player  left out: finished, but a game of one player (no opponent to rate or compare)
with league as (
    select game_id, finished from int_league_games
),

scoped as (
    select game_id from int_games_in_scope
),

seats as (
    select game_id, count(*) as players from stg_game_players group by game_id
),

games as (
    select
        league.game_id,
        league.finished,
        coalesce(seats.players, 0) >= 2 as has_opponents,
        league.game_id in (select game_id from scoped) as in_scope
    from league
    left join seats on league.game_id = seats.game_id
),

final as (
    select
        1 as figure_order,
        'ratings' as figure,
        count(*) as games,
        count(*) filter (where finished and has_opponents) as counted,
        count(*) filter (where not finished) as unfinished,
        count(*) filter (where finished and not has_opponents) as one_player
    from games
    union all
    select
        2 as figure_order,
        'head_to_head' as figure,
        count(*) as games,
        count(*) filter (where finished and has_opponents) as counted,
        count(*) filter (where not finished) as unfinished,
        count(*) filter (where finished and not has_opponents) as one_player
    from games
    where in_scope
    union all
    select
        3 as figure_order,
        'trends' as figure,
        count(*) as games,
        count(*) filter (where finished) as counted,
        count(*) filter (where not finished) as unfinished,
        0 as one_player
    from games
    where in_scope
)

-- a union's rows come in no set order (Spark interleaves them): the figures in a fixed one
select figure, games, counted, unfinished, one_player from final order by figure_order

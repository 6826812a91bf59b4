-- Intermediate: how each game of the dataset ended, and whether it counts as finished: the
-- one place that says which games the results and league figures (win rates, ratings,
-- head-to-head, win shares of the trends, the game list's "ended") count. A game is finished
-- when its first game_end is not abandoned (docs/log-format.md, "Abandoned games").
--   ended     'finished' or 'abandoned' (the first game_end's reason), null without a game_end
--   finished  ended = 'finished'
with games as (
    select game_id, ended from stg_games
),

final as (
    select
        game_id,
        ended,
        coalesce(ended = 'finished', false) as finished
    from games
)

select * from final

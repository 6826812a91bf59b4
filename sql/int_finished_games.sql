-- Intermediate: how each game of the dataset ended, and whether it counts as finished: the
-- one place that says which games the league figures (ratings, head-to-head, win shares of
-- the trends, the game list's "ended") count. A game is finished when its first game_end is
-- not abandoned (docs/log-format.md, "Abandoned games").
--   ended     'finished' or 'abandoned' (the first game_end's reason), null without a game_end
--   finished  ended = 'finished'
-- The games table does not store the game_end's reason yet, only whether a game_end came
-- (`complete`): until it does, every game with a game_end is finished. When it does, `ended`
-- below reads that column and nothing else changes.
with games as (
    select game_id, complete from stg_games
),

ended as (
    select
        game_id,
        case when complete then 'finished' end as ended
    from games
),

final as (
    select
        game_id,
        ended,
        coalesce(ended = 'finished', false) as finished
    from ended
)

select * from final

-- Intermediate: the rulesets of the two-player games in scope by id, for the winning-chance
-- judge (pipeline.solved.judge), which solves or loads each one once, and loads nothing for
-- a dataset without two-player games (its preload reads this first, while DuckDB computes
-- the judge's other inputs).
with games as (
    select ruleset_id, ruleset from int_two_player_games
),

final as (
    select distinct ruleset_id, ruleset
    from games
)

select * from final

-- Intermediate: the rulesets of the two-player games in scope by id, for the winning-chance
-- judge (pipeline.solved.judge), which solves or loads each one once, and loads nothing for
-- a dataset without two-player games (its preload reads this first, while DuckDB computes
-- the judge's other inputs).
with games as (
    select game_id, ruleset_id, ruleset from int_games_in_scope
),

two_player as (
    select game_id from stg_game_players group by game_id having count(*) = 2
),

final as (
    select distinct ruleset_id, ruleset
    from games
    where game_id in (select game_id from two_player)
)

select * from final

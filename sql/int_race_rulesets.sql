-- Intermediate: the rulesets of the games in scope by id, for the winning-chance judge
-- (pipeline.solved.judge), which solves or loads each one once.
with games as (
    select distinct ruleset_id, ruleset from int_games_in_scope
),

final as (
    select ruleset_id, ruleset from games
)

select * from final

-- Intermediate: the games in scope with any other number of seats than two: the scope of the
-- `_other_games` variants of int_roll_keeps and int_choice_values (pipeline.stats.runner: the
-- same text over these games only), whose choices keep the single-turn yardstick alone.
with games as (
    select * from int_games_in_scope
),

final as (
    select * from games where not two_player
)

select * from final

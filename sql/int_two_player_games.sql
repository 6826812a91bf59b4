-- Intermediate: the games in scope with two seats (int_games_in_scope.two_player): the scope
-- of the `_two_player` variants of int_roll_keeps and int_choice_values (pipeline.stats.runner:
-- the same text over these games only), whose choices the winning-chance judge reads.
with games as (
    select * from int_games_in_scope
),

final as (
    select * from games where two_player
)

select * from final

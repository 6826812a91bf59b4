-- Intermediate: bank-or-roll choices of games in scope, with their turn-points bucket.
with decisions as (
    select * from stg_decisions
),

games as (
    select game_id from int_games_in_scope
),

final as (
    select
        decisions.game_id,
        decisions.player,
        decisions.dice_left,
        decisions.turn_points,
        points_bucket_lo(decisions.turn_points) as points_lo,
        decisions.choice,
        decisions.farkled
    from decisions
    where decisions.game_id in (select game_id from games)
      and player_in_scope(decisions.player)
)

select * from final

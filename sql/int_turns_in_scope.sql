-- Intermediate: finished turns (banked or farkled) of games in scope; open turns (a log cut
-- off mid-turn) are left out. `points` is the turn's corrected value, 0 for a farkled turn.
with turns as (
    select * from stg_turns
),

games as (
    select game_id from int_games_in_scope
),

final as (
    select
        turns.game_id,
        turns.player,
        turns.outcome,
        turns.outcome = 'farkle' as farkled,
        case when turns.outcome = 'farkle' then 0 else turns.corrected_points end as points,
        case when turns.outcome = 'farkle' then 0 else turns.claimed_points end as claimed_points,
        turns.hot_dice
    from turns
    where turns.outcome in ('bank', 'farkle')
      and turns.game_id in (select game_id from games)
      and player_in_scope(turns.player)
)

select * from final

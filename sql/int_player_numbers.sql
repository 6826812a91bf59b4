-- materialized: table
-- Intermediate: a small integer player_no for every player name of the rolls and choices, so
-- that linking each bank-or-roll to its roll (int_choice_values) sorts integers, not names.
with players as (
    select player from stg_roll_states
    union
    select player from stg_decision_states
),

final as (
    select
        player,
        row_number() over (order by player) as player_no
    from players
)

select * from final

-- materialized: table
-- partial sums: n
-- Fact: how often each face (1-6) came up in the rolls in scope, per player. Additive. A table:
-- rpt_dice_fairness and its tests (dice_fairness_tests) both read it, and unnesting every die
-- is the dearest step of `stats`.
with rolls as (
    select * from int_rolls_in_scope
),

faces as (
    select
        player,
        unnest(dice)::integer as face
    from rolls
),

final as (
    select
        player,
        face,
        count(*) as n
    from faces
    group by all
)

select * from final

-- materialized: table
-- Fact: bank-or-roll choices counted per (player, dice left, turn-points bucket, choice,
-- whether the roll that followed farkled). Additive.
with decisions as (
    select * from int_decisions_in_scope
),

final as (
    select
        player,
        dice_left,
        points_lo,
        choice,
        farkled,
        count(*) as decisions
    from decisions
    group by all
)

select * from final

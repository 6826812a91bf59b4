-- materialized: table
-- partial sums: decisions, banks, rolls, rolled_farkles
-- Fact: bank-or-roll choices counted per (player, dice left, turn-points bucket, choice,
-- whether the roll that followed farkled), with the split every report needs (banks, rolls,
-- rolls that farkled) as additive columns, so reports only re-aggregate.
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
        count(*) as decisions,
        count(*) filter (where choice = 'bank') as banks,
        count(*) filter (where choice = 'roll') as rolls,
        count(*) filter (where choice = 'roll' and farkled) as rolled_farkles
    from decisions
    group by all
)

select * from final

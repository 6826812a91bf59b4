-- Fact: audit findings against players (int_findings_in_scope), counted per player and
-- code. Additive: re-aggregate by summing.
with findings as (
    select * from int_findings_in_scope
),

final as (
    select
        player,
        code,
        count(*) as findings
    from findings
    group by all
)

select * from final

-- Intermediate: the choices rpt_race_costliest lists, before it words them: every judged
-- choice of a two-player game that lost more than f_race_mistake_pp percentage points. A
-- model of its own so that the text output, which shows only the worst few, counts them all
-- here (pipeline.stats.LONG_LISTS) while the report words only those few (f_list_rows).
with choices as (
    select * from fct_race_choices
),

final as (
    select *
    from choices
    where race_judged and loss_pp > getvariable('f_race_mistake_pp')
)

select * from final

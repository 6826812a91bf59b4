-- Intermediate: the blunders rpt_blunders lists, before it words them: the rows
-- fct_decision_quality kept aside in blunder_rows, one per blunder, with the player, kind
-- and dice of their group. A model of its own so that the text output, which shows only the
-- worst few, counts them all here (pipeline.stats.LONG_LISTS) while the report words only
-- those few (f_list_rows).
with counts as (
    select player, kind, dice, blunders, blunder_rows from fct_decision_quality
),

final as (
    select
        player,
        kind,
        dice,
        unnest(blunder_rows) as b
    from counts
    where blunders > 0
)

select * from final

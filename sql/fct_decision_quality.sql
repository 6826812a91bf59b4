-- materialized: table
-- Fact: judged choices counted per (player, kind, dice, turn-points bucket), with the sums the
-- decision-quality reports re-aggregate (choices, judged, loss_points, optimal: loss < 1e-6,
-- blunders: loss > f_blunder_threshold) and, in blunder_rows, the blunders themselves (one
-- struct per judged choice losing more than the threshold), so that one pass over the choices
-- gives every figure and the per-choice rows are never stored. Two halves, counted apart
-- (a key may be in both: the reports re-aggregate): the two-player games' choices, whose
-- rows pass through the winning-chance judge anyway, and every other game's.
with two_player as (
    select * from fct_decision_quality_two_player
),

other_games as (
    select * from fct_decision_quality_other_games
),

final as (
    select * from two_player
    union all
    select * from other_games
)

select * from final

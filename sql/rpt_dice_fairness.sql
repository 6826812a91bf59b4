-- Report: face frequencies of all dice rolled, overall and per player, with Pearson's
-- chi-square against fair dice and its p-value (exact over the multinomial for small counts,
-- else the chi-square tail with 5 degrees of freedom: `test`), Holm's correction over the
-- rows of its scope (p_adjusted) and off = p_adjusted below 0.05, from the Python model
-- dice_fairness_tests (pipeline/stats/significance.py). A tiny p-value means the faces are
-- not uniform: a loaded or broken dice roller, or a log that was written by hand.
with faces as (
    select * from fct_dice_faces
),

grouped as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        sum(n) filter (where face = 1)::bigint as face_1,
        sum(n) filter (where face = 2)::bigint as face_2,
        sum(n) filter (where face = 3)::bigint as face_3,
        sum(n) filter (where face = 4)::bigint as face_4,
        sum(n) filter (where face = 5)::bigint as face_5,
        sum(n) filter (where face = 6)::bigint as face_6,
        sum(n)::bigint as dice
    from faces
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no rows
),

filled as (
    select
        scope,
        player,
        coalesce(face_1, 0) as face_1,
        coalesce(face_2, 0) as face_2,
        coalesce(face_3, 0) as face_3,
        coalesce(face_4, 0) as face_4,
        coalesce(face_5, 0) as face_5,
        coalesce(face_6, 0) as face_6,
        dice
    from grouped
),

tested as (
    select
        *,
        (
            (face_1 - dice / 6) ^ 2 + (face_2 - dice / 6) ^ 2 + (face_3 - dice / 6) ^ 2
            + (face_4 - dice / 6) ^ 2 + (face_5 - dice / 6) ^ 2 + (face_6 - dice / 6) ^ 2
        ) / nullif(dice / 6, 0) as chi2
    from filled
),

tests as (
    select * from dice_fairness_tests
),

final as (
    select
        tested.*,
        tests.p_value,
        tests.p_adjusted,
        tests.p_adjusted < 0.05 as off,
        tests.test
    from tested
    left join tests
        on tested.scope = tests.scope
       and tested.player is not distinct from tests.player
)

select * from final
order by scope = 'player', player

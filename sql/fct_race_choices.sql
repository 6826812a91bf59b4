-- Fact: every choice of the two-player games in scope judged by the winning chance it cost
-- (pipeline.solved.judge, the Python model int_choices_judged, its rows of the two-player
-- games' turns: win + half a tie under best play by both, final round included), with its state: both banked totals at the turn's
-- start, the turn points, the dice. loss_pp = chance_best - chance_made in percentage
-- points; best_key: the best keep's dice key (keeps) or 1 = roll, 0 = bank; race_judged
-- false (values null, `why` says why) when the state is not one the two-player model holds.
with judged as (
    select * from int_choices_judged where race
),

final as (
    select
        game_no,
        seq,
        kind,
        player,
        turn,
        points,
        dice,
        roll_key,
        kept_key,
        choice,
        mover_total,
        other_total,
        race_judged,
        chance_best,
        chance_made,
        loss_pp,
        best_key,
        why
    from judged
)

select * from final

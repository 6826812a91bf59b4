-- materialized: table
-- Fact: every choice of the two-player games in scope judged by the winning chance it cost
-- (pipeline.solved.judge, the Python model int_race_choices: win + half a tie under best
-- play by both, final round included), with its state. loss_pp = chance_best - chance_made
-- in percentage points; best_key: the best keep's dice key (keeps) or 1 = roll, 0 = bank;
-- race_judged false (values null, `why` says why) when the state is not one the two-player
-- model holds.
with judged as (
    select * from int_race_choices
),

final as (
    select
        states.game_no,
        states.seq,
        states.kind,
        states.player,
        states.turn,
        states.points,
        states.dice,
        states.roll_key,
        states.kept_key,
        states.choice,
        states.mover_total,
        states.other_total,
        judged.race_judged,
        judged.chance_best,
        judged.chance_made,
        judged.loss_pp,
        judged.best_key,
        judged.why
    from int_race_choice_states as states
    inner join judged
        on states.game_no = judged.game_no
        and states.seq = judged.seq
        and (states.kind = 'keep') = judged.is_keep
)

select * from final

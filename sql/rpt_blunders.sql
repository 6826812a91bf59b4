-- Report: every judged choice that gave up more than f_blunder_threshold expected points
-- (150 by default) against the exact single-turn policy (farkle penalties and the race to the
-- target are outside it): where (game_id, seq), the state, what was done and what was best.
-- Worst first.
with choices as (
    select * from int_decision_values
),

final as (
    select
        'player' as scope,
        player,
        game_id,
        seq,
        turn,
        kind,
        points,
        dice,
        opened,
        roll,
        made,
        best,
        value_made,
        value_best,
        loss
    from choices
    where judged and loss > getvariable('f_blunder_threshold')
)

select * from final
order by loss desc, game_id, seq, kind

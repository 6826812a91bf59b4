-- Report: every judged choice that gave up more than f_blunder_threshold expected points
-- (150 by default) against the exact single-turn policy (farkle penalties and the race to the
-- target are outside it): where (game_id, seq), the state, what was done and what was best.
-- Worst first. The rows are the ones fct_decision_quality kept aside in blunder_rows
-- (int_blunder_rows).
--   f_list_rows  null: every row; else only the rows that can be among the worst
--                f_list_rows (those tied at the edge too), so that a caller showing the
--                worst few (the text output) has only those worded; it cuts the rest
with blunders as (
    select * from int_blunder_rows
    qualify getvariable('f_list_rows') is null
        or rank() over (order by b.loss desc) <= getvariable('f_list_rows')
),

games as (
    select game_id, game_no from int_games_in_scope
),

final as (
    select
        'player' as scope,
        blunders.player,
        games.game_id,
        b.seq,
        b.turn,
        kind,
        b.points,
        dice,
        b.opened,
        dice_text(b.roll_key) as roll,
        case when kind = 'keep' then dice_text(b.kept_key) else b.choice end as made,
        b.best,
        b.value_made,
        b.value_best,
        b.loss
    from blunders
    inner join games on b.game_no = games.game_no
)

select * from final
order by loss desc, game_id, seq, kind

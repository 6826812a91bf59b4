-- Report: the costliest choices of two-player games, judged by winning chance: every judged
-- choice losing more than f_race_mistake_pp percentage points, worst first. Where (game_id,
-- seq), the state (both banked totals at the turn's start, the turn points, the dice), what
-- was done and what was best, the chance before (under best play: chance_best) and after the
-- choice made, and the loss. `line` says it in words.
--   f_list_rows  null: every row; else only the rows that can be among the worst
--                f_list_rows (those tied at the edge too), so that a caller showing the
--                worst few (the text output) has only those worded; it cuts the rest
with choices as (
    select * from int_race_costly_choices
    qualify getvariable('f_list_rows') is null
        or rank() over (order by loss_pp desc) <= getvariable('f_list_rows')
),

games as (
    select game_id, game_no from int_games_in_scope
),

-- each dice key's text once (a few hundred keys for a list of up to millions of choices)
dice_texts as (
    select key, dice_text(key) as text
    from (
        select roll_key as key from choices
        union
        select kept_key from choices
        union
        select best_key from choices where kind = 'keep'
    )
    where key is not null
),

worded as (
    select
        games.game_id,
        choices.*,
        rolled.text as roll,
        case when choices.kind = 'keep' then kept.text else choices.choice end as made,
        case when choices.kind = 'keep' then best.text
             when choices.best_key = 1 then 'roll' else 'bank' end as best
    from choices
    inner join games on choices.game_no = games.game_no
    left join dice_texts as rolled on choices.roll_key = rolled.key
    left join dice_texts as kept on choices.kept_key = kept.key
    left join dice_texts as best on choices.kind = 'keep' and choices.best_key = best.key
),

final as (
    select
        'player' as scope,
        game_id,
        seq,
        player,
        kind,
        mover_total,
        other_total,
        mover_total || '-' || other_total as scores,
        points,
        dice,
        roll,
        made,
        best,
        chance_best,
        chance_made,
        loss_pp,
        case when loss_pp > getvariable('f_race_blunder_pp') then 'blunder' else 'mistake' end as severity,
        player || ' at ' || mover_total || ' v ' || other_total
            || ', ' || points || ' in the turn: '
            || case when kind = 'keep'
                    then 'kept ' || made || ' of ' || roll || ' (best ' || best || ')'
                    else choice || ' with ' || dice || ' dice (best ' || best || ')'
               end as line
    from worded
)

select * from final
order by loss_pp desc, game_id, seq, kind

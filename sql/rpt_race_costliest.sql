-- Report: the costliest choices of two-player games, judged by winning chance: every judged
-- choice losing more than f_race_mistake_pp percentage points, worst first. Where (game_id,
-- seq), the state (both banked totals at the turn's start, the turn points, the dice), what
-- was done and what was best, the chance before (under best play: chance_best) and after the
-- choice made, and the loss. `line` says it in words.
with choices as (
    select * from fct_race_choices
    where race_judged and loss_pp > getvariable('f_race_mistake_pp')
),

games as (
    select game_id, game_no from int_games_in_scope
),

final as (
    select
        'player' as scope,
        games.game_id,
        choices.seq,
        choices.player,
        choices.kind,
        choices.mover_total,
        choices.other_total,
        choices.mover_total || '-' || choices.other_total as scores,
        choices.points,
        choices.dice,
        dice_text(choices.roll_key) as roll,
        case when choices.kind = 'keep' then dice_text(choices.kept_key) else choices.choice end as made,
        case when choices.kind = 'keep' then dice_text(choices.best_key)
             when choices.best_key = 1 then 'roll' else 'bank' end as best,
        choices.chance_best,
        choices.chance_made,
        choices.loss_pp,
        case when choices.loss_pp > getvariable('f_race_blunder_pp') then 'blunder' else 'mistake' end as severity,
        choices.player || ' at ' || choices.mover_total || ' v ' || choices.other_total
            || ', ' || choices.points || ' in the turn: '
            || case when choices.kind = 'keep'
                    then 'kept ' || dice_text(choices.kept_key) || ' of ' || dice_text(choices.roll_key)
                         || ' (best ' || dice_text(choices.best_key) || ')'
                    else choices.choice || ' with ' || choices.dice || ' dice (best '
                         || case when choices.best_key = 1 then 'roll' else 'bank' end || ')'
               end as line
    from choices
    inner join games on choices.game_no = games.game_no
)

select * from final
order by loss_pp desc, game_id, seq, kind

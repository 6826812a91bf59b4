-- Intermediate: what the winning-chance judge (pipeline.solved.judge, the Python model
-- int_race_choices) reads of each choice of int_race_choice_states: numbers only, without
-- nulls (the ruleset by id: int_race_rulesets), so millions of rows take little memory.
with states as (
    select * from int_race_choice_states
),

final as (
    select
        game_no,
        seq,
        kind = 'keep' as is_keep,
        ruleset_id,
        points,
        dice,
        coalesce(opened, false) as opened,
        coalesce(roll_key, 0) as roll_key,
        coalesce(kept_key, 0) as kept_key,
        coalesce(choice = 'roll', false) as rolled,
        coalesce(judged, false) as judged,
        mover_total,
        other_total
    from states
)

select * from final

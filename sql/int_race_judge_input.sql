-- Intermediate: every choice of the two-player games in scope (int_choice_values), as the
-- winning-chance judge (pipeline.solved.judge, the Python model int_race_choices) reads it
-- with the banked totals at each turn's start (int_race_turns, matched to the choices by
-- game, player and turn in the judge). The judge passes the state on to its output
-- (fct_race_choices) and reads, in place, the fixed-width numbers: ruleset_id, points, dice,
-- the dice keys and
--   flags   1 judged against the single turn (int_choice_values.judged: a legal keep on the
--           grid, a bank-or-roll following it), 2 opened, 4 a keep, 8 rolled
-- Games with any other number of players are not here: they keep the single-turn yardstick.
with two_player as (
    select games.game_no
    from int_games_in_scope as games
    inner join stg_game_players as seats on games.game_id = seats.game_id
    group by games.game_no
    having count(*) = 2
),

choices as (
    select game_no, seq, kind, player, turn, ruleset_id, points, dice, opened, roll_key, kept_key, choice, judged
    from int_choice_values
    where game_no in (select game_no from two_player)
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
        ruleset_id::integer as ruleset_id,
        (
            case when judged then 1 else 0 end
            + case when opened then 2 else 0 end
            + case when kind = 'keep' then 4 else 0 end
            + case when choice = 'roll' then 8 else 0 end
        )::tinyint as flags
    from choices
)

select * from final

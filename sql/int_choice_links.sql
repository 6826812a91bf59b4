-- Intermediate: each bank-or-roll of the games in scope with the roll its keep came from,
-- derived from the rows: the last roll of the same game, player and turn before the choice's
-- seq (a choice's seq is its keep's). The replays store the same link on every decision as
-- they go (from_roll_key, from_kept_key, from_points_before), which is what int_choice_values
-- reads; this derivation is their reference (tests/test_choice_links.py holds the two equal)
-- and a way to look at a choice beside its roll.
--   roll_seq                      the linked roll's seq (null: no roll of the turn before it)
--   roll_key, kept_key            its dice keys and its keep's, as rolls holds them
--   points_before                 the turn points before that roll (corrected)
--   from_roll_key, from_kept_key, from_points_before   the link as stored
with games as (
    select game_id, game_no from int_games_in_scope
),

rolls as (
    select
        games.game_no,
        rolls.player,
        rolls.turn,
        rolls.seq,
        rolls.roll_key,
        rolls.kept_key,
        rolls.points_before
    from stg_roll_states as rolls
    inner join games on rolls.game_id = games.game_id
    where player_in_scope(rolls.player)
),

decisions as (
    select
        games.game_id,
        games.game_no,
        decisions.seq,
        decisions.player,
        decisions.turn,
        decisions.from_roll_key,
        decisions.from_kept_key,
        decisions.from_points_before
    from stg_decision_states as decisions
    inner join games on decisions.game_id = games.game_id
    where player_in_scope(decisions.player)
),

final as (
    select
        decisions.game_id,
        decisions.seq,
        decisions.player,
        decisions.turn,
        rolls.seq as roll_seq,
        rolls.roll_key,
        rolls.kept_key,
        rolls.points_before,
        decisions.from_roll_key,
        decisions.from_kept_key,
        decisions.from_points_before
    from decisions
    asof left join rolls
        on decisions.game_no = rolls.game_no
        and decisions.player = rolls.player
        and decisions.turn = rolls.turn
        and decisions.seq > rolls.seq
)

select * from final

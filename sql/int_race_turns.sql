-- Intermediate: each turn of the two-player games in scope with both corrected banked totals
-- at its start, for the winning-chance yardstick (pipeline.strategy.race: a two-player model),
-- derived from the turns table. The replay stores the same totals on every roll and decision
-- (start_total, other_start_total), which is what the judge reads; this derivation is their
-- reference (tests/test_race_stats.py holds the two equal) and a table to explore.
--   mover_total  the mover's corrected total before the turn (after their previous turn, 0
--                before their first)
--   other_total  the other player's corrected total after their last turn that had ended when
--                this one started (0 before it): ended at a seq before its start, or at its
--                start itself (a lost turn end, implied by the roll that starts this turn:
--                log-format.md); at or past the target: the mover's final turn
-- Games with any other number of players are not here: they keep the single-turn yardstick.
with games as (
    select game_id, game_no, ruleset_id, ruleset from int_two_player_games
),

-- each seat of those games as a side, 0 or 1 (by name): the window and the as-of join below
-- key on a seat's number, game_no * 2 + side, rather than on the game's and the player's text
opponents as (
    select a.game_id, a.player, (a.player > b.player)::integer as side
    from stg_game_players as a
    inner join stg_game_players as b on a.game_id = b.game_id and a.player <> b.player
    where a.game_id in (select game_id from games)
),

turns as (
    select
        games.game_no,
        turns.player,
        games.game_no * 2 + opponents.side as seat,
        games.game_no * 2 + 1 - opponents.side as other_seat,
        turns.turn,
        turns.start_seq,
        turns.end_seq,
        turns.corrected_total,
        coalesce(
            lag(turns.corrected_total) over (partition by games.game_no * 2 + opponents.side order by turns.turn),
            0
        ) as mover_total
    from stg_turns as turns
    inner join games on turns.game_id = games.game_id
    inner join opponents on turns.game_id = opponents.game_id and turns.player = opponents.player
),

ended as (
    select seat, end_seq, corrected_total from turns where end_seq is not null
),

final as (
    select
        turns.game_no,
        turns.player,
        turns.turn,
        turns.mover_total,
        coalesce(ended.corrected_total, 0) as other_total
    from turns
    asof left join ended
        on turns.other_seat = ended.seat
        and turns.start_seq >= ended.end_seq
)

select * from final

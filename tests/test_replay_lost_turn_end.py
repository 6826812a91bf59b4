"""log-format.md, "a lost turn end", and the turn-order rules next to it (issue 15, 1-2).

A roll of 6 dice by another player of the game, inside an open turn whose latest event is a
keep or a roll that scored nothing, means the line that ended the open turn is missing:
replay supplies the implied end (a bank of the claimed keeps, or a farkle), the roll gets
`missing_turn_end` (player: the open turn's) unless an "any line" code applies, and the
roll starts the roller's turn. Every other event by another player inside an open turn
stays `wrong_player`, applied to the open turn. Each expected figure is worked out by hand
from the spec in the comments.
"""

from __future__ import annotations

import json

from pipeline.audit.run import audit_stream
from pipeline.audit.scoresheet import compare_sheet, parse_sheet
from pipeline.simulate import check_game
from tests.gamelog import Log, codes
from tests.gamelog import audit as engine_audit

SHORT = {"base": "standard", "target": 1000}
BUST = [2, 2, 3, 3, 4, 6]  # scores nothing under standard


def audit(log: Log):
    """The engine's replay, checked against the simulator's own independent reading of
    log-format.md (pipeline/simulate/check.py): both must find the same (seq, code)s."""
    out = engine_audit(log)
    events = [json.loads(line) for line in log.lines]
    checker = sorted((events[i]["seq"], code) for i, code in check_game(events))
    assert checker == sorted((f.seq, f.code) for f in out.findings)
    return out


def turns_of(out):
    return [
        (t.player, t.turn, t.outcome, t.end_seq, t.end_implied, t.claimed_points, t.corrected_points) for t in out.turns
    ]


# ---- a lost bank ------------------------------------------------------------------------------
def lost_bank(rules="standard") -> Log:
    """The issue's example with numbers that follow from the spec: bo keeps 1 and 5 (150),
    the bank line is lost; om rolls six dice, keeps three 1s and banks 1000."""
    log = Log(players=("bo", "om"), rules=rules)
    log.roll("bo", [1, 5, 2, 3, 4, 4]).keep("bo", [1, 5], 150)  # seq 2, 3
    log.roll("om", [1, 1, 1, 2, 3, 4])  # seq 4: reveals the lost bank
    log.keep("om", [1, 1, 1], 1000).bank("om", 1000, 1000)  # seq 5, 6
    return log


def test_lost_bank_is_supplied_and_the_revealing_roll_gets_missing_turn_end():
    out = audit(lost_bank({"base": "standard", "opening": 0}))
    assert codes(out) == [(4, "missing_turn_end")]  # one finding, not wrong_player on every event
    f = out.findings[0]
    assert (f.player, f.line, f.claimed, f.expected) == ("bo", 4, None, None)  # the open turn's player
    assert "bo's turn 1" in f.message and "bank of the 150" in f.message
    (game,) = out.games
    # implied bank: claimed 150 = the keeps' sum, total 0 + 150; corrected 150 (opening 0)
    assert game.claimed == {"bo": 150, "om": 1000}
    assert game.corrected == {"bo": 150, "om": 1000}
    assert game.winner_corrected == ["om"] and game.winner_claimed is None  # no game_end
    assert turns_of(out) == [("bo", 1, "bank", 4, True, 150, 150), ("om", 1, "bank", 6, False, 1000, 1000)]


def test_lost_bank_under_standard_opening_is_worth_0_corrected_and_gets_no_finding_of_its_own():
    # the implied bank of 150 is below the opening of 500: corrected 0, but no
    # bank_below_opening (the implied end reports no finding of its own)
    out = audit(lost_bank())
    assert codes(out) == [(4, "missing_turn_end")]
    assert out.games[0].claimed == {"bo": 150, "om": 1000}
    assert out.games[0].corrected == {"bo": 0, "om": 1000}


def test_play_goes_on_after_the_roller_and_the_implied_bank_counts_as_opened():
    log = lost_bank({"base": "standard", "opening": 0})
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 750)  # seq 7-9
    log.bust("om")  # seq 10, 11
    out = audit(log)
    assert codes(out) == [(4, "missing_turn_end")]  # bo is due after om: no wrong_player
    assert out.games[0].claimed == {"bo": 750, "om": 1000}
    assert [(t.player, t.turn) for t in out.turns] == [("bo", 1), ("om", 1), ("bo", 2), ("om", 2)]


def test_implied_bank_records_the_pending_choice_as_a_bank():
    out = audit(lost_bank({"base": "standard", "opening": 0}))
    assert [(d.seq, d.player, d.choice) for d in out.decisions] == [(3, "bo", "bank"), (5, "om", "bank")]
    assert [(r.seq, r.player, r.turn, r.kept) for r in out.rolls] == [(2, "bo", 1, (1, 5)), (4, "om", 1, (1, 1, 1))]


def test_implied_end_shows_in_the_audit_timeline():
    log = lost_bank({"base": "standard", "opening": 0})
    report = audit_stream(log.items(), trace=True)
    (timeline,) = report.timelines.values()
    steps = [(s.seq, s.player, s.type, s.claimed, s.worth, s.total, s.code) for turn in timeline for s in turn]
    assert (4, "bo", "bank (implied)", 150, 150, 150, None) in steps
    assert (4, "om", "roll", None, 1000, None, "missing_turn_end") in steps


def test_a_keep_of_all_six_then_a_six_dice_roll_by_another_player_is_a_lost_end_too():
    # the rule looks at the latest event only: a keep, then another player's 6 dice
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [2, 2, 3, 3, 6, 6]).keep("ana", [2, 2, 3, 3, 6, 6], 1500)  # hot dice
    log.roll("bo", [1, 2, 3, 4, 6, 6]).keep("bo", [1], 100).bank("bo", 100, 100)
    out = audit(log)
    assert codes(out) == [(4, "missing_turn_end")]
    assert out.games[0].claimed == {"ana": 1500, "bo": 100}


def test_implied_bank_that_went_past_a_bust_is_a_farkle_corrected():
    # ana's roll at seq 2 scores nothing, she keeps anyway (missed_farkle), then the bank
    # line is lost: claimed a bank of 100, corrected a farkle (the turn went past a bust)
    log = Log(players=("ana", "bo"), rules={"base": "standard", "opening": 0})
    log.roll("ana", BUST).keep("ana", [2, 2], 100)
    log.roll("bo", [1, 2, 3, 4, 6, 6]).keep("bo", [1], 100).bank("bo", 100, 100)
    out = audit(log)
    assert codes(out) == [(3, "missed_farkle"), (4, "missing_turn_end")]
    assert out.games[0].claimed == {"ana": 100, "bo": 100}
    assert out.games[0].corrected == {"ana": 0, "bo": 100}


# ---- a lost farkle -----------------------------------------------------------------------------
def test_lost_farkle_counts_towards_the_penalty_streak_in_both_ledgers():
    log = Log(rules={"base": "standard", "farkle_penalty": 500, "penalty_after": 3})
    log.bust("ana", total=0)  # seq 2, 3: ana's 1st farkle in a row
    log.opening_turn("bo")  # seq 4-6
    log.roll("ana", BUST)  # seq 7: ana's 2nd farkle; its farkle line is lost
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 1200)  # seq 8-10
    log.bust("ana", total=-500)  # seq 11, 12: the 3rd in a row costs 500: 0 - 500
    out = audit(log)
    assert codes(out) == [(8, "missing_turn_end")]  # no penalty_error at seq 12
    assert out.findings[0].player == "ana" and "taken as a farkle" in out.findings[0].message
    assert out.games[0].claimed == {"ana": -500, "bo": 1200}
    assert out.games[0].corrected == {"ana": -500, "bo": 1200}
    ana = [(t.turn, t.outcome, t.end_seq, t.end_implied, t.claimed_total) for t in out.turns if t.player == "ana"]
    assert ana == [(1, "farkle", 3, False, 0), (2, "farkle", 8, True, 0), (3, "farkle", 12, False, -500)]


def test_lost_farkle_that_is_the_penalised_one_takes_the_penalty_off():
    log = Log(rules={"base": "standard", "farkle_penalty": 500, "penalty_after": 2})
    log.bust("ana", total=0).bust("bo", total=0)  # seq 2-5
    log.roll("ana", BUST)  # seq 6: ana's 2nd in a row: 500 off, the line is lost
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 600)  # seq 7-9
    log.bust("ana", total=-500)  # seq 10, 11: streak started again, no penalty: stays -500
    out = audit(log)
    assert codes(out) == [(7, "missing_turn_end")]
    assert out.games[0].claimed["ana"] == -500 and out.games[0].corrected["ana"] == -500


# ---- the final round ---------------------------------------------------------------------------
def test_implied_bank_that_reaches_the_target_starts_the_final_round():
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")  # seq 2-7: 600 each
    log.roll("ana", [5, 5, 5, 2, 3, 4]).keep("ana", [5, 5, 5], 500)  # seq 8, 9: bank (1100) lost
    log.roll("bo", BUST).farkle("bo")  # seq 10, 11: bo's last turn
    log.end("ana", {"ana": 1100, "bo": 600})  # seq 12: the final round was played out
    out = audit(log)
    assert codes(out) == [(10, "missing_turn_end")]  # not wrong_winner: ana reached 1000 at seq 10
    assert out.games[0].winner_claimed == ["ana"] and out.games[0].complete


def test_after_an_implied_bank_started_the_final_round_more_play_is_after_game_over():
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [5, 5, 5, 2, 3, 4]).keep("ana", [5, 5, 5], 500)  # bank (1100) lost
    log.bust("bo")  # seq 10, 11: the final round is over
    log.roll("ana", [1, 2, 3, 4, 5, 6])  # seq 12
    assert codes(audit(log)) == [(10, "missing_turn_end"), (12, "play_after_game_over")]


def test_implied_end_that_finishes_the_final_round_makes_the_revealing_roll_play_after_game_over():
    # Decision (docs/audit.md): the roll reveals the lost end, the implied end is the final
    # round's last turn, so the roll itself comes after the game is over and is not replayed.
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)  # seq 8-10
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600)  # seq 11, 12: bank (1200) lost
    log.roll("ana", [1, 1, 1, 2, 3, 4])  # seq 13
    log.end(["ana", "bo"], {"ana": 1200, "bo": 1200})  # seq 14: a tie, both named
    out = audit(log)
    assert codes(out) == [(13, "play_after_game_over")]
    assert out.games[0].claimed == {"ana": 1200, "bo": 1200}
    assert out.games[0].winner_claimed == ["ana", "bo"] and out.games[0].winner_corrected == ["ana", "bo"]


# ---- which "any line" codes pre-empt missing_turn_end -------------------------------------------
def test_a_seq_gap_on_the_revealing_roll_is_seq_error_and_the_end_is_still_supplied():
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 5, 2, 3, 4, 4]).keep("ana", [1, 5], 150)  # seq 2, 3
    log.roll("bo", [6, 6, 6, 2, 3, 4], seq=5)  # the bank at seq 4 was lost: a gap
    log.keep("bo", [6, 6, 6], 600).bank("bo", 600, 600)
    out = audit(log)
    assert codes(out) == [(5, "seq_error")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (5, 4)
    assert out.games[0].claimed == {"ana": 150, "bo": 600}
    assert [(t.player, t.end_seq, t.end_implied) for t in out.turns] == [("ana", 5, True), ("bo", 7, False)]


def test_a_roller_who_is_not_due_is_wrong_player_and_the_end_is_still_supplied():
    # ana's bank is lost and cy (not bo, who is due) rolls: a roll that starts a turn by
    # someone whose turn it is not is wrong_player, which comes before missing_turn_end.
    log = Log(players=("ana", "bo", "cy"), rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 5, 2, 3, 4, 4]).keep("ana", [1, 5], 150)  # seq 2, 3
    log.roll("cy", [6, 6, 6, 2, 3, 4]).keep("cy", [6, 6, 6], 600).bank("cy", 600, 600)  # seq 4-6
    log.opening_turn("ana", total_before=150)  # seq 7-9: ana comes after cy
    out = audit(log)
    assert codes(out) == [(4, "wrong_player")]
    assert out.findings[0].player == "cy"
    assert out.games[0].claimed == {"ana": 750, "bo": 0, "cy": 600}
    assert [(t.player, t.outcome, t.end_implied) for t in out.turns] == [
        ("ana", "bank", True),
        ("cy", "bank", False),
        ("ana", "bank", False),
    ]


def test_a_repeated_seq_is_not_replayed_so_reveals_nothing():
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 5, 2, 3, 4, 4]).keep("ana", [1, 5], 150)  # seq 2, 3
    log.roll("bo", [6, 6, 6, 2, 3, 4], seq=3)  # repeated seq: not replayed
    log.bank("ana", 150, 150, seq=4)
    out = audit(log)
    assert codes(out) == [(3, "seq_error")]
    assert [t.end_implied for t in out.turns] == [False]


# ---- not a lost end: wrong_player, applied to the open turn ------------------------------------
def test_a_mislabelled_roll_of_fewer_than_six_dice_is_wrong_player():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)  # seq 2, 3
    log.roll("bo", [1, 1, 1, 2])  # seq 4: ana's 4 dice, logged as bo's
    log.keep("ana", [1, 1, 1], 1000).bank("ana", 1100, 1100)
    out = audit(log)
    assert codes(out) == [(4, "wrong_player")]
    assert out.findings[0].player == "bo"
    assert "inside ana's open turn" in out.findings[0].message
    assert out.games[0].claimed == {"ana": 1100, "bo": 0}
    assert out.games[0].corrected == {"ana": 1100, "bo": 0}
    assert [(t.player, t.rolls) for t in out.turns] == [("ana", 2)]


def test_a_six_dice_roll_by_another_player_after_a_roll_that_scored_is_wrong_player():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6])  # scores (the 1): not a lost end
    log.roll("bo", [6, 6, 6, 2, 3, 4])  # seq 3: wrong_player (before missing_keep)
    log.keep("ana", [6, 6, 6], 600).bank("ana", 600, 600)
    out = audit(log)
    assert codes(out) == [(3, "wrong_player")]
    assert out.games[0].claimed == {"ana": 600, "bo": 0}
    assert [(t.player, t.rolls, t.end_implied) for t in out.turns] == [("ana", 2, False)]


def test_a_six_dice_roll_by_a_name_not_in_players_is_wrong_player_not_a_lost_end():
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 100)  # seq 2, 3
    log.roll("zed", [6, 6, 6, 2, 3, 4])  # seq 4: not a player of the game (5 dice were due too)
    log.keep("ana", [6, 6, 6], 600).bank("ana", 700, 700)
    out = audit(log)
    assert codes(out) == [(4, "wrong_player")]
    f = out.findings[0]
    assert f.player == "zed"
    assert f.message == (
        "seq 4: 'zed', not a player of this game (players: ana, bo), logged a roll inside "
        "ana's open turn (from seq 2); it is taken as ana's roll"
    )
    assert out.games[0].claimed == {"ana": 700, "bo": 0}
    assert [t.player for t in out.turns] == ["ana"]


def test_mislabelled_keep_bank_and_farkle_are_wrong_player_applied_to_the_open_turn():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 600)  # seq 2-4
    log.roll("bo", BUST).farkle("ana")  # seq 5, 6
    out = audit(log)
    assert codes(out) == [(3, "wrong_player"), (4, "wrong_player"), (6, "wrong_player")]
    assert out.findings[1].message == (
        "seq 4: bo logged a bank inside ana's open turn (from seq 2); it is taken as ana's bank"
    )
    assert out.games[0].claimed == {"ana": 600, "bo": 0}
    assert [(t.player, t.outcome) for t in out.turns] == [("ana", "bank"), ("bo", "farkle")]


def test_end_of_input_still_leaves_an_open_turn_open():
    log = Log().opening_turn("ana").roll("bo", [1, 2, 3, 4, 6, 6]).keep("bo", [1], 100)
    out = audit(log)
    assert codes(out, include_warnings=True) == [(6, "missing_turn_end"), (6, "game_incomplete")]
    assert out.turns[-1].outcome == "open" and out.turns[-1].end_implied is False
    assert out.games[0].claimed["bo"] == 0


# ---- the scoresheet sees the implied end as a turn of that player ------------------------------
def test_scoresheet_matches_an_implied_end_as_that_players_turn():
    log = lost_bank({"base": "standard", "opening": 0})
    out = audit(log)
    text = "game_id,turn,player,points,total\ng1,1,om,1000,1000\n"
    rows, problems = parse_sheet(text, "s.csv")
    assert not problems
    findings = compare_sheet(rows, out.turns, ["g1"], "s.csv")
    assert [(f.code, f.seq, f.player, f.expected) for f in findings] == [("sheet_missing_turn", 4, "bo", 150)]
    good = "game_id,turn,player,points,total\ng1,1,bo,150,150\ng1,1,om,1000,1000\n"
    assert compare_sheet(parse_sheet(good, "s.csv")[0], out.turns, ["g1"], "s.csv") == []

"""One hand-written game per finding code, each giving exactly that finding at the right seq.

Expected values come from log-format.md and rules.md, worked out by hand in comments.
"""

from __future__ import annotations

from tests.gamelog import Log, audit, codes

SHORT = {"base": "standard", "target": 1000}


def clean_short_game() -> Log:
    """ana 600, bo 600, ana 1200 (target reached), bo busts (final round), ana wins."""
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    log.bust("bo")
    return log


def test_clean_short_game_has_no_findings():
    log = clean_short_game().end("ana", {"ana": 1200, "bo": 600})
    out = audit(log)
    assert codes(out, include_warnings=True) == []
    (game,) = out.games
    assert game.claimed == {"ana": 1200, "bo": 600}
    assert game.corrected == {"ana": 1200, "bo": 600}
    assert game.winner_claimed == ["ana"] and game.winner_corrected == ["ana"] and game.complete


def test_log_format_example_straight_kept_as_one_and_five_is_legal():
    log = Log()
    log.roll("ana", [1, 5, 2, 3, 4, 6]).keep("ana", [1, 5], 150)
    log.roll("ana", [6, 6, 6, 2]).keep("ana", [6, 6, 6], 600).bank("ana", 750, 750)
    log.roll("bo", [2, 2, 3, 3, 4, 6]).farkle("bo")
    out = audit(log)
    assert codes(out) == []
    assert codes(out, include_warnings=True) == [(8, "game_incomplete")]
    assert out.games[0].corrected == {"ana": 750, "bo": 0}


def test_bad_json_keeps_file_and_line_and_the_rest_is_read():
    log = Log()
    log.raw('{"game_id": "g1", "seq": 2, "type": "roll", NaN}')
    log.opening_turn("ana")
    out = audit(log)
    bad = [f for f in out.findings if f.code == "bad_json"]
    assert len(bad) == 1
    assert (bad[0].file, bad[0].line, bad[0].game_id, bad[0].seq) == ("t.jsonl", 2, None, None)
    assert codes(out) == [(None, "bad_json")]  # the turn after it replays cleanly at seq 2


def test_bad_event_uses_no_seq():
    log = Log()
    log.roll("ana", [7, 1, 1, 2, 3, 4])  # seq 2, a die of 7
    log.roll("ana", [1, 1, 1, 2, 3, 4], seq=2)  # the same seq again: not a repeat, the bad line used none
    log.keep("ana", [1, 1, 1], 1000).bank("ana", 1000, 1000)
    out = audit(log)
    assert codes(out) == [(2, "bad_event")]
    assert out.findings[0].game_id == "g1" and out.findings[0].line == 2
    assert out.games[0].corrected["ana"] == 1000


def test_unknown_game_gets_no_other_finding():
    log = Log(game_id="ghost", start=False)
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 999).bank("ana", 5, 5)
    out = audit(log)
    assert codes(out, include_warnings=True) == [(1, "unknown_game"), (2, "unknown_game"), (3, "unknown_game")]
    assert out.games == []


def test_forward_seq_gap_is_one_finding_and_counting_goes_on():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4])
    log.keep("ana", [6, 6, 6], 600, seq=5)  # 3 and 4 missing
    log.bank("ana", 600, 600)  # seq 6: fine, counting goes on from 5
    out = audit(log)
    assert codes(out) == [(5, "seq_error")]
    f = out.findings[0]
    assert (f.claimed, f.expected) == (5, 3)
    assert out.games[0].corrected["ana"] == 600  # the gapped keep was still replayed


def test_repeated_seq_is_not_replayed():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600)
    log.keep("ana", [6, 6, 6], 600, seq=3)  # duplicate line
    log.bank("ana", 600, 600, seq=4)
    out = audit(log)
    # Were the duplicate replayed, the bank would mismatch (1200 claimed by keeps).
    assert codes(out) == [(3, "seq_error")]


def test_game_start_not_seq_1_still_starts_the_game():
    log = Log(start=False)
    log.event("game_start", seq=3, players=["ana", "bo"], rules="standard")
    log.opening_turn("ana")
    out = audit(log)
    assert codes(out) == [(3, "seq_error")]
    assert out.games[0].claimed["ana"] == 600


def test_second_game_start_is_seq_error_and_not_replayed():
    log = Log()
    log.opening_turn("ana")
    log.event("game_start", players=["zed"], rules="playmonster")  # seq 5
    log.seq -= 1  # it uses up no seq (log-format.md): bo's turn is due at seq 5
    log.opening_turn("bo")  # still bo's turn in the original game
    out = audit(log)
    assert [(f.seq, f.code, f.claimed, f.expected) for f in out.findings][:1] == [(5, "seq_error", 5, 5)]
    assert codes(out) == [(5, "seq_error")]  # warnings aside: nothing else
    assert out.games[0].players == ("ana", "bo")


def test_the_event_after_a_second_game_start_that_took_a_seq_is_a_gap():
    log = Log()
    log.opening_turn("ana")
    log.event("game_start", players=["zed"], rules="playmonster")  # seq 5, used up by nothing
    log.opening_turn("bo")  # seq 6: 5 is missing
    assert codes(audit(log)) == [(5, "seq_error"), (6, "seq_error")]


def test_play_after_game_over():
    log = clean_short_game()  # seq 12 ends bo's final turn
    log.roll("ana", [1, 2, 3, 4, 5, 6])  # seq 13: the game is over
    log.end("ana", {"ana": 1200, "bo": 600})  # seq 14
    out = audit(log)
    assert codes(out) == [(13, "play_after_game_over")]


def test_roll_out_of_turn_takes_the_turn_and_play_goes_on_after_them():
    log = Log(players=("ana", "bo", "cy"))
    log.opening_turn("bo")  # ana's turn: wrong_player at seq 2, the turn is bo's
    log.opening_turn("cy")  # after bo comes cy: fine
    log.opening_turn("ana")
    out = audit(log)
    assert codes(out) == [(2, "wrong_player")]
    assert out.games[0].claimed == {"ana": 600, "bo": 600, "cy": 600}


def test_other_player_inside_an_open_turn_is_applied_to_the_turn():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("ana", 600, 600)
    out = audit(log)
    assert codes(out) == [(3, "wrong_player")]
    assert out.games[0].claimed["ana"] == 600 and out.games[0].corrected["ana"] == 600


def test_unknown_player_name_is_wrong_player():
    log = Log()
    log.roll("zed", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 600)
    out = audit(log)
    assert codes(out) == [(2, "wrong_player")]
    assert out.games[0].claimed["ana"] == 600


def test_missed_farkle_only_on_the_first_event_after_the_bust():
    log = Log()
    log.roll("ana", [2, 2, 3, 3, 4, 6])  # scores nothing
    log.roll("ana", [1, 1, 1, 2, 3, 4])  # seq 3: missed_farkle (before missing_keep)
    log.keep("ana", [1, 1, 1], 1000).bank("ana", 1000, 1000)
    out = audit(log)
    assert codes(out) == [(3, "missed_farkle")]
    assert out.games[0].claimed["ana"] == 1000
    assert out.games[0].corrected["ana"] == 0  # the turn went on past a bust: worth 0


def test_roll_again_without_keeping_is_missing_keep():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).roll("ana", [6, 6, 6, 2, 3, 4])
    log.keep("ana", [6, 6, 6], 600).bank("ana", 600, 600)
    assert codes(audit(log)) == [(3, "missing_keep")]


def test_bank_without_keep_is_missing_keep():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600)
    log.roll("ana", [1, 2, 3]).bank("ana", 600, 600)
    assert codes(audit(log)) == [(5, "missing_keep")]


def test_wrong_dice_count_and_hot_dice():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [1, 1, 1, 5])  # 4 left: right
    log.keep("ana", [1, 1, 1, 5], 1050)  # all kept: hot dice
    log.roll("ana", [1, 2, 3, 4, 6])  # should be 6 dice
    log.keep("ana", [1], 100).bank("ana", 1250, 1250)
    out = audit(log)
    assert codes(out) == [(6, "wrong_dice_count")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (5, 6)
    assert out.turns[0].hot_dice == 1


def test_kept_dice_are_a_multiset_of_the_roll():
    log = Log()
    log.roll("ana", [1, 5, 5, 2, 3, 4]).keep("ana", [1, 1, 5], 250)
    log.roll("ana", [6, 6, 6]).keep("ana", [6, 6, 6], 600).bank("ana", 850, 850)
    out = audit(log)
    assert codes(out) == [(3, "kept_not_rolled")]
    # Corrected: only the 1 and the 5 were in the roll: 150 + 600.
    assert out.games[0].corrected["ana"] == 750


def test_keep_that_does_not_follow_a_roll():
    log = Log()
    log.roll("ana", [1, 5, 5, 2, 3, 6]).keep("ana", [1], 100).keep("ana", [5, 5], 100)
    log.roll("ana", [6, 6, 6]).keep("ana", [6, 6, 6], 600).bank("ana", 800, 800)
    out = audit(log)
    assert codes(out) == [(4, "kept_not_rolled")]
    assert out.games[0].corrected["ana"] == 800  # the 5s were really in that roll


def test_non_scoring_kept():
    log = Log()
    log.roll("ana", [1, 2, 6, 6, 6, 3]).keep("ana", [1, 2, 6, 6, 6], 700).bank("ana", 700, 700)
    out = audit(log)
    assert codes(out) == [(3, "non_scoring_kept")]
    assert out.games[0].corrected["ana"] == 700  # the best split of the dice that can score


def test_cross_roll_meld_at_a_keep():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [5, 2, 3, 4]).keep("ana", [5], 400)  # 500 for three 5s minus the 100 already claimed
    log.roll("ana", [1, 1, 1]).keep("ana", [1, 1, 1], 1000).bank("ana", 1500, 1500)
    out = audit(log)
    assert codes(out) == [(5, "cross_roll_meld")]
    f = out.findings[0]
    assert (f.claimed, f.expected) == (400, 50)
    assert "5,5" in f.message and "[5,2,3,4]" in f.message and "three 5s" in f.message
    assert out.games[0].corrected["ana"] == 1150


def test_cross_roll_meld_claiming_the_whole_union():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [5, 2, 3, 4]).keep("ana", [5], 500).bank("ana", 600, 600)
    assert codes(audit(log)) == [(5, "cross_roll_meld")]


def test_cross_roll_meld_at_a_bank():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [5, 2, 3, 4]).keep("ana", [5], 50)
    log.roll("ana", [1, 1, 1]).keep("ana", [1, 1, 1], 1000)
    log.bank("ana", 1500, 1500)  # 500 for "three 5s" + 1000; the keeps claimed 1150
    out = audit(log)
    assert codes(out) == [(8, "cross_roll_meld")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (1500, 1150)


def test_cross_roll_meld_across_hot_dice():
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [1, 1, 1, 5]).keep("ana", [1, 1, 1, 5], 1050)  # hot dice
    log.roll("ana", [5, 2, 3, 4, 6, 6]).keep("ana", [5], 400)  # new roll's 5 with the old 5,5
    log.bank("ana", 1550, 1550)
    assert codes(audit(log)) == [(7, "cross_roll_meld")]


def test_running_total_claim_is_a_scoring_error_not_a_meld():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 100)
    log.roll("ana", [5, 2, 3, 4, 6]).keep("ana", [5], 150)  # running total 150, the 5 is worth 50
    log.roll("ana", [6, 6, 6, 2]).keep("ana", [6, 6, 6], 600).bank("ana", 850, 850)
    out = audit(log)
    assert codes(out) == [(5, "scoring_error")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (150, 50)


def test_bank_mismatch():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 700, 700)
    out = audit(log)
    assert codes(out) == [(4, "bank_mismatch")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (700, 600)


def test_bank_below_opening_then_opened_by_that_bank():
    log = Log()
    log.roll("ana", [1, 1, 5, 2, 3, 4]).keep("ana", [1, 1, 5], 250).bank("ana", 250, 250)
    log.opening_turn("bo")
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 100).bank("ana", 100, 350)  # opened for findings
    out = audit(log)
    assert codes(out) == [(4, "bank_below_opening")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (250, 500)
    # Corrected: neither bank reached the opening threshold, so both are worth 0.
    assert out.games[0].corrected == {"ana": 0, "bo": 600}


def test_bank_below_minimum_applies_after_opening():
    log = Log(rules={"base": "standard", "min_bank": 300})
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [1, 1, 5, 2, 3, 4]).keep("ana", [1, 1, 5], 250).bank("ana", 250, 850)
    out = audit(log)
    assert codes(out) == [(10, "bank_below_minimum")]
    assert out.games[0].corrected["ana"] == 600


def test_total_mismatch():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 700)
    out = audit(log)
    assert codes(out) == [(4, "total_mismatch")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (700, 600)
    assert out.games[0].claimed["ana"] == 700  # replay goes on from the claim


def test_false_farkle_after_a_scoring_roll_and_after_a_keep():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana")
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).farkle("bo")
    out = audit(log)
    assert codes(out) == [(3, "false_farkle"), (6, "false_farkle")]


def test_penalty_error_without_penalty_rule():
    log = Log()
    log.roll("ana", [2, 2, 3, 3, 4, 6]).farkle("ana", total=-500)
    out = audit(log)
    assert codes(out) == [(3, "penalty_error")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (-500, 0)


def test_penalty_on_every_third_farkle_and_negative_totals():
    log = Log(players=("ana",), rules={"base": "standard", "farkle_penalty": 500, "penalty_after": 3})
    for _ in range(2):
        log.bust("ana", total=0)
    log.bust("ana", total=-500)  # 3rd in a row: penalised, below zero is fine
    log.bust("ana", total=-500)  # 4th: the streak started again
    log.bust("ana")  # 5th, no total given
    log.bust("ana", total=-500)  # 6th: penalised, so -1000 expected
    out = audit(log)
    assert codes(out) == [(13, "penalty_error")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (-500, -1000)
    assert out.games[0].corrected["ana"] == -1000


def test_bank_ends_a_farkle_streak():
    log = Log(players=("ana",), rules={"base": "standard", "farkle_penalty": 500})
    log.bust("ana", total=0).bust("ana", total=0)
    log.opening_turn("ana")
    log.bust("ana", total=600)  # streak restarted: no penalty
    assert codes(audit(log)) == []


def test_final_score_mismatch_names_the_first_player_in_order():
    log = clean_short_game().end("ana", {"ana": 1200, "bo": 650})
    out = audit(log)
    assert codes(out) == [(13, "final_score_mismatch")]
    f = out.findings[0]
    assert (f.player, f.claimed, f.expected) == ("bo", 650, 600)


def test_wrong_winner():
    out = audit(clean_short_game().end("bo", {"ana": 1200, "bo": 600}))
    assert codes(out) == [(13, "wrong_winner")]


def test_game_end_before_the_target_is_wrong_winner():
    log = Log(rules=SHORT).opening_turn("ana").end("ana", {"ana": 600, "bo": 0})
    assert codes(audit(log)) == [(5, "wrong_winner")]


def test_game_end_before_the_final_round_is_played_out():
    log = Log(rules=SHORT).opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    log.end("ana", {"ana": 1200, "bo": 600})  # bo never had the last turn
    assert codes(audit(log)) == [(11, "wrong_winner")]


def test_tie_in_the_final_round_must_name_every_tied_player():
    def tied():
        log = Log(rules=SHORT).opening_turn("ana").opening_turn("bo")
        log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
        log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 1200)
        return log

    scores = {"ana": 1200, "bo": 1200}
    good = audit(tied().end(["bo", "ana"], scores))
    assert codes(good) == []
    assert sorted(good.games[0].winner_claimed) == ["ana", "bo"]
    assert sorted(good.games[0].winner_corrected) == ["ana", "bo"]
    assert codes(audit(tied().end("ana", scores))) == [(14, "wrong_winner")]
    single = Log(rules=SHORT, players=("ana", "bo")).opening_turn("ana").opening_turn("bo")
    single.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200).bust("bo")
    assert codes(audit(single.end(["ana"], {"ana": 1200, "bo": 600}))) == []  # ["ana"] == "ana"


def test_cut_off_mid_turn_gets_missing_turn_end_and_game_incomplete():
    log = Log().opening_turn("ana").roll("bo", [1, 2, 3, 4, 6, 6]).keep("bo", [1], 100)
    out = audit(log)
    assert codes(out, include_warnings=True) == [(6, "missing_turn_end"), (6, "game_incomplete")]
    assert [f.severity for f in out.findings] == ["error", "warning"]
    assert out.findings[0].player == "bo" and out.findings[0].line == 6
    assert out.games[0].complete is False


def test_interleaved_games_are_replayed_separately():
    a, b = Log(game_id="a"), Log(game_id="b")
    a.opening_turn("ana")
    b.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 500).bank("ana", 500, 500)
    lines = []
    for x, y in zip(a.lines, b.lines):
        lines += [x, y]
    mixed = Log(start=False)
    mixed.lines = lines
    out = audit(mixed)
    assert [(f.game_id, f.seq, f.code) for f in out.findings if f.severity == "error"] == [("b", 3, "scoring_error")]


# ---- precedence: an event that breaks two rules gets the first code of its row ----------


def test_precedence_seq_error_beats_scoring_error():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 999, seq=4).bank("ana", 999, 999)
    assert codes(audit(log)) == [(4, "seq_error")]


def test_precedence_wrong_player_beats_scoring_error():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 999).bank("ana", 999, 999)
    assert codes(audit(log)) == [(3, "wrong_player")]


def test_precedence_kept_not_rolled_beats_scoring_error():
    log = Log()
    log.roll("ana", [6, 6, 1, 2, 3, 4]).keep("ana", [6, 6, 6], 999).bank("ana", 999, 999)
    assert codes(audit(log)) == [(3, "kept_not_rolled")]


def test_precedence_bank_mismatch_beats_opening_and_total():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 100).bank("ana", 200, 999)
    assert codes(audit(log)) == [(4, "bank_mismatch")]


def test_precedence_opening_beats_total_mismatch():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 100).bank("ana", 100, 999)
    assert codes(audit(log)) == [(4, "bank_below_opening")]


def test_precedence_missed_farkle_beats_non_scoring_kept():
    log = Log()
    log.roll("ana", [2, 2, 3, 3, 4, 6]).keep("ana", [2, 2], 100).bank("ana", 100, 100)
    out = audit(log)
    assert codes(out) == [(3, "missed_farkle"), (4, "bank_below_opening")]


def test_precedence_final_score_mismatch_beats_wrong_winner():
    out = audit(clean_short_game().end("bo", {"ana": 100, "bo": 600}))
    assert codes(out) == [(13, "final_score_mismatch")]


# ---- corrected scores -------------------------------------------------------------


def test_corrected_winner_differs_when_a_meld_decided_the_game():
    log = Log(rules={"base": "standard", "target": 1100})
    log.roll("ana", [1, 1, 1, 2, 3, 4]).keep("ana", [1, 1, 1], 1000).bank("ana", 1000, 1000)
    log.roll("bo", [5, 5, 2, 3, 4, 6]).keep("bo", [5, 5], 100)
    log.roll("bo", [5, 2, 3, 4]).keep("bo", [5], 400)  # seq 8: three 5s across two rolls
    log.roll("bo", [6, 6, 6]).keep("bo", [6, 6, 6], 600).bank("bo", 1100, 1100)
    log.bust("ana")
    log.end("bo", {"ana": 1000, "bo": 1100})
    out = audit(log)
    assert codes(out) == [(8, "cross_roll_meld")]
    (game,) = out.games
    assert game.claimed == {"ana": 1000, "bo": 1100} and game.winner_claimed == ["bo"]
    assert game.corrected == {"ana": 1000, "bo": 750} and game.winner_corrected == ["ana"]


def test_corrected_opening_needs_a_corrected_bank_over_the_threshold():
    log = Log()
    # Claimed 600 (scoring error), worth 300: below the opening, so worth 0, not opened.
    log.roll("ana", [3, 3, 3, 2, 4, 6]).keep("ana", [3, 3, 3], 600).bank("ana", 600, 600)
    log.bust("bo")
    # Worth 400 but still not opened (corrected), so 0 again; then a 500 opens.
    log.roll("ana", [4, 4, 4, 2, 3, 6]).keep("ana", [4, 4, 4], 400).bank("ana", 400, 1000)
    log.bust("bo")
    log.roll("ana", [5, 5, 5, 2, 3, 6]).keep("ana", [5, 5, 5], 500).bank("ana", 500, 1500)
    out = audit(log)
    assert codes(out) == [(3, "scoring_error")]
    assert out.games[0].corrected["ana"] == 500
    assert [t.corrected_points for t in out.turns if t.player == "ana"] == [0, 0, 500]


def test_turn_records_count_turns_per_player():
    log = Log().opening_turn("ana").bust("bo").opening_turn("ana", total_before=600)
    out = audit(log)
    assert [(t.player, t.turn, t.outcome, t.claimed_total) for t in out.turns] == [
        ("ana", 1, "bank", 600),
        ("bo", 1, "farkle", 0),
        ("ana", 2, "bank", 1200),
    ]


def test_meld_with_an_earlier_keep_that_had_a_non_scoring_die():
    """value(X) counts the dice that can score, so a sloppy keep can still be melded."""
    log = Log()
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5, 2], 100)  # non_scoring_kept, value 100
    log.roll("ana", [5, 2, 3]).keep("ana", [5], 400)  # three 5s 500 - 100 claimed before
    log.roll("ana", [6, 6]).bank("ana", 500, 500)
    out = audit(log)
    assert codes(out)[:2] == [(3, "non_scoring_kept"), (5, "cross_roll_meld")]


def test_decision_and_roll_records_carry_corrected_points_for_judging():
    log = Log()
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 150)  # claimed 150, worth 100
    log.roll("ana", [5, 5, 5, 2, 3]).keep("ana", [5, 5, 5], 500).bank("ana", 650, 650)
    out = audit(log)
    assert [(d.turn_points, d.turn_points_corrected, d.choice) for d in out.decisions] == [
        (150, 100, "roll"),
        (650, 600, "bank"),
    ]
    assert [(r.points_before, r.opened) for r in out.rolls] == [(0, False), (100, False)]


def test_findings_carry_the_event_timestamp_but_not_in_the_audit_json():
    log = Log()
    log.roll("ana", [6, 6, 6, 2, 3, 4], ts="2026-03-01T10:00:00Z")
    log.keep("ana", [6, 6, 6], 700, ts="2026-03-01T10:00:05Z")
    out = audit(log)
    f, open_turn, incomplete = out.findings
    assert (f.code, f.ts) == ("scoring_error", "2026-03-01T10:00:05Z")
    assert open_turn.ts == incomplete.ts == "2026-03-01T10:00:05Z"  # end of input: the last event read
    assert "ts" not in f.to_dict()

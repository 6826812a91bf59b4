"""One claimed result per game (issue 15, 4; log-format.md "game over" and "Corrected scores").

winner_claimed is the first game_end's winner as a list, null for a game without game_end;
a game_end after the first is play_after_game_over; winners are lists in every output.
"""

from __future__ import annotations

import csv
import io
import json

from typer.testing import CliRunner

from pipeline.cli.main import app
from tests.gamelog import Log, audit, codes

SHORT = {"base": "standard", "target": 1000}


def finished() -> Log:
    """ana 600, bo 600, ana 1200 (target), bo busts: ana wins 1200 to 600. Seq 2-12."""
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    return log.bust("bo")


def test_a_second_game_end_is_play_after_game_over_and_the_first_one_is_the_claim():
    log = finished().end("ana", {"ana": 1200, "bo": 600}).end("bo", {"ana": 0, "bo": 600})
    out = audit(log)
    assert codes(out) == [(14, "play_after_game_over")]
    (game,) = out.games
    assert game.winner_claimed == ["ana"]
    assert game.claimed == {"ana": 1200, "bo": 600}  # the first game_end's scores


def test_a_game_without_game_end_has_no_claimed_winner_however_far_ahead_someone_is():
    out = audit(finished())
    (game,) = out.games
    assert game.claimed == {"ana": 1200, "bo": 600}  # the last claimed totals
    assert game.winner_claimed is None
    assert game.winner_corrected == ["ana"]
    assert game.complete is False


def test_a_single_name_is_a_one_name_list_and_a_tie_keeps_every_name():
    out = audit(finished().end("ana", {"ana": 1200, "bo": 600}))
    assert out.games[0].winner_claimed == ["ana"] and out.games[0].winner_corrected == ["ana"]
    tie = Log(rules=SHORT).opening_turn("ana").opening_turn("bo")
    tie.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    tie.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 1200)
    out = audit(tie.end(["bo", "ana"], {"ana": 1200, "bo": 1200}))
    assert codes(out) == []
    assert out.games[0].winner_claimed == ["bo", "ana"]  # as the game_end names them
    assert out.games[0].winner_corrected == ["ana", "bo"]  # in players order


def test_winners_are_lists_or_null_in_json_and_read_right_in_text(tmp_path):
    done = finished().end("ana", {"ana": 1200, "bo": 600})
    open_game = Log("g2", rules=SHORT).opening_turn("ana")
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(done.lines + open_game.lines) + "\n")
    result = CliRunner().invoke(app, ["audit", str(path), "--format", "json"])
    games = {g["game_id"]: g for g in json.loads(result.output)["games"]}
    assert (games["g1"]["winner_claimed"], games["g1"]["winner_corrected"]) == (["ana"], ["ana"])
    assert (games["g2"]["winner_claimed"], games["g2"]["winner_corrected"]) == (None, ["ana"])
    text = CliRunner().invoke(app, ["audit", str(path)]).output
    # a game whose log ends early names no winner (issue 13): who leads is said as a lead
    assert "no winner: the log ends before the game does (no game_end)" in text
    assert "leading by the dice: ana" in text and "winner by the dice" not in text.split("game g2", 1)[1]
    assert "(tie)" not in text


def test_csv_output_is_unchanged_by_the_winner_lists(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(finished().lines) + "\n")
    rows = list(csv.DictReader(io.StringIO(CliRunner().invoke(app, ["audit", str(path), "--format", "csv"]).output)))
    assert [r["code"] for r in rows] == ["game_incomplete"]

"""Scoresheet rows against the corrected replay: one test per sheet_* code."""

from __future__ import annotations

from pipeline.audit.run import audit_stream
from pipeline.audit.scoresheet import parse_sheet
from tests.gamelog import Log

HEADER = "game_id,turn,player,points,total\n"


def disputed_game() -> Log:
    """ana 600; bo claims 1100 with a cross-roll meld (worth 750); ana busts; bo 600."""
    log = Log()
    log.opening_turn("ana")  # seq 2-4
    log.roll("bo", [5, 5, 2, 3, 4, 6]).keep("bo", [5, 5], 100)
    log.roll("bo", [5, 2, 3, 4]).keep("bo", [5], 400)
    log.roll("bo", [6, 6, 6]).keep("bo", [6, 6, 6], 600).bank("bo", 1100, 1100)  # seq 11
    log.bust("ana")  # seq 12-13
    log.opening_turn("bo", total_before=1100)  # seq 14-16
    return log


def sheet_findings(sheet: str, log: Log | None = None):
    report = audit_stream((log or disputed_game()).items(), sheet=("sheet.csv", HEADER + sheet))
    return [
        (f.line, f.seq, f.player, f.code, f.claimed, f.expected) for f in report.findings if f.code.startswith("sheet_")
    ], report


def test_a_sheet_that_matches_the_dice_has_no_findings():
    rows = "g1,1,ana,600,600\ng1,1,bo,750,750\ng1,2,ana,0,600\ng1,2,bo,600,1350\n"
    found, report = sheet_findings(rows)
    assert found == [] and report.sheet_problems == []


def test_copied_claim_gives_points_and_every_later_total():
    rows = "g1,1,ana,600,600\ng1,1,bo,1100,1100\ng1,2,ana,0,600\ng1,2,bo,600,1700\n"
    found, _ = sheet_findings(rows)
    assert found == [
        (3, 11, "bo", "sheet_points_mismatch", 1100, 750),
        (3, 11, "bo", "sheet_total_mismatch", 1100, 750),
        (5, 16, "bo", "sheet_total_mismatch", 1700, 1350),
    ]


def test_extra_rows_duplicate_unplayed_turn_and_unknown_game():
    rows = (
        "g1,1,ana,600,600\ng1,1,ana,600,600\ng1,1,bo,750,750\ng1,2,ana,0,600\ng1,2,bo,600,1350\n"
        "g1,3,ana,0,600\nzz,1,ana,0,0\n"
    )
    found, _ = sheet_findings(rows)
    assert [(line, code) for line, _, _, code, _, _ in found] == [
        (3, "sheet_extra_turn"),
        (7, "sheet_extra_turn"),
        (8, "sheet_extra_turn"),
    ]


def test_missing_turn_has_no_line_and_the_seq_that_ended_it():
    rows = "g1,1,ana,600,600\ng1,2,ana,0,600\ng1,2,bo,600,1350\n"
    found, _ = sheet_findings(rows)
    assert found == [(None, 11, "bo", "sheet_missing_turn", None, 750)]


def test_farkle_row_has_zero_points_and_the_total_after_penalty():
    log = Log(players=("ana",), rules={"base": "standard", "farkle_penalty": 300, "penalty_after": 2})
    log.bust("ana", total=0).bust("ana", total=-300)
    found, _ = sheet_findings("g1,1,ana,0,0\ng1,2,ana,0,0\n", log)
    assert found == [(3, 5, "ana", "sheet_total_mismatch", 0, -300)]


def test_unreadable_rows_are_reported_with_their_line():
    _, report = sheet_findings("g1,1,ana,six hundred,600\ng1,1,bo\n")
    assert [(p.line, p.reason.split(" ")[0]) for p in report.sheet_problems] == [(2, "points"), (3, "expected")]


# ---- found by fuzzing (tests/fuzz): rows that are not CSV are problems, not crashes ----------
def test_a_field_over_csvs_size_limit_is_a_problem_and_the_next_rows_are_read():
    text = "game_id,turn,player,points,total\ng1,1,ana," + "1" * 200_000 + ",600\ng1,1,bo,0,0\n"
    rows, problems = parse_sheet(text, "s.csv")
    assert [(p.line, p.reason) for p in problems] == [(2, "not a CSV row: field larger than field limit (131072)")]
    assert [(r.line, r.player) for r in rows] == [(3, "bo")]


def test_a_bare_carriage_return_inside_a_field_does_not_crash_the_parser():
    text = "game_id,turn,player,points,total\ns1-\r\rg1,1,ana,0,0\ng1,1,bo,0,0\n"
    rows, problems = parse_sheet(text, "s.csv")
    assert ("g1", "bo") in [(r.game_id, r.player) for r in rows]
    assert all(p.line >= 2 for p in problems)


def test_a_sheet_of_thousands_of_unknown_games_names_a_few_and_counts_the_rest(tmp_path):
    """A sheet naming a million games the logs do not hold printed one 8.9 MB line."""
    from tests.dataset_helpers import ROOT, farkle, no_traceback

    sheet = tmp_path / "sheet.csv"
    sheet.write_text("game_id,turn,player,points,total\n" + "".join(f"zz{i},1,ana,300,300\n" for i in range(2_000)))
    proc = farkle("audit", ROOT / "sample_logs" / "standard.jsonl", "--scoresheet", sheet)
    err = no_traceback(proc)
    assert proc.returncode == 2
    (line,) = [line for line in err.splitlines() if "none of its games" in line]
    assert "(zz0, zz1, zz2, zz3, zz4 and 1,995 more)" in line and len(line) < 200 + len(str(sheet))
    out = proc.stdout.decode()
    named = [line for line in out.splitlines() if "is not in these logs: its 1 row" in line]
    assert len(named) == 10
    assert "1,990 more of its games are not in these logs: their 1,990 rows were not checked" in out

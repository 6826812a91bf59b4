"""`farkle-logs audit` end to end: inputs, formats, exit codes, golden outputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from tests.gamelog import Log

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"
SHORT = {"base": "standard", "target": 1000}


def run(*args, input=None):
    return runner.invoke(app, ["audit", *map(str, args)], input=input, env={"COLUMNS": "80"})


def flat(text: str) -> str:
    """Text output with its line wrapping undone (it wraps to the terminal's width)."""
    return " ".join(text.split())


def full_game() -> Log:
    log = Log(rules=SHORT)
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    log.bust("bo")
    return log.end("ana", {"ana": 1200, "bo": 600})


def write(path: Path, log: Log, lines=None) -> Path:
    text = "\n".join(log.lines if lines is None else lines) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_clean_game_exits_0_and_says_so(tmp_path):
    result = run(write(tmp_path / "a.jsonl", full_game()))
    assert result.exit_code == 0, result.output
    assert "1 game, 13 events: 1 clean, 0 with findings; 0 errors, 0 warnings" in result.output


def test_game_split_across_a_plain_and_a_gzip_file_is_replayed_whole(tmp_path):
    log = full_game()
    first = write(tmp_path / "part1.jsonl", log, log.lines[:6])
    second = write(tmp_path / "part2.jsonl.gz", log, log.lines[6:])
    result = run(first, second, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["findings"] == []
    assert payload["games"] == [
        {
            "game_id": "g1",
            "claimed": {"ana": 1200, "bo": 600},
            "corrected": {"ana": 1200, "bo": 600},
            "winner_claimed": ["ana"],
            "winner_corrected": ["ana"],
            "complete": True,
            "ended": "finished",
        }
    ]
    # In the wrong order the second part comes first: unknown game, then a seq gap is not
    # possible since those events were never replayed; the game misses its middle.
    reversed_order = json.loads(run(second, first, "--format", "json").output)
    assert {f["code"] for f in reversed_order["findings"]} >= {"unknown_game"}


def test_directory_is_read_in_name_order(tmp_path):
    log = full_game()
    (tmp_path / "logs").mkdir()
    write(tmp_path / "logs" / "b.jsonl", log, log.lines[6:])
    write(tmp_path / "logs" / "a.jsonl", log, log.lines[:6])
    assert run(tmp_path / "logs").exit_code == 0


def test_stdin_and_findings_exit_1_with_json_fields(tmp_path):
    log = Log().opening_turn("ana")
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 700).bank("bo", 700, 700)
    result = run("-", "--format", "json", input="\n".join(log.lines) + "\n")
    assert result.exit_code == 1
    findings = json.loads(result.output)["findings"]
    assert [f["code"] for f in findings] == ["scoring_error", "game_incomplete"]
    assert list(findings[0]) == [
        "game_id",
        "seq",
        "file",
        "line",
        "player",
        "code",
        "severity",
        "message",
        "claimed",
        "expected",
    ]
    assert findings[0]["file"] == "<stdin>" and findings[0]["line"] == 6


def test_warnings_alone_exit_0(tmp_path):
    log = Log().opening_turn("ana")  # no game_end: game_incomplete is a warning
    result = run(write(tmp_path / "a.jsonl", log), "--format", "jsonl")
    assert result.exit_code == 0
    assert [json.loads(line)["code"] for line in result.output.splitlines()] == ["game_incomplete"]


def test_csv_format_has_the_finding_fields_as_header(tmp_path):
    log = Log().roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana")
    result = run(write(tmp_path / "a.jsonl", log), "--format", "csv")
    lines = result.output.splitlines()
    assert lines[0] == "game_id,seq,file,line,player,code,severity,message,claimed,expected"
    assert lines[1].startswith("g1,3,") and ",false_farkle,error," in lines[1]


def test_game_filter_keeps_only_the_named_games(tmp_path):
    a, b = Log(game_id="a").opening_turn("ana"), Log(game_id="b")
    b.roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana")
    path = write(tmp_path / "ab.jsonl", a, a.lines + b.lines)
    payload = json.loads(run(path, "--game", "a", "--format", "json").output)
    assert [g["game_id"] for g in payload["games"]] == ["a"]
    assert {f["game_id"] for f in payload["findings"]} == {"a"}


def test_rules_option_applies_only_when_game_start_has_none(tmp_path):
    log = Log(rules=None)
    log.roll("ana", [1, 1, 1, 2, 3, 4]).keep("ana", [1, 1, 1], 300).bank("ana", 300, 300)
    path = write(tmp_path / "a.jsonl", log)
    assert "scoring_error" in run(path, "--format", "jsonl").output
    as_playmonster = run(path, "--format", "jsonl", "--rules", "playmonster").output
    assert "scoring_error" not in as_playmonster and "bank_below_opening" in as_playmonster


def test_bad_usage_exits_2(tmp_path):
    assert run(tmp_path / "missing.jsonl").exit_code == 2
    assert run(write(tmp_path / "a.jsonl", full_game()), "--rules", "nosuchrules").exit_code == 2
    assert run(write(tmp_path / "b.jsonl", full_game()), "--format", "xml").exit_code == 2


def test_missing_file_is_reported_and_the_rest_still_audited(tmp_path):
    good = write(tmp_path / "a.jsonl", Log().roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana"))
    result = run(tmp_path / "nope.jsonl", good, "--format", "jsonl")
    assert result.exit_code == 2
    assert "false_farkle" in result.stdout


def test_truncated_gzip_is_reported_and_the_rest_audited(tmp_path):
    log = full_game()
    blob = gzip.compress(("\n".join(log.lines) + "\n").encode())
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(blob[: len(blob) // 2])
    other = write(tmp_path / "other.jsonl", Log(game_id="x").roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana"))
    result = run(broken, other, "--format", "jsonl")
    assert result.exit_code == 1
    assert "cut.jsonl.gz" in result.stderr
    codes = [json.loads(line)["code"] for line in result.stdout.splitlines()]
    assert "false_farkle" in codes  # the second file was still audited


def test_scoresheet_option(tmp_path):
    log = Log().opening_turn("ana")
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("game_id,turn,player,points,total\ng1,1,ana,650,650\n")
    result = run(write(tmp_path / "a.jsonl", log), "--scoresheet", sheet, "--format", "jsonl")
    assert result.exit_code == 1
    codes = [json.loads(line)["code"] for line in result.stdout.splitlines()]
    assert codes == ["game_incomplete", "sheet_points_mismatch", "sheet_total_mismatch"]
    assert run(write(tmp_path / "b.jsonl", log), "--scoresheet", tmp_path / "none.csv").exit_code == 2


def test_text_output_shows_timeline_and_result(tmp_path):
    log = Log(rules=SHORT)
    log.roll("ana", [5, 5, 2, 3, 4, 6]).keep("ana", [5, 5], 100)
    log.roll("ana", [5, 2, 3, 4]).keep("ana", [5], 400)
    log.roll("ana", [6, 6, 6]).keep("ana", [6, 6, 6], 600).bank("ana", 1100, 1100)
    log.bust("bo").end("ana", {"ana": 1100, "bo": 0})
    result = run(write(tmp_path / "a.jsonl", log))
    assert result.exit_code == 1
    out = result.output
    assert "kept 5 from the roll [5,2,3,4] and counted it with the 5,5 kept at seq 3" in flat(out)
    assert "5 2 3 4" in out and "cross_roll_meld" in out
    # target 1000: ana claimed 1100, but her dice were worth 750, so by the dice nobody has
    # won yet, and the text must not call ana the winner "by the dice" of a finished game
    assert "  winner claimed: ana\n" in out
    assert "by the dice nobody reached the target of 1,000: the game was not over (ana leads with 750)" in flat(out)
    assert "winner by the dice" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.jsonl")))
def test_golden(name):
    log = GOLDEN / f"{name}.jsonl"
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    args = [str(log), "--format", "json"]
    sheet = GOLDEN / f"{name}.sheet.csv"
    if sheet.exists():
        args += ["--scoresheet", str(sheet)]
    result = run(*args)
    payload = json.loads(result.output.replace(str(GOLDEN) + "/", ""))
    assert payload == expected

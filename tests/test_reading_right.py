"""What a referee reads in the first minutes says what it means (issue 24, "Reading it right"):
results of clean games, no summary of nothing, one hint for a sheet numbered the wrong way,
spreadsheet exports read as they come, plurals, rates only where they mean something, a
did-you-mean for a ruleset typo, plain tables for `rules`, docs that say what happens.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.cli.text import RATE_MIN_EVENTS, RATE_MIN_SECONDS, plural, rate

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
DISPUTED = SAMPLES / "disputed_game.jsonl"
SHEET = SAMPLES / "disputed_game.scoresheet.csv"
runner = CliRunner()


def cli(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "100"})


def flat(text: str) -> str:
    return " ".join(text.split())


# ---- audit ---------------------------------------------------------------------------------
def test_a_clean_game_asked_for_by_name_shows_its_result():
    result = cli("audit", SAMPLES / "standard.jsonl", "--game", "s517-g000000")
    assert result.exit_code == 0
    text = flat(result.stdout)
    assert "game s517-g000000 [standard]: clean, no findings" in text
    assert "chen 11800 11800" in text and "quin 11800 11800" in text  # the final totals
    assert "winner by the dice: chen & quin (tie)" in text
    assert "1 game, 203 events: 1 clean" in text


def test_a_season_audit_does_not_list_every_clean_game():
    result = cli("audit", SAMPLES / "standard.jsonl")
    assert result.exit_code == 0
    assert "clean, no findings" not in result.stdout and "result (final totals)" not in result.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_game_that_is_not_there_gets_the_error_alone(fmt):
    result = cli("audit", SAMPLES / "standard.jsonl", "--game", "club-01", "-f", fmt)
    assert result.exit_code == 2
    assert result.stdout == ""  # no "0 games, 0 events" summary before the error
    assert result.stderr.strip() == "error: no game 'club-01' in these logs"
    typo = cli("audit", SAMPLES / "standard.jsonl", "--game", "s517-g00000")
    assert typo.stdout == "" and "(did you mean s517-g000000?)" in typo.stderr


# ---- scoresheets ---------------------------------------------------------------------------
def sheet_rows() -> list[list[str]]:
    with open(SHEET, newline="") as fh:
        return list(csv.reader(fh))


def write_sheet(path: Path, rows: list[list[str]], delimiter: str = ",") -> Path:
    with open(path, "w", newline="") as fh:
        csv.writer(fh, delimiter=delimiter).writerows(rows)
    return path


@pytest.mark.parametrize(
    "header, delimiter",
    [
        (["Game_ID", "Turn", "Player", "Points", "Total"], ","),
        (["GAME_ID", " turn", "player ", "Points", "TOTAL"], ","),
        (["game_id", "turn", "player", "points", "total"], ";"),
        (["Game_id", "Turn", "Player", "Points", "Total"], ";"),
    ],
)
def test_spreadsheet_exports_are_read_as_they_come(tmp_path, header, delimiter):
    rows = sheet_rows()
    sheet = write_sheet(tmp_path / "export.csv", [header, *rows[1:]], delimiter)
    result = cli("audit", DISPUTED, "--scoresheet", sheet)
    assert result.exit_code == 1, result.stderr  # the log's own cross_roll_meld
    assert f"scoresheet {sheet}: agrees with the replay; 45 rows of 1 game checked" in flat(result.stdout)


def test_a_header_with_other_columns_is_still_refused(tmp_path):
    sheet = write_sheet(tmp_path / "s.csv", [["game", "turn", "player", "points", "total"], *sheet_rows()[1:]])
    result = cli("audit", DISPUTED, "--scoresheet", sheet)
    assert result.exit_code == 2
    assert "header is 'game,turn,player,points,total', expected game_id,turn,player,points,total" in flat(result.stderr)


def test_a_sheet_numbering_turns_across_the_game_gets_one_hint(tmp_path):
    rows = sheet_rows()  # one row per turn, in the order played
    across = [rows[0], *([r[0], str(i), *r[2:]] for i, r in enumerate(rows[1:], start=1))]
    sheet = write_sheet(tmp_path / "across.csv", across)
    result = cli("audit", DISPUTED, "--scoresheet", sheet)
    assert result.exit_code == 1
    out = flat(result.stdout)
    hint = (
        f"hint: {sheet}: game s814-g000000: the turn column looks numbered across the game (1, 2, 3, ... over "
        "every player's turns); it counts each player's own turns"
    )
    assert out.count("hint:") == 1 and hint in out
    verdict = json.loads(cli("audit", DISPUTED, "--scoresheet", sheet, "-f", "json").stdout)["scoresheets"][0]
    assert len(verdict["hints"]) == 1 and verdict["differences"] > 6
    # the right numbering, and a sheet with one copied-wrong score, get no hint
    assert "hint:" not in cli("audit", DISPUTED, "--scoresheet", SHEET).stdout
    wrong = [row[:] for row in rows]
    wrong[5][3] = str(int(wrong[5][3]) + 50)
    assert "hint:" not in cli("audit", DISPUTED, "--scoresheet", write_sheet(tmp_path / "w.csv", wrong)).stdout


def test_docs_define_the_turn_column_and_the_exports_read():
    audit_md = (ROOT / "docs" / "audit.md").read_text()
    section = audit_md[audit_md.index("## Scoresheets") :]
    section = section[: section.index("\n## ", 3)]
    assert "**the player's own turn count**" in section
    assert "`;`" in section and "case" in section and "hint:" in section


# ---- the sample logs' README says what happens ----------------------------------------------
def test_sample_logs_readme_says_what_a_directory_audit_does():
    result = cli("audit", SAMPLES)
    assert result.exit_code == 1
    notes = flat(result.stderr).split("note: ")[1:]
    assert len(notes) == 1 and "README.md, disputed_game.scoresheet.csv" in notes[0]
    out = flat(result.stdout)  # exactly the README's findings: none from the README or the sheet
    assert "4 errors" in out and "bad_event 2" in out and "bad_json 1" in out and "cross_roll_meld 1" in out
    readme = flat((SAMPLES / "README.md").read_text())
    assert "come out as `bad_json`" not in readme
    assert "2 files not read, not named like logs" in readme and "README.md, disputed_game.scoresheet.csv" in readme


# ---- ingest: nothing new, notes first, plurals, rates ---------------------------------------
def test_an_ingest_where_every_file_was_skipped_says_nothing_was_added(tmp_path):
    first = cli("ingest", SAMPLES / "standard.jsonl", "--out", tmp_path / "ds")
    assert first.exit_code == 0 and first.stdout.startswith("ingested into")
    again = cli("ingest", SAMPLES / "standard.jsonl", "--out", tmp_path / "ds")
    assert again.exit_code == 0
    assert (
        flat(again.stdout)
        == f"nothing new to ingest: 1 file skipped (content ingested before); {tmp_path / 'ds'} is unchanged (snapshot 1)"
    )
    assert "events/s" not in again.stdout and "ingested into" not in again.stdout


def test_the_notes_come_before_the_error_that_points_at_them(tmp_path):
    result = cli("ingest", SAMPLES / "README.md", "--out", tmp_path / "ds")
    assert result.exit_code == 2
    text = flat(result.stderr)
    assert text.startswith("note: ") and "this looks like plain text" in text.split("error:")[0]
    assert "every file named was skipped (see the notes above)" in text.split("error:")[1]


def test_one_of_a_thing_is_said_in_the_singular(tmp_path):
    result = cli("ingest", SAMPLES / "split_game-1.jsonl", "--out", tmp_path / "ds")
    assert result.exit_code == 1
    assert "(1 error: 0 for the rejects, 1 from replay; 1 warning)" in result.stdout
    assert not re.search(r"(?<![\d,.])1 (errors|warnings|games|files|findings)\b", result.stdout)
    assert [plural(n, "game") for n in (0, 1, 2, 1500)] == ["0 games", "1 game", "2 games", "1,500 games"]
    assert plural(1, "die", "dice") == "1 die" and plural(3, "die", "dice") == "3 dice"


def test_a_rate_is_said_only_when_it_measures_work(tmp_path):
    assert rate(RATE_MIN_EVENTS * 4, RATE_MIN_SECONDS * 2) == f", {RATE_MIN_EVENTS * 2:,} events/s"
    assert rate(259, 5.9) == ""  # a few hundred events: the time is start-up
    assert rate(10**6, 0.5) == ""  # under a second: too short to time with a wall clock
    result = cli("ingest", SAMPLES / "bad_lines.jsonl", "--out", tmp_path / "ds")
    assert re.search(r"^time\s+[\d.]+\s+s$", result.stdout, re.M) and "events/s" not in result.stdout


# ---- rules ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "typo, closest", [("standrad", "standard"), ("Standard", "standard"), ("playmonstr", "playmonster")]
)
def test_a_ruleset_typo_gets_the_closest_name(typo, closest):
    result = cli("score", "1", "5", "--rules", typo)
    assert result.exit_code == 2
    assert f"error: unknown ruleset '{typo}' (did you mean {closest}?)" in result.stderr
    knob = cli("score", "1", "5", "--rules", '{"base": "standard", "openning": 300}')
    assert "unknown knob 'openning' (did you mean opening?)" in knob.stderr


def test_rules_tables_are_plain_like_every_other_command():
    for args in (["rules", "list"], ["rules", "show", "playmonster"]):
        result = cli(*args)
        assert result.exit_code == 0
        assert not set("┏┃┡│└━┳╇") & set(result.stdout), result.stdout[:400]  # no boxes
        assert '"' not in result.stdout.split("Custom:")[0]  # no JSON-quoted names
    shown = cli("rules", "show", "playmonster").stdout
    assert re.search(r"^base\s+playmonster$", shown, re.M) and re.search(r"^n_of_a_kind\s+flat$", shown, re.M)
    assert re.search(r"^four_kind\s+-$", shown, re.M) and re.search(r"^split_kinds\s+true$", shown, re.M)

"""A new user's first hour (issue 13): every mistake gets one clear answer and the right
exit code, nothing floods, and no name from a log can drive the terminal (issue 11 item 9).

Each test states what the user does and what they must see. Text output is checked at 80
columns (COLUMNS=80), as the issue was tried on an 80-column terminal.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest import ingest
from tests.gamelog import Log

runner = CliRunner()
SHORT = {"base": "standard", "target": 1000}
SHEET_HEADER = "game_id,turn,player,points,total\n"


def cli(*args, input=None, columns=80):
    env = {"COLUMNS": str(columns)} if columns else {}
    return runner.invoke(app, [str(a) for a in args], input=input, env=env)


def flat(text: str) -> str:
    return " ".join(text.split())


def fits(text: str, width: int = 80) -> bool:
    return all(len(line) <= width for line in text.splitlines()) and "…" not in text


def finished_game(game_id="g1", players=("ana", "bo")) -> Log:
    """Both open with 600; ana banks 600 more and reaches the target of 1000; bo farkles."""
    a, b = players
    log = Log(game_id=game_id, players=players, rules=SHORT)
    log.opening_turn(a).opening_turn(b)
    log.roll(a, [6, 6, 6, 2, 3, 4]).keep(a, [6, 6, 6], 600).bank(a, 600, 1200)
    log.roll(b, [2, 2, 3, 3, 4, 6]).farkle(b)
    return log.end(a, {a: 1200, b: 600})


def write(path: Path, *logs: Log) -> Path:
    path.write_text("".join("\n".join(log.lines) + "\n" for log in logs))
    return path


# ---- filters that match nothing -------------------------------------------------------
def test_audit_game_typo_says_so_and_suggests_the_closest_id(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game("s1-g000003"), finished_game("s1-g000104"))
    result = cli("audit", logs, "--game", "s1-g00003")
    assert result.exit_code == 2
    assert "error: no game 's1-g00003' in these logs (did you mean s1-g000003?)" in result.stderr
    # an id that resembles nothing gets no guess, and a right id next to it is still audited
    result = cli("audit", logs, "--game", "zzz", "--game", "s1-g000104", "-f", "json")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: no game 'zzz' in these logs"
    assert [g["game_id"] for g in json.loads(result.stdout)["games"]] == ["s1-g000104"]
    assert cli("audit", logs, "--game", "s1-g000003").exit_code == 0


# ---- no events ---------------------------------------------------------------------
@pytest.mark.parametrize("content, says", [("", "the file is empty"), ("\n   \n\n", "the file holds only blank lines")])
def test_a_log_with_no_events_says_so(tmp_path, content, says):
    log = tmp_path / "today.jsonl"
    log.write_text(content)
    for command in (["audit", log], ["ingest", log, "--out", tmp_path / "ds"]):
        result = cli(*command)
        assert result.exit_code == 0, result.output
        assert f"note: {log}: no events: {says}" in flat(result.stderr)


def test_stdin_with_no_events_says_so():
    result = cli("audit", "-", input="\n\n")
    assert result.exit_code == 0
    assert "note: <stdin>: no events: it holds only blank lines" in result.stderr


# ---- files that are not logs -------------------------------------------------------------
def test_a_scoresheet_passed_as_a_log_gets_one_sentence_not_a_flood(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(SHEET_HEADER + "g1,1,ana,600,600\n" * 40)
    result = cli("audit", logs, sheet)
    assert result.exit_code == 0, result.output  # the log itself is clean
    assert flat(result.stderr) == (
        f"note: {sheet}: not read: this looks like a scoresheet CSV, not JSON Lines "
        "(one JSON event per line): pass it with --scoresheet"
    )
    assert "bad_json" not in result.stdout
    alone = cli("audit", sheet)
    assert alone.exit_code == 2
    assert "no log to read" in alone.stderr


@pytest.mark.parametrize(
    "name, data, looks_like",
    [
        ("events.parquet", b"PAR1" + bytes(range(256)) * 4 + b"PAR1", "a Parquet file"),
        ("report.html", b"<!DOCTYPE html>\n<html><body><p>report</p></body></html>\n", "an HTML page"),
        ("README", b"# Farkle logs\n\nEach file holds a day of games.\n", "plain text"),
    ],
)
def test_ingest_and_audit_skip_a_named_file_that_is_not_json_lines(tmp_path, name, data, looks_like):
    logs = write(tmp_path / "a.jsonl", finished_game())
    other = tmp_path / name
    other.write_bytes(data)
    audit = cli("audit", other, logs, "-f", "json")
    assert audit.exit_code == 0
    assert json.loads(audit.stdout)["findings"] == []
    assert f"note: {other}: not read: this looks like {looks_like}" in flat(audit.stderr)
    stored = cli("ingest", other, logs, "--out", tmp_path / "ds", "-f", "json")
    assert stored.exit_code == 0, stored.output
    summary = json.loads(stored.stdout)
    assert summary["files"] == 1 and summary["rejects"] == 0 and summary["events"] == len(finished_game().lines)
    assert f"note: {other}: not read: this looks like {looks_like}" in flat(stored.stderr)


def test_a_directory_gives_its_logs_and_names_the_rest_once(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder / "day1.jsonl", finished_game("g1"))
    (folder / "day2.jsonl.gz").write_bytes(gzip.compress("\n".join(finished_game("g2").lines).encode() + b"\n"))
    (folder / "README.md").write_text("# logs\n")
    (folder / "g1.scoresheet.csv").write_text(SHEET_HEADER + "g1,1,ana,650,650\n")
    result = cli("audit", folder, "-f", "json")
    assert result.exit_code == 0, result.output
    assert [g["game_id"] for g in json.loads(result.stdout)["games"]] == ["g1", "g2"]
    assert flat(result.stderr) == (
        f"note: {folder}: 2 files not read, not named like logs (.jsonl, .ndjson, .json, "
        "or those + .gz): README.md, g1.scoresheet.csv; name a file to read it anyway"
    )
    # wrapped at 80 columns, the note stays one block: its further lines are indented
    (first, *rest) = result.stderr.splitlines()
    assert first.startswith("note: ") and rest and all(line.startswith("  ") for line in rest)


# ---- scoresheets -------------------------------------------------------------------------
def sheet_for(tmp_path: Path, rows: str, name="sheet.csv") -> Path:
    path = tmp_path / name
    path.write_text(SHEET_HEADER + rows)
    return path


AGREEING_ROWS = "g1,1,ana,600,600\ng1,1,bo,600,600\ng1,2,ana,600,1200\ng1,2,bo,0,600\n"


def test_a_sheet_that_agrees_is_said_to_agree(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    sheet = sheet_for(tmp_path, AGREEING_ROWS)
    text = cli("audit", logs, "--scoresheet", sheet)
    assert text.exit_code == 0
    assert f"scoresheet {sheet}: agrees with the replay; 4 rows of 1 game checked" in flat(text.stdout)
    as_json = json.loads(cli("audit", logs, "--scoresheet", sheet, "-f", "json").stdout)
    assert as_json["scoresheets"] == [
        {
            "file": str(sheet),
            "rows": 4,
            "rows_checked": 4,
            "rows_unreadable": 0,
            "games_found": ["g1"],
            "games_not_found": [],
            "differences": 0,
            "by_code": {},
            "agrees": True,
            "hints": [],
        }
    ]


def test_a_sheet_that_differs_gets_its_count(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    # bo's first turn copied as 650: his points and both his totals differ; ana's 2nd turn is missing
    sheet = sheet_for(tmp_path, "g1,1,ana,600,600\ng1,1,bo,650,650\ng1,2,bo,0,650\n")
    result = cli("audit", logs, "--scoresheet", sheet, "-f", "json")
    assert result.exit_code == 1
    verdict = json.loads(result.stdout)["scoresheets"][0]
    assert verdict["differences"] == 4 and not verdict["agrees"]
    assert verdict["by_code"] == {"sheet_points_mismatch": 1, "sheet_total_mismatch": 2, "sheet_missing_turn": 1}
    text = cli("audit", logs, "--scoresheet", sheet)
    assert (
        f"scoresheet {sheet}: 4 differences from the replay (2 sheet_total_mismatch, 1 sheet_missing_turn, "
        "1 sheet_points_mismatch); 3 rows of 1 game checked"
    ) in flat(text.stdout)


def test_a_sheet_game_not_in_the_logs_is_one_message(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    rows = AGREEING_ROWS + "".join(f"g7,{t},ana,100,{100 * t}\n" for t in range(1, 46))
    sheet = sheet_for(tmp_path, rows)
    result = cli("audit", logs, "--scoresheet", sheet)
    assert result.exit_code == 1  # the rows of g1 were checked; those of g7 are findings
    out = flat(result.stdout)
    assert out.count("g7") == 1, result.stdout
    assert f"scoresheet {sheet}: game g7 is not in these logs: its 45 rows (lines 6-50) were not checked" in out
    assert (
        f"scoresheet {sheet}: the rows checked agree with the replay; 4 rows of 1 game checked; "
        "1 of its games not in these logs (above)"
    ) in out
    # a sheet none of whose games is in the logs checks nothing: bad usage, with a suggestion
    only = sheet_for(tmp_path, "g11,1,ana,650,650\n" * 3, name="other.csv")
    result = cli("audit", logs, "--scoresheet", only)
    assert result.exit_code == 2
    assert "none of its games is in these logs (g11) (did you mean g1?)" in flat(result.stderr)


@pytest.mark.parametrize("content", ["game,turn,who,points,total\ng1,1,ana,650,650\n", "", "\ufeff\n"])
def test_a_sheet_with_a_wrong_header_is_one_error_and_bad_usage(tmp_path, content):
    logs = write(tmp_path / "a.jsonl", finished_game())
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(content)
    result = cli("audit", logs, "--scoresheet", sheet)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("error:") == 1 and f"{sheet}:1:" in result.stderr
    assert "game_id,turn,player,points,total" in result.stderr


def test_a_sheet_that_cannot_be_read_is_bad_usage(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    binary = tmp_path / "sheet.xlsx"
    binary.write_bytes(b"PK\x03\x04\xff\xfe\x00garbage")
    for sheet in (tmp_path, binary, tmp_path / "missing.csv"):
        result = cli("audit", logs, "--scoresheet", sheet)
        assert result.exit_code == 2, (sheet, result.output)
        assert result.stderr.startswith("error: ") and result.stderr.count("error:") == 1


# ---- messages that mislead -----------------------------------------------------------
def test_a_log_cut_before_the_end_names_no_winner(tmp_path):
    log = Log(rules=SHORT).opening_turn("ana").opening_turn("bo")
    result = cli("audit", write(tmp_path / "a.jsonl", log))
    out = flat(result.stdout)
    assert "no winner: the log ends before the game does (no game_end)" in out
    assert "winner by the dice" not in out and "winner claimed" not in out


def test_json_winners_are_always_lists(tmp_path):
    tie = Log(game_id="tie", rules=SHORT).opening_turn("ana").opening_turn("bo")
    tie.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    tie.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 1200)
    tie.end(["ana", "bo"], {"ana": 1200, "bo": 1200})
    games = json.loads(cli("audit", write(tmp_path / "a.jsonl", finished_game(), tie), "-f", "json").stdout)["games"]
    assert [(g["winner_claimed"], g["winner_corrected"]) for g in games] == [
        (["ana"], ["ana"]),
        (["ana", "bo"], ["ana", "bo"]),
    ]


def test_players_wins_over_games_explain_ties(tmp_path):
    tie = Log(game_id="tie", rules=SHORT).opening_turn("ana").opening_turn("bo")
    tie.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    tie.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 1200)
    tie.end(["ana", "bo"], {"ana": 1200, "bo": 1200})
    ds = tmp_path / "ds"
    ingest([str(write(tmp_path / "a.jsonl", finished_game(), tie))], ds)
    result = cli("stats", ds, "--section", "players")
    assert result.exit_code == 0, result.output
    # 2 games: ana won g1, ana and bo tied: 3 wins
    assert "note: wins add up to 3 over 2 games: a tied game counts as a win for each tied player" in flat(
        result.stdout
    )


# ---- decisions-quality does not flood -------------------------------------------------
def test_decisions_quality_text_is_a_summary_unless_all(tmp_path):
    from pipeline.simulate import simulate

    logs = tmp_path / "sim.jsonl"
    simulate(logs, 6, 5, players=(3, 3))
    ds = tmp_path / "ds"
    ingest([str(logs)], ds)
    short = cli("stats", ds, "--section", "decisions-quality")
    full = cli("stats", ds, "--section", "decisions-quality", "--all")
    table = json.loads(cli("stats", ds, "--section", "decisions-quality", "-f", "json").stdout)["tables"]
    assert short.exit_code == full.exit_code == 0
    players = len(table["decision_quality"])
    # the summary per player (and all), at most 25 blunders, the notes: no per-state table
    assert len(table["blunders"]) > 25
    assert len(short.stdout.splitlines()) < players + 25 + 20
    assert "Decision quality by kind of choice" not in short.stdout
    assert "(part" not in short.stdout  # each table fits 80 columns in one piece
    assert "--section decision_loss_by_state" in flat(short.stderr)
    assert len(full.stdout.splitlines()) > len(table["decision_loss_by_state"]) + len(table["blunders"])
    assert fits(short.stdout) and fits(full.stdout)
    # a bank-or-roll with one die left says "1 die left"
    ones = [b for b in table["blunders"] if b["kind"] != "keep" and b["dice"] == 1]
    assert "1 dice" not in full.stdout and ("1 die left" in full.stdout) == bool(ones)


# ---- control characters ---------------------------------------------------------------
EVIL = "ev\x1b[31mil\r"
EVIL_GAME = "g\x1b]0;pwned\x07"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def evil_log() -> Log:
    log = Log(game_id=EVIL_GAME, players=(EVIL, "bo"), rules=SHORT).opening_turn(EVIL).opening_turn("bo")
    log.roll(EVIL, [5, 5, 2, 3, 4, 6]).keep(EVIL, [5, 5], 100)
    log.roll(EVIL, [5, 2, 3, 4]).keep(EVIL, [5], 400).bank(EVIL, 500, 1100)
    return log.roll("bo", [2, 2, 3, 3, 4, 6]).farkle("bo")


def test_names_and_ids_cannot_drive_the_terminal(tmp_path):
    logs = write(tmp_path / "a.jsonl", evil_log())
    bad_name = tmp_path / "x\x1b[2Jy.jsonl"
    bad_name.write_text("")
    ds = tmp_path / "ds"
    sheet = sheet_for(tmp_path, f'"{EVIL_GAME}",1,"{EVIL}",650,650\n')  # differs: its message names both
    outputs = {
        "audit": cli("audit", logs, bad_name, "--scoresheet", sheet),
        "audit --game typo": cli("audit", logs, "--game", EVIL_GAME + "x"),
        "coach": cli("audit", logs, "--game", EVIL_GAME, "--coach"),
        "ingest": cli("ingest", logs, bad_name, "--out", ds),
        "stats": cli("stats", ds),
        "stats --player typo": cli("stats", ds, "--player", EVIL + "x"),
    }
    for what, result in outputs.items():
        assert not CONTROL.search(result.stdout + result.stderr), (what, result.stdout + result.stderr)
    assert "ev\\x1b[31mil\\r" in outputs["audit"].stdout
    assert "g\\x1b]0;pwned\\x07" in outputs["audit"].stdout
    # a long path goes on its own line, so the words after it may start the next one
    assert "x\\x1b[2Jy.jsonl:noevents" in "".join(outputs["audit"].stderr.split())
    assert "ev\\x1b[31mil\\r" in outputs["coach"].stdout and "ev\\x1b[31mil\\r" in outputs["stats"].stdout
    assert "did you mean g\\x1b]0;pwned\\x07?" in flat(outputs["audit --game typo"].stderr)
    # machine formats keep the data exact
    games = json.loads(cli("audit", logs, "-f", "json").stdout)["games"]
    assert games[0]["game_id"] == EVIL_GAME and EVIL in games[0]["claimed"]
    assert EVIL in cli("audit", logs, "-f", "csv").stdout


# ---- 80 columns -------------------------------------------------------------------------
def test_text_output_fits_80_columns_without_cutting(tmp_path):
    long_name = "Maximiliana-Konstantinopolitanische-Spielerin"
    log = finished_game(game_id="league-2026-spring-round-03-table-11", players=(long_name, "bo"))
    log.roll("bo", [1, 1, 1, 2, 3, 4]).keep("bo", [1, 1, 1], 1500)  # after game_end: findings
    logs = write(tmp_path / "a.jsonl", log)
    ds = tmp_path / "ds"
    ingest([str(logs)], ds)
    outputs = [
        cli("audit", logs),
        cli("audit", logs, "--game", "league-2026-spring-round-03-table-11", "--coach"),
        cli("stats", ds),
        cli("stats", ds, "--section", "decisions-quality"),
        cli("ingest", logs, "--out", tmp_path / "ds2"),
        cli("rules", "show", "playmonster"),
        cli("rules", "list"),
        cli("score", "1", "1", "1", "1", "1", "1", "2"),
    ]
    for result in outputs:
        assert fits(result.stdout) and fits(result.stderr), result.stdout
    # the long name is never cut: all of it is there, in order (a table may fold it over lines)
    for result in outputs[:4]:
        rest = iter(result.stdout)
        assert all(char in rest for char in long_name), result.stdout


def test_a_dataset_given_to_audit_is_one_sentence_and_bad_usage(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    ds = tmp_path / "data"
    ingest([str(logs)], ds)
    result = cli("audit", ds)
    assert result.exit_code == 2
    assert flat(result.stderr) == (
        f"error: {ds}: this is a dataset written by `farkle-logs ingest`, not a directory "
        f"of logs: read it with `farkle-logs stats {ds}` or `farkle-logs report {ds}`, "
        "or audit the logs it was ingested from"
    )


def test_a_file_ingested_before_is_one_note_without_an_ellipsis(tmp_path):
    logs = write(tmp_path / "a.jsonl", finished_game())
    assert cli("ingest", logs, "--out", tmp_path / "ds").exit_code == 0
    again = cli("ingest", logs, "--out", tmp_path / "ds")
    assert again.exit_code == 0
    assert flat(again.stderr).startswith(f"note: {logs}: skipped, its content was ingested before (its sha256 begins ")
    assert fits(again.stdout) and fits(again.stderr)


def test_stats_over_many_players_shows_the_overall_rows_and_the_flagged_ones(tmp_path):
    """Per-dice and per-bucket tables of a league are a page on a terminal, not a flood: the
    overall rows, the bust rates outside their interval, a note; --all, --player and json
    have every row."""
    from pipeline.simulate import simulate

    logs = tmp_path / "sim.jsonl"
    simulate(logs, 10, 7, players=(4, 4))
    ds = tmp_path / "ds"
    ingest([str(logs)], ds)
    rows = json.loads(cli("stats", ds, "--section", "bust", "-f", "json").stdout)["tables"]["bust_rate_by_dice_left"]
    players = {r["player"] for r in rows if r["scope"] == "player"}
    assert len(players) > 10
    text = cli("stats", ds, "--section", "bust")
    assert text.exit_code == 0
    shown = {line.split()[0] for line in text.stdout.splitlines() if line.split() and line.split()[0] in players}
    assert shown == {r["player"] for r in rows if r["scope"] == "player" and r["off"]}
    left_out = sum(1 for r in rows if r["scope"] == "player" and not r["off"])
    assert f"note: {left_out} rows of single players left out (the OFF ones are shown): --player NAME" in flat(
        text.stdout
    )
    every = cli("stats", ds, "--section", "bust", "--all").stdout
    assert {line.split()[0] for line in every.splitlines() if line.split() and line.split()[0] in players} == players
    one = sorted(players)[0]
    mine = cli("stats", ds, "--section", "bust", "--player", one).stdout
    assert sum(line.split()[0] == one for line in mine.splitlines() if line.split()) == sum(
        r["player"] == one for r in rows
    )

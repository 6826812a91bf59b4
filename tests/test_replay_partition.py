"""replay_partition (COORDINATION.md decision 4) against the reference replay of the raw lines.

The expected tables are made by feeding the reader's Events straight to a `Replayer`, the
path `audit` takes; `replay_partition` gets the same games as Arrow rows in the stored form
(timestamps, JSON text, lists), in any row order with a `file_ordinal` column, and split
into hash buckets of whole games. Row for row, the union of its outputs must be the same.
"""

from __future__ import annotations

import io
import random
from zlib import crc32

import pyarrow as pa
import pytest

from pipeline.dataset import tables
from pipeline.dataset import batches
from pipeline.model import Event
from pipeline.reader import parse_line
from pipeline.replay import Replayer
from pipeline.replay.partition import OUTPUT_TABLES, replay_partition
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from tests.test_simulate import HOUSE_ODD, HOUSE_PENALTY

RULESETS = [Ruleset.builtin("standard"), Ruleset.builtin("playmonster"), HOUSE_PENALTY, HOUSE_ODD]


def simulated_lines(games: int, seed: int, rules, inject_rate: float) -> list[bytes]:
    out = io.BytesIO()
    simulate(out, games, seed, rules=rules, inject_rate=inject_rate, tables=3)
    return out.getvalue().splitlines()


def reference(events: list[Event], default_rules: Ruleset) -> dict[str, list[tuple]]:
    r = Replayer(default_rules, records=True)
    for e in events:
        r.feed(e)
    r.finish()
    out = r.drain()
    games, players = batches.games_tables(out.games)
    return rows(
        {
            "turns": batches.turns_table(out.turns),
            "rolls": batches.rolls_table(out.rolls),
            "decisions": batches.decisions_table(out.decisions),
            "games": games,
            "game_players": players,
            "findings": batches.findings_table(out.findings),
        }
    )


def rows(result: dict[str, pa.Table]) -> dict[str, list[tuple]]:
    return {name: sorted(map(tuple, (r.values() for r in t.to_pylist())), key=repr) for name, t in result.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_partitions_of_whole_games_give_the_reference_tables(seed):
    rules = [RULESETS[seed % len(RULESETS)], RULESETS[(seed + 1) % len(RULESETS)]]
    lines = simulated_lines(60, seed, rules, inject_rate=0.6)
    # two files: the same game may continue in the second one
    half = len(lines) // 2
    items = [parse_line(raw, "a.jsonl", n) for n, raw in enumerate(lines[:half], 1)]
    items += [parse_line(raw, "b.jsonl", n) for n, raw in enumerate(lines[half:], 1)]
    events = [e for e in items if type(e) is Event]
    default = Ruleset.builtin("playmonster")
    want = reference(events, default)
    assert want["findings"], "the injected log should have findings"

    table = batches.events_table(events, "test")
    ordinal = pa.array([0 if e.file == "a.jsonl" else 1 for e in events], pa.int32())
    table = table.append_column("file_ordinal", ordinal)
    # shuffle the rows: the ordering column, not the row order, decides the replay order
    rng = random.Random(seed)
    perm = list(range(table.num_rows))
    rng.shuffle(perm)
    table = table.take(pa.array(perm))
    buckets = [crc32(g.encode()) % 4 for g in table.column("game_id").to_pylist()]
    got: dict[str, list] = {name: [] for name in OUTPUT_TABLES}
    for b in range(4):
        part = table.filter(pa.array([x == b for x in buckets]))
        result = replay_partition(part, default)
        for name in OUTPUT_TABLES:
            assert result[name].schema == tables.TABLES[name], name
        for name, rs in rows(result).items():
            got[name].extend(rs)
    for name in OUTPUT_TABLES:
        assert sorted(got[name], key=repr) == want[name], name


def test_an_empty_partition_gives_empty_tables_of_the_right_schemas():
    result = replay_partition(tables.EVENTS.empty_table(), Ruleset.builtin("standard"))
    assert set(result) == set(OUTPUT_TABLES)
    for name, t in result.items():
        assert t.num_rows == 0 and t.schema == tables.TABLES[name]


def test_without_the_ordering_column_rows_are_replayed_as_given():
    lines = [
        b'{"game_id":"g","seq":1,"type":"game_start","players":["a"]}',
        b'{"game_id":"g","seq":2,"type":"roll","player":"a","dice":[2,2,3,3,4,6]}',
        b'{"game_id":"g","seq":3,"type":"farkle","player":"a"}',
    ]
    events = [parse_line(raw, "x", n) for n, raw in enumerate(lines, 1)]
    table = batches.events_table(events, "t")
    ok = replay_partition(table, Ruleset.builtin("standard"))
    assert [f["code"] for f in ok["findings"].to_pylist()] == ["game_incomplete"]
    backwards = replay_partition(table.take(pa.array([0, 2, 1])), Ruleset.builtin("standard"))
    codes = sorted(f["code"] for f in backwards["findings"].to_pylist())
    assert "seq_error" in codes  # seq 3 before seq 2: the order given is the order replayed


def test_the_partition_module_imports_on_its_own():
    """The Spark engine imports it first thing, in a fresh worker interpreter."""
    import subprocess
    import sys

    for module in ("pipeline.replay.partition", "pipeline.ingest.route", "pipeline.ingest.workers"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

"""Small compressed inputs that inflate to millions of lines or games: memory stays bounded.

Each case is a gzip of a few hundred KB generated here, run through the CLI in a subprocess
whose peak resident memory is measured by the process that waits for it
(`getrusage(RUSAGE_CHILDREN)`), against the peak of the same command on a ten-line log in
the same way. The inputs are proportional to the ones that failed (3 M lines of `{}` took
2.35 GB to ingest, 1 M one-line games 3.2 GB to ingest and 3.5 GB to audit, 16 MiB of blank
lines 1.17 GB): before the fix each case here grew by hundreds of MB over the small log;
now by a few dozen. The full-size cases are in bench/memory.py, with the real limits; the
audit case here lowers the audit's limits (a subprocess cannot be monkeypatched) so that a
short log crosses them, as the full-size log crosses the real ones.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.ingest import parse as ingest_parse
from pipeline.ingest.parse import parse_block
from pipeline.reader.split import Block
from tests.dataset_helpers import ROOT

MIB = 1 << 20
# The audit's limits, lowered for a log of 60,000 games (the real ones: 100,000 games in
# pass 1, 50,000 game states, 20,000 results, 50,000 findings held in memory).
LOW_LIMITS = """
import pipeline.audit.fast as fast, pipeline.audit.finding_store as fs, pipeline.replay.engine as engine
fast.MANY_GAMES = 10_000
fs.LIMIT = 5_000
if 'max_games' in (engine.Replayer.__init__.__kwdefaults__ or {}):
    engine.Replayer.__init__.__kwdefaults__['max_games'] = 5_000
try:
    import pipeline.audit.game_stores as gs
    gs.GameStore.__init__.__kwdefaults__['held'] = 2_000
except ImportError:
    pass
"""


def peak_mib(args: list[str], patch: str = "") -> tuple[float, subprocess.CompletedProcess]:
    """Peak resident MiB of `farkle-logs ARGS` (the largest process it ran), measured by a
    parent that runs nothing else."""
    child = (
        f"import sys\nsys.argv = ['farkle-logs', *sys.argv[1:]]\n{patch}\nfrom pipeline.cli.entry import main\nmain()"
    )
    parent = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]], capture_output=True)\n"
        "sys.stderr.buffer.write(p.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
    )
    # Without the compiled kernels: numba and LLVM cost a fixed ~100 MiB that only inputs past
    # a size load (the ten-line base would not), and this measures growth with the data.
    env = {**os.environ, "FARKLE_LOGS_NO_JIT": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", parent, child, *args], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env
    )
    assert proc.stdout.strip(), proc.stderr
    kib, code = proc.stdout.split()
    assert "Traceback" not in proc.stderr, proc.stderr
    proc.returncode = int(code)
    return int(kib) / 1024, proc


def gz(path: Path, lines) -> Path:
    with gzip.open(path, "wb", compresslevel=6) as f:
        for line in lines:
            f.write(line)
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Ten lines of one game: what the commands take for nearly nothing."""
    events = [{"game_id": "g", "seq": 1, "type": "game_start", "players": ["ana", "bo"]}]
    for seq in range(2, 11, 2):
        player = "ana" if seq % 4 == 2 else "bo"
        events.append({"game_id": "g", "seq": seq, "type": "roll", "player": player, "dice": [2, 2, 3, 3, 4, 6]})
        events.append({"game_id": "g", "seq": seq + 1, "type": "farkle", "player": player})
    return gz(tmp_path_factory.mktemp("small") / "small.jsonl.gz", (json.dumps(e).encode() + b"\n" for e in events))


@pytest.fixture(scope="module")
def base_ingest(small, tmp_path_factory) -> float:
    peak, proc = peak_mib(["ingest", str(small), "--out", str(tmp_path_factory.mktemp("base") / "ds")])
    assert proc.returncode == 0, proc.stderr
    return peak


def one_line_games(n: int):
    for i in range(n):
        yield b'{"game_id":"g%d","seq":1,"type":"game_start","players":["ana","bo"]}\n' % i


@pytest.mark.parametrize(
    "name, lines, grows_by",
    [
        ("braces", lambda: (b"{}\n" for _ in range(600_000)), 150),  # before: about +500 MB
        ("blank", lambda: (b"\n" * (1 << 20) for _ in range(16)), 100),  # 16 MiB of newlines; before: +1 GB
        ("games", lambda: one_line_games(150_000), 300),  # before: about +450 MB; now about +205
    ],
)
def test_ingest_memory_stays_bounded(tmp_path, base_ingest, name, lines, grows_by):
    log = gz(tmp_path / f"{name}.jsonl.gz", lines())
    assert log.stat().st_size < 1 * MIB
    peak, proc = peak_mib(["ingest", str(log), "--out", str(tmp_path / "ds")])
    assert proc.returncode in (0, 1), proc.stderr
    assert peak < base_ingest + grows_by, f"{name}: {peak:.0f} MiB, a ten-line log {base_ingest:.0f} MiB"


def test_audit_memory_stays_bounded_past_its_limits(tmp_path, small):
    """60,000 one-line games, each with a finding (game_incomplete): before, every game's
    state, result and count stayed in memory (about 3.7 KB a game: +220 MB here)."""
    base, proc = peak_mib(["audit", str(small), "-f", "jsonl"], LOW_LIMITS)
    assert proc.returncode == 0, proc.stderr
    log = gz(tmp_path / "games.jsonl.gz", one_line_games(60_000))
    for fmt in ("jsonl", "text"):
        peak, proc = peak_mib(["audit", str(log), "-f", fmt], LOW_LIMITS)
        assert proc.returncode == 0, proc.stderr
        assert peak < base + 80, f"{fmt}: {peak:.0f} MiB, a ten-line log {base:.0f} MiB"


def test_blank_lines_are_counted_without_parsing_one(monkeypatch):
    """A block of blank lines (empty, spaces, tabs, \\r) costs array operations, not a call
    of the reference parser per line (16 MiB of them took 62 s)."""

    parse_line = ingest_parse.parse_line

    def no_blank(raw, *args):
        assert raw.strip(), f"parsed a blank line: {raw!r}"
        return parse_line(raw, *args)

    monkeypatch.setattr(ingest_parse, "parse_line", no_blank)
    rng = np.random.default_rng(5)
    kinds = [b"", b"  ", b"\t", b" \r", b"\x0b\x0c "]
    data = b"".join(kinds[k] + b"\n" for k in rng.integers(0, len(kinds), 200_000))
    parsed = parse_block(Block(0, "blank.jsonl", 1, data), "x", 1 << 20)
    assert parsed.blank == parsed.lines == 200_000 and parsed.events.num_rows == 0 and not parsed.bad
    few = b'\n  \n{"game_id":"g","seq":1,"type":"game_start","players":["a"]}\n \t\n'
    parsed = parse_block(Block(0, "few.jsonl", 7, few), "x", 1 << 20)
    assert (parsed.blank, parsed.events.num_rows, parsed.events.column("source_line").to_pylist()) == (3, 1, [9])


def test_a_bucket_replayed_in_parts_gives_the_same_tables(tmp_path, monkeypatch):
    """A bucket over the replay budget is replayed a share of its games at a time: the
    dataset holds the same rows as when it is replayed whole (in another order)."""
    import duckdb

    from pipeline.dataset.layout import open_dataset
    from pipeline.dataset.tables import TABLES
    from pipeline.ingest import ingest, workers
    from tests.ingest_games import dump, games, interleave

    log = tmp_path / "log.jsonl"
    log.write_bytes(dump(interleave(games(30, seed=3), seed=4)))
    whole = ingest([str(log)], tmp_path / "whole")
    calls = []
    replay_parts = workers.replay_parts
    monkeypatch.setattr(workers, "REPLAY_BUDGET", 20_000)
    monkeypatch.setattr(workers, "replay_parts", lambda rows, g: calls.append(replay_parts(rows, g)) or calls[-1])
    parts = ingest([str(log)], tmp_path / "parts")
    assert max(calls) >= 5  # the buckets really were split
    assert (parts.events, parts.games, parts.findings) == (whole.events, whole.games, whole.findings)
    for table in TABLES:
        if table == "events":
            continue
        rows = []
        for ds in ("whole", "parts"):
            files = open_dataset(tmp_path / ds).duckdb_paths(table)
            columns = [c for c in TABLES[table].names if c != "ingest_id"]
            select = ", ".join(f'"{c}"' for c in columns)
            rows.append(
                sorted(map(repr, duckdb.sql(f"select {select} from read_parquet({files})").fetchall())) if files else []
            )
        assert rows[0] == rows[1], table

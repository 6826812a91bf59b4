"""Shared by the store tests: a small dataset with two snapshots, and the CLI in a subprocess
(the console script's own error handling, pipeline/cli/entry.py, only runs there)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.ingest import ingest
from tests.ingest_games import dump, games, interleave

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Built:
    ds: Path
    a: Path  # ingested first (snapshot 1)
    b: Path  # ingested second (snapshot 2); continues games of `a`
    events_a: int
    events_b: int


def two_logs(directory: Path, n_games: int = 12) -> tuple[Path, Path]:
    """a.jsonl and b.jsonl: the first and second half of `n_games` interleaved games."""
    lines = interleave(games(n_games, seed=5), seed=9)
    half = len(lines) // 2
    directory.mkdir(parents=True, exist_ok=True)
    a, b = directory / "a.jsonl", directory / "b.jsonl"
    a.write_bytes(dump(lines[:half]))
    b.write_bytes(dump(lines[half:]))
    return a, b


def two_snapshots(tmp_path: Path, name: str = "ds", n_games: int = 12) -> Built:
    a, b = two_logs(tmp_path / "logs", n_games)
    ds = tmp_path / name
    first = ingest([str(a)], ds)
    second = ingest([str(b)], ds)
    assert (first.snapshot, second.snapshot) == (1, 2)
    return Built(ds, a, b, first.events, second.events)


def farkle(
    *args: str | Path,
    stdout=subprocess.PIPE,
    env: dict | None = None,
    timeout: float = 180,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess:
    """`farkle-logs ARGS` in a subprocess, as a user runs it (python -m pipeline.cli)."""
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )


def no_traceback(proc: subprocess.CompletedProcess) -> str:
    """stderr, after checking it holds no Python traceback."""
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return err

"""Atomicity: a killed ingest leaves the previous dataset intact, and a rerun completes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest import StoreError, ingest
from pipeline.dataset.store import Store
from tests.ingest_games import dump, games, interleave
from tests.test_ingest import everything

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli.main import app; app()", "ingest", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture()
def two_parts(tmp_path: Path) -> tuple[Path, Path]:
    lines = interleave(games(30, seed=21), seed=2)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(dump(lines[:500]))
    b.write_bytes(dump(lines[500:] + ["not json"]))
    return a, b


@pytest.mark.parametrize("point", ["read_done", "snapshot_built", "before_flip"])
def test_killed_before_commit_leaves_the_old_dataset_and_a_rerun_completes_it(tmp_path, two_parts, point):
    a, b = two_parts
    one = tmp_path / "one"
    ingest([str(a), str(b)], one)
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    manifest = (ds / "manifest.json").read_text()

    proc = cli(str(b), "--out", str(ds), env={"FARKLE_LOGS_CRASH_AT": point})
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert everything(ds) == before
    assert (ds / "manifest.json").read_text() == manifest

    proc = cli(str(b), "--out", str(ds), "--format", "json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # b has a bad line
    assert json.loads(out)["files"] == 1
    assert everything(ds) == everything(one)
    assert not (ds / ".staging").exists()
    assert sorted(p.name for p in (ds / ".snapshots").iterdir()) == ["000001", "000002"]  # current and previous


def test_killed_after_the_flip_the_new_dataset_is_complete(tmp_path, two_parts):
    a, b = two_parts
    one = tmp_path / "one"
    ingest([str(a), str(b)], one)
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    proc = cli(str(b), "--out", str(ds), env={"FARKLE_LOGS_CRASH_AT": "after_flip"})
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert everything(ds) == everything(one)
    again = ingest([str(b)], ds)  # nothing left to do
    assert again.files_skipped == 1
    assert sorted(p.name for p in (ds / ".snapshots").iterdir()) == ["000001", "000002"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigkill_mid_run(tmp_path, workers):
    lines = interleave(games(1500, seed=31, turns=8), seed=3)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(dump(lines[:1000]))
    b.write_bytes(dump(lines[1000:]))
    one = tmp_path / "one"
    ingest([str(a), str(b)], one)
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)

    proc = cli(str(b), "--out", str(ds), env={"FARKLE_LOGS_WORKERS": workers})
    staging = ds / ".staging"
    deadline = time.monotonic() + 60
    while not any(staging.glob("*/events/*.parquet")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "ingest finished before it could be killed: make the input larger"
    assert everything(ds) == before
    time.sleep(1.0)  # a second process notices its parent is gone at its next batch, and stops

    proc = cli(str(b), "--out", str(ds), env={"FARKLE_LOGS_WORKERS": workers})
    proc.communicate(timeout=300)
    assert everything(ds) == everything(one)


def test_readers_see_the_old_or_the_new_dataset_never_a_mix(tmp_path):
    lines = interleave(games(600, seed=41, turns=8), seed=4)
    parts = [lines[i::4] for i in range(4)]  # every game continues in every part
    ds = tmp_path / "ds"
    seen: set[tuple[int, int]] = set()
    errors: list[Exception] = []
    stop = threading.Event()

    def reader() -> None:
        con = duckdb.connect()
        while not stop.is_set():
            committed = (ds / "manifest.json").exists()
            try:
                events = con.sql(f"select count(*) from read_parquet('{ds}/events/*.parquet')").fetchall()[0][0]
                manifest = json.loads((ds / "manifest.json").read_text())
                seen.add((events, manifest["snapshot"]))
            except (duckdb.IOException, FileNotFoundError, duckdb.InvalidInputException) as exc:
                if committed:  # before the first commit there is nothing to read yet
                    errors.append(exc)

    expected = {}
    for i, part in enumerate(parts):
        path = tmp_path / f"p{i}.jsonl"
        path.write_bytes(dump(part))
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        total = 0
        for i in range(4):
            s = ingest([str(tmp_path / f"p{i}.jsonl")], ds)
            total += s.events
            expected[s.snapshot] = total
    finally:
        stop.set()
        thread.join()
    assert not errors
    assert len(seen) >= 2
    # a manifest read right after a count may already be the next snapshot, never an earlier one
    for events, snapshot in seen:
        assert events in (expected[snapshot], expected.get(snapshot - 1, 0)), (events, snapshot)


def test_one_ingest_at_a_time(tmp_path, two_parts):
    a, _ = two_parts
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    store = Store.open(ds)
    try:
        with pytest.raises(StoreError, match="another ingest"):
            ingest([str(a)], ds)
    finally:
        store.close()


def test_a_worker_that_dies_stops_the_ingest_with_a_message_and_leaves_the_dataset(tmp_path, two_parts):
    """A killed worker process: the ingest stops (no hang at exit with blocks still queued
    for it), says so, and the previous dataset is untouched."""
    a, b = two_parts
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    big = tmp_path / "big.jsonl"
    data = b.read_bytes()
    big.write_bytes(data * (48_000_000 // len(data)))  # six 8 MiB blocks: some still queued when it dies
    env = {"FARKLE_LOGS_CRASH_AT": "worker_parse", "FARKLE_LOGS_WORKERS": "2"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli.main import app; app()", "ingest", str(big), "--out", str(ds)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the ingest hung after its worker died")
    assert proc.returncode not in (0, -signal.SIGKILL)
    assert b"worker process died" in err
    assert everything(ds) == before


def test_the_first_commit_links_the_manifest_after_every_table(tmp_path, monkeypatch):
    """A reader that waits for DATASET/manifest.json (as the test above does) then reads a
    table through its link: the manifest's link comes last, so the tables' are there."""
    from pipeline.dataset.tables import TABLES

    made: list[str] = []
    real = os.symlink

    def recording(target, link, *args, **kwargs):
        made.append(Path(link).name)
        return real(target, link, *args, **kwargs)

    monkeypatch.setattr(os, "symlink", recording)
    log = tmp_path / "p.jsonl"
    log.write_bytes(dump(interleave(games(3, seed=5, turns=2))))
    ingest([str(log)], tmp_path / "ds")
    links = [name for name in made if name in (*TABLES, "manifest.json")]
    assert sorted(links) == sorted((*TABLES, "manifest.json"))
    assert links[-1] == "manifest.json"

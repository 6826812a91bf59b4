"""Which file is which, on Spark (issue 25 items 1 and 4): the rules of tests/test_identity.py
hold for `ingest --engine spark`, which shares the planning, identities and commit with the
local engine and reads the files in its tasks: a file is its resolved path, content stored
already adds nothing (also when that is known only once a task has read it), a plain file
read in byte ranges is checked against the bytes hashed for the manifest, and a stream is
refused (a task cannot read a pipe the driver was given).
"""

from __future__ import annotations

import gzip
import os
import threading

import pytest

from pipeline.dataset import tables
from pipeline.engines.spark.ingest import ingest as spark_ingest
from pipeline.ingest.run import ingest
from pipeline.reader.inputs import InputError
from tests.ingest_games import dump, games, interleave
from tests.spark.compare import assert_same_rows
from tests.spark.test_ingest_engines import read_table, summary
from tests.test_ingest import everything


def lines(seed: int, n: int = 4) -> list[dict]:
    return interleave(games(n, seed=seed), seed=seed)


def both(spark, specs, root, name, **options):
    """The same run on each engine, into datasets `root/local-NAME` and `root/spark-NAME`."""
    return (
        ingest(specs, root / f"local-{name}", **options),
        spark_ingest(spark, specs, root / f"spark-{name}", block_bytes=4096, **options),
    )


def same_tables(root, name) -> None:
    for table in tables.TABLES:
        assert_same_rows(
            read_table(root / f"local-{name}", table),
            read_table(root / f"spark-{name}", table),
            ordered=False,
            what=table,
        )


def test_same_name_in_two_folders_and_content_stored_already(spark, tmp_path, monkeypatch):
    for day, seed in (("dayA", 1), ("dayB", 2)):
        (tmp_path / day).mkdir()
        (tmp_path / day / "games.jsonl").write_bytes(dump(lines(seed, 12)))  # over 4 KiB: byte ranges
    monkeypatch.chdir(tmp_path / "dayA")
    both(spark, ["games.jsonl"], tmp_path, "ds")
    monkeypatch.chdir(tmp_path / "dayB")
    local, remote = both(spark, ["games.jsonl"], tmp_path, "ds")
    assert summary(remote) == summary(local)
    assert local.superseded == 0 and local.events == len(lines(2, 12))
    same_tables(tmp_path, "ds")

    monkeypatch.chdir(tmp_path)
    data = (tmp_path / "dayA" / "games.jsonl").read_bytes()
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(data))  # skipped before reading
    cut = data.index(b"\n", len(data) // 2) + 1
    (tmp_path / "two.jsonl.gz").write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))  # once read
    (tmp_path / "new.jsonl").write_bytes(dump(lines(3)))
    local, remote = both(spark, ["a.jsonl.gz", "two.jsonl.gz", "new.jsonl"], tmp_path, "ds")
    assert summary(remote) == summary(local)
    assert (local.files, local.files_skipped) == (1, 2)
    assert local.same_content == {"a.jsonl.gz": "games.jsonl", "two.jsonl.gz": "games.jsonl"}
    same_tables(tmp_path, "ds")


def test_a_plain_file_rewritten_while_its_ranges_are_read_commits_nothing(spark, tmp_path, monkeypatch):
    """The driver hashes a plain file for the manifest and takes each range's CRC-32 in the
    same pass; tasks read the ranges on their own and report the CRC-32 of what they read.
    Here the file is rewritten (same size, same lines) after the driver hashed it and before
    the tasks read it."""
    from pipeline.reader import split

    log = tmp_path / "a.jsonl"
    data = dump(lines(4, 12))
    log.write_bytes(data)
    changed = data.replace(b'"ana"', b'"amy"')
    assert changed != data and len(changed) == len(data)
    first = tmp_path / "first.jsonl"
    first.write_bytes(dump(lines(5)))
    ds = tmp_path / "ds"
    spark_ingest(spark, [str(first)], ds)
    before = everything(ds)
    real = split.hash_and_count_ranges

    def rewritten_meanwhile(path, size, range_bytes):
        hashed = real(path, size, range_bytes)
        log.write_bytes(changed)
        return hashed

    monkeypatch.setattr(split, "hash_and_count_ranges", rewritten_meanwhile)
    with pytest.raises(InputError, match="changed while it was being ingested; nothing was committed"):
        spark_ingest(spark, [str(log)], ds, block_bytes=4096, range_bytes=4096)
    assert everything(ds) == before and not (ds / ".staging").exists()
    monkeypatch.setattr(split, "hash_and_count_ranges", real)
    s = spark_ingest(spark, [str(log)], ds, block_bytes=4096, range_bytes=4096)  # unchanged now
    entry = __import__("json").loads((ds / "manifest.json").read_text())["files"][-1]
    assert entry["sha256"] == __import__("hashlib").sha256(changed).hexdigest() and s.events > 0


def test_a_stream_is_refused(spark, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer() -> None:  # feeds the pipe if anyone opens it to read
        while not stop.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                stop.wait(0.05)
                continue
            os.set_blocking(fd, True)
            os.write(fd, dump(lines(6)))
            os.close(fd)
            return

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with pytest.raises(InputError, match="a stream .* cannot be read by --engine spark"):
            spark_ingest(spark, [str(fifo)], tmp_path / "ds")
    finally:
        stop.set()
        thread.join()
    assert not (tmp_path / "ds").exists()


def test_a_copy_known_only_once_read_leaves_a_first_ingest_run_in_one_job(spark, tmp_path, monkeypatch):
    """On an empty dataset Spark parses and replays in one job; a copy that only reading
    reveals (a gzip of two members: its size hint is the last member's) had its events
    replayed with the rest by then. The replay is run again without them: the same tables
    as the local engine, and the copy is named as skipped."""
    monkeypatch.chdir(tmp_path)
    data = dump(lines(7, 12))
    (tmp_path / "g.jsonl").write_bytes(data)
    cut = data.index(b"\n", len(data) // 2) + 1
    (tmp_path / "two.jsonl.gz").write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    from pipeline.engines.spark.ingest import SparkReading

    real_drop, replayed_before_drop = SparkReading.drop, []

    def drop(self, inputs):
        replayed_before_drop.append(self._replayed is not None)
        return real_drop(self, inputs)

    monkeypatch.setattr(SparkReading, "drop", drop)
    local, remote = both(spark, ["g.jsonl", "two.jsonl.gz"], tmp_path, "first")
    assert replayed_before_drop == [True]  # the one-job path ran, and its replay was undone
    assert summary(remote) == summary(local)
    assert (local.files, local.files_skipped, local.events) == (1, 1, len(lines(7, 12)))
    assert local.same_content == {"two.jsonl.gz": "g.jsonl"}
    same_tables(tmp_path, "first")

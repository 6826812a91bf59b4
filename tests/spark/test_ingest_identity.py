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
from pipeline.engines.spark import ingest as spark_module
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
    """Tasks read a plain file's byte ranges on their own; the driver hashes the file for the
    manifest and checks, in the same pass, that each range's bytes are the ones a task read.
    Here the file is rewritten (same size, same lines) after the tasks read it."""
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
    real = spark_module._verify_spans

    def rewritten_meanwhile(path, spans, name):
        log.write_bytes(changed)
        return real(path, spans, name)

    monkeypatch.setattr(spark_module, "_verify_spans", rewritten_meanwhile)
    with pytest.raises(InputError, match="changed while it was being ingested; nothing was committed"):
        spark_ingest(spark, [str(log)], ds, block_bytes=4096)
    assert everything(ds) == before and not (ds / ".staging").exists()
    monkeypatch.setattr(spark_module, "_verify_spans", real)
    s = spark_ingest(spark, [str(log)], ds, block_bytes=4096)  # unchanged now: its hash is its bytes'
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

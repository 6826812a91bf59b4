"""`farkle-logs ingest --engine spark`: the local ingest's stages 2-3 as two Spark jobs.

Everything else is the local ingest itself (`pipeline.ingest.run.ingest` with this module
as its `engine`): which files to read, duplicates and superseded lines of re-read files,
games continued from earlier ingests, the summary and the atomic commit of dataset format
2. So both engines write the same tables by construction, and what differs is only where
the work runs:

    job 0, count (plain files over one block only): the lines starting in each byte range
    job 1, parse (one task per gzip or small file, or per byte range of a plain file):
        split_source or the range's lines -> parse_block -> Parquet of events, rejects,
        bad-line findings
        -> the events routed by hash bucket of game_id: one Arrow IPC blob per bucket
    shuffle: the blobs, repartitioned by bucket (so every event of a game meets in one task)
    job 2, replay (one task per partition of buckets):
        the partition's events -> replay_partition -> Parquet of the derived tables

A task runs the local engine's own `Worker` (parse, route, replay, Parquet sinks), so the
line numbers, the bulk parse, the replay order (`file_ordinal`, then line) and the file
schemas are those of the local engine. Tasks write their Parquet files with pyarrow
straight into the dataset's staging directory under names that depend only on the task's
input (a retried task rewrites the same files); the driver commits only the files the
successful tasks report. Both jobs are DataFrame `mapInArrow` calls, so they run on a
classic cluster and through Spark Connect alike. docs/spark.md has the sizes and limits.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pyarrow as pa

from pipeline.dataset import tables
from pipeline.ingest import incremental, route
from pipeline.ingest.workers import BucketResult, Config, Worker
from pipeline.reader.inputs import InputSource

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# What a task says: kind "events" (payload: Arrow IPC of one bucket's events, `bucket` set)
# or "result" (payload: JSON of counts and written files).
BLOB_SCHEMA = "kind string, source int, bucket int, payload binary"
# `path` as the OS's bytes (os.fsencode): a file name need not be UTF-8, and a Spark string is
FILES_SCHEMA = "source int, name string, path binary, ordinal int, start long, end long, first_line long"
RANGES_SCHEMA = "source int, start long, lines long"
BLOB = pa.schema([("kind", pa.string()), ("source", pa.int32()), ("bucket", pa.int32()), ("payload", pa.binary())])
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")  # the shuffle's bytes per event
# file-name prefixes -w<n> of the tasks: whole files, replay partitions, byte ranges
WHOLE_WORKER, REPLAY_WORKER, RANGE_WORKER = 10**7, 2 * 10**7, 10**9


@dataclass
class SparkEngine:
    """The `engine` argument of `pipeline.ingest.run.ingest`."""

    spark: "SparkSession"

    @property
    def parallelism(self) -> int:
        """Cores Spark has: the local ingest sizes its buckets (two per core at least) by it."""
        try:
            return max(1, int(self.spark.sparkContext.defaultParallelism))
        except Exception:  # Spark Connect has no SparkContext
            return max(1, int(self.spark.conf.get("spark.sql.shuffle.partitions", "2") or "2"))

    def reading(self, config: Config, stored: incremental.Stored, progress) -> "SparkReading":
        return SparkReading(self.spark, config, stored, progress)


class SparkReading:
    """`pipeline.ingest.run._Reading` on Spark: `read_all` (job 1), `replay_all` (job 2),
    `close` (the files written), and the touched games and superseded lines of job 1."""

    def __init__(self, spark: "SparkSession", config: Config, stored: incremental.Stored, progress):
        # tasks may run in another working directory: every path they get is absolute
        reread = {
            name: incremental.StoredLines(
                [str(Path(p).resolve()) for p in lines.events], [str(Path(p).resolve()) for p in lines.rejects]
            )
            for name, lines in config.reread.items()
        }
        config = replace(config, staging=config.staging.resolve(), reread=reread)
        self.spark, self.config, self.stored, self.progress = spark, config, stored, progress
        self.spills: list[Path] = []  # nothing is spilled on this machine: Spark shuffles
        self.touched: set[str] = set()
        self.superseded: list[tuple[str, int, Any]] = []
        self.files: dict[str, list[Path]] = {name: [] for name in tables.TABLES}
        self._parsed: "DataFrame | None" = None

    def read_all(self, to_read: list[tuple[InputSource, Any]], block_bytes: int) -> list[Any]:
        """Job 1. A plain file of more than `block_bytes` is parsed as byte ranges by
        several tasks, each knowing its first line number (`_first_lines`); any other file
        (gzip, small) by one task reading it whole, as the local splitter does."""
        from pipeline.ingest.run import SourceCounts, file_sha256

        counts = [SourceCounts(path=c.path, size=c.size, sha256=c.sha256) for _, c in to_read]
        rows, ranges = [], []
        for index, (source, _) in enumerate(to_read):
            if source.path is None:
                raise ValueError("stdin cannot be read by --engine spark")  # refused by the CLI first
            ordinal = self.stored.ordinals[incremental.file_key(source.name, self.config.ingest_id)]
            path = str(Path(source.path).resolve())
            size = _plain_size(path)
            if size is None or size <= block_bytes:
                rows.append((index, source.name, os.fsencode(path), ordinal, -1, -1, 0))
                continue
            counts[index].size = size
            counts[index].sha256 = counts[index].sha256 or file_sha256(path)
            for start in range(0, size, block_bytes):
                ranges.append(
                    (index, source.name, os.fsencode(path), ordinal, start, min(start + block_bytes, size), 0)
                )
        rows += _first_lines(self.spark, ranges)
        files = self.spark.createDataFrame(rows, FILES_SCHEMA).repartition(max(1, len(rows)))
        parsed = files.mapInArrow(_parse_task(self.config, block_bytes), BLOB_SCHEMA).persist()
        self._parsed = parsed
        results = parsed.filter("kind = 'result'").select("source", "payload").collect()
        for row in results:
            r = json.loads(row["payload"])
            c = counts[row["source"]]
            if r["whole"]:
                c.lines, c.size, c.sha256, c.problems = r["lines"], r["size"], r["sha256"], r["problems"]
            else:
                c.lines += r["lines"]
            c.blank_lines += r["blank"]
            c.events += r["events"]
            c.duplicates += r["duplicates"]
            c.rejects += r["rejects"]
            self.touched |= set(r["touched"])
            self.superseded += [tuple(s) for s in r["superseded"]]
            self._add_files(r["files"])
        self.progress(sum(c.size or 0 for c in counts))
        return counts

    def replay_all(self, spills: list[Path]) -> BucketResult:
        """Replay every game: the parsed events plus the stored events of continued games
        (`spills[0]`, written by `incremental.spill_stored_games`), by bucket."""
        assert self._parsed is not None
        buckets = self.config.buckets
        events = self._parsed.filter("kind = 'events'")
        stored = _blobs_of_spill(spills[0]) if spills else []
        if stored:
            events = events.unionByName(self.spark.createDataFrame(stored, BLOB_SCHEMA))
        routed = events.repartition(buckets, "bucket")
        results = routed.mapInArrow(_replay_task(self.config), BLOB_SCHEMA).collect()
        total = BucketResult()
        for row in results:
            r = json.loads(row["payload"])
            total.games += r["games"]
            total.findings_error += r["findings_error"]
            total.findings_warning += r["findings_warning"]
            self._add_files(r["files"])
        self._parsed.unpersist()
        return total

    def close(self) -> dict[str, list[Path]]:
        return self.files

    def _add_files(self, files: dict[str, list[str]]) -> None:
        for name, paths in files.items():
            self.files[name].extend(Path(p) for p in paths)


def _plain_size(path: str) -> int | None:
    """The size of a file that byte ranges can split: not gzip (a stream is read from its
    start), readable; None otherwise (read whole, by one task)."""
    from pipeline.reader.sniff import GZIP_MAGIC

    try:
        with open(path, "rb") as fh:
            if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                return None
            return fh.seek(0, 2)
    except OSError:
        return None


def _first_lines(spark: "SparkSession", ranges: list[tuple]) -> list[tuple]:
    """The number of each range's first line: a small Spark job counts the lines that
    start in each range (a line belongs to the range its first byte is in), the driver sums
    them in file order."""
    if not ranges:
        return []
    df = spark.createDataFrame(ranges, FILES_SCHEMA).repartition(len(ranges))
    got = {(r["source"], r["start"]): r["lines"] for r in df.mapInArrow(_count_task, RANGES_SCHEMA).collect()}
    out, line, current = [], 1, None
    for source, name, path, ordinal, start, end, _ in ranges:
        if source != current:
            line, current = 1, source
        out.append((source, name, path, ordinal, start, end, line))
        line += got[(source, start)]
    return out


def _count_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The lines starting in each range (pipeline.reader.split.lines_starting_in)."""
    from pipeline.reader.split import lines_starting_in

    for batch in batches:
        rows = batch.to_pylist()
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([r["source"] for r in rows], pa.int32()),
                pa.array([r["start"] for r in rows], pa.int64()),
                pa.array([lines_starting_in(os.fsdecode(r["path"]), r["start"], r["end"]) for r in rows], pa.int64()),
            ],
            names=["source", "start", "lines"],
        )


def _range_block(index: int, name: str, path: str, start: int, end: int, first_line: int):
    """The whole lines starting in [start, end) of a plain file, as a splitter Block."""
    from pipeline.reader.split import Block, range_data

    return Block(index, name, first_line, range_data(path, start, end))


def _blobs_of_spill(path: Path) -> list[tuple[str, int, int, bytes]]:
    """A bucketed spill file (one batch per bucket) as rows of BLOB_SCHEMA."""
    if not path.exists():
        return []
    reader = pa.ipc.open_file(pa.memory_map(str(path)))
    out = []
    for bucket in range(reader.num_record_batches):
        batch = reader.get_batch(bucket)
        if batch.num_rows:
            out.append(("events", -1, bucket, _ipc(pa.Table.from_batches([batch]))))
    return out


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(payload)).read_all()


def _blob_batch(rows: list[tuple[str, int, int, bytes]]) -> pa.RecordBatch:
    kinds, sources, buckets, payloads = zip(*rows) if rows else ((), (), (), ())
    return pa.RecordBatch.from_arrays(
        [
            pa.array(kinds, pa.string()),
            pa.array(sources, pa.int32()),
            pa.array(buckets, pa.int32()),
            pa.array(payloads, pa.binary()),
        ],
        schema=BLOB,
    )


# ---------------------------------------------------------------------- the tasks
def _parse_task(config: Config, block_bytes: int):
    """Job 1's function: for each file (or byte range) of the partition, the local Worker's
    parse of every block (Parquet of events, rejects and bad-line findings written to staging), then
    one blob per non-empty bucket of its events and one result row."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pipeline.reader.split import split_source

        for batch in batches:
            for f in batch.to_pylist():
                source = InputSource(f["name"], Path(os.fsdecode(f["path"])))
                whole = f["start"] < 0
                if whole:
                    blocks = split_source(source, f["source"], block_bytes, config.max_line)
                    number = WHOLE_WORKER + f["source"]
                else:
                    blocks = iter(
                        [
                            _range_block(
                                f["source"], f["name"], os.fsdecode(f["path"]), f["start"], f["end"], f["first_line"]
                            )
                        ]
                    )
                    number = RANGE_WORKER + f["source"] * 10**6 + f["start"] // block_bytes
                worker = Worker(config, number)
                result = {
                    "blank": 0,
                    "events": 0,
                    "duplicates": 0,
                    "rejects": 0,
                    "touched": set(),
                    "superseded": [],
                    "whole": whole,
                    "lines": 0,
                }
                spill_dir = Path(tempfile.mkdtemp(prefix="farkle-spark-"))
                try:
                    for n, block in enumerate(blocks):
                        spill = spill_dir / f"block-{n:06d}.arrow"
                        r = worker.parse(block, f["ordinal"], spill)
                        for key in ("blank", "events", "duplicates", "rejects", "lines"):
                            result[key] += getattr(r, key)
                        result["touched"] |= r.touched
                        result["superseded"] += r.superseded
                        blobs = _blobs_of_spill(spill)
                        spill.unlink(missing_ok=True)  # a block without events spills nothing
                        if blobs:
                            yield _blob_batch([("events", f["source"], b, data) for _, _, b, data in blobs])
                finally:
                    shutil.rmtree(spill_dir, ignore_errors=True)
                files = worker.close()
                p = source.problem
                if whole:
                    result.update(lines=source.lines, size=source.raw_bytes, sha256=source.sha256)
                result.update(
                    problems=[] if p is None else [{"file": p.file, "line": p.line, "reason": p.reason}],
                    touched=sorted(result["touched"]),
                    files={name: [str(x) for x in paths] for name, paths in files.items()},
                )
                yield _blob_batch([("result", f["source"], -1, json.dumps(result).encode())])

    return run


def _replay_task(config: Config):
    """Job 2's function: the partition's events (whole games: every blob of a bucket lands in
    one partition) replayed by the local Worker, which writes the derived tables."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        parts = [_from_ipc(p) for batch in batches for p in batch.column("payload").to_pylist()]
        if not parts:
            return
        events = pa.concat_tables([p.cast(parts[0].schema) for p in parts]).combine_chunks()
        partition = TaskContext.get().partitionId()  # type: ignore[union-attr]  # set inside a task
        worker = Worker(config, REPLAY_WORKER + partition)
        spill_dir = Path(tempfile.mkdtemp(prefix="farkle-spark-"))
        try:
            spill = spill_dir / "partition.arrow"
            route.write_buckets(events, [events.num_rows], spill)
            del events, parts
            r = worker.replay(0, [spill])
        finally:
            shutil.rmtree(spill_dir, ignore_errors=True)
        files = worker.close()
        result = {
            "games": r.games,
            "findings_error": r.findings_error,
            "findings_warning": r.findings_warning,
            "files": {name: [str(x) for x in paths] for name, paths in files.items()},
        }
        yield _blob_batch([("result", -1, partition, json.dumps(result).encode())])

    return run


def ingest(spark: "SparkSession", specs: list[str], out: Path | str, default_rules=None, **kwargs):
    """`pipeline.ingest.ingest` with stages 2-3 on Spark; same arguments, same summary."""
    from pipeline.ingest.run import ingest as local_ingest

    return local_ingest(specs, out, default_rules, engine=SparkEngine(spark), **kwargs)

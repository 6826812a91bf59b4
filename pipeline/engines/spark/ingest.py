"""`farkle-logs ingest --engine spark`: the local ingest's stages 2-3 as two Spark jobs.

Everything else is the local ingest itself (`pipeline.ingest.run.ingest` with this module
as its `engine`): which files to read, duplicates and superseded lines of re-read files,
games continued from earlier ingests, the summary and the atomic commit of dataset format
2. So both engines write the same tables by construction, and what differs is only where
the work runs:

    job 1, parse (one task per input file):
        split_source -> parse_block -> Parquet of events, rejects, bad-line findings
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
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pyarrow as pa

from pipeline import tables
from pipeline.ingest import incremental, route
from pipeline.ingest.workers import BucketResult, Config, Worker
from pipeline.inputs import InputSource

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# What a task says: kind "events" (payload: Arrow IPC of one bucket's events, `bucket` set)
# or "result" (payload: JSON of counts and written files).
BLOB_SCHEMA = "kind string, source int, bucket int, payload binary"
FILES_SCHEMA = "source int, name string, path string, ordinal int"
BLOB = pa.schema([("kind", pa.string()), ("source", pa.int32()), ("bucket", pa.int32()), ("payload", pa.binary())])
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")  # the shuffle's bytes per event
PARSE_WORKER, REPLAY_WORKER = 100_000, 200_000  # file-name prefixes -w<n> of the two jobs' tasks


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
            return max(1, int(self.spark.conf.get("spark.sql.shuffle.partitions", "2")))

    def reading(self, config: Config, stored: incremental.Stored, progress) -> "SparkReading":
        return SparkReading(self.spark, config, stored, progress)


class SparkReading:
    """`pipeline.ingest.run._Reading` on Spark: `read_all` (job 1), `replay_all` (job 2),
    `close` (the files written), and the touched games and superseded lines of job 1."""

    def __init__(self, spark: "SparkSession", config: Config, stored: incremental.Stored, progress):
        # tasks may run in another working directory: every path they get is absolute
        reread = {name: incremental.StoredLines([str(Path(p).resolve()) for p in lines.events],
                                                [str(Path(p).resolve()) for p in lines.rejects])
                  for name, lines in config.reread.items()}
        config = replace(config, staging=config.staging.resolve(), reread=reread)
        self.spark, self.config, self.stored, self.progress = spark, config, stored, progress
        self.spills: list[Path] = []  # nothing is spilled on this machine: Spark shuffles
        self.touched: set[str] = set()
        self.superseded: list[tuple[str, int, Any]] = []
        self.files: dict[str, list[Path]] = {name: [] for name in tables.TABLES}
        self._parsed: "DataFrame | None" = None

    def read_all(self, to_read: list[tuple[InputSource, Any]], block_bytes: int) -> list[Any]:
        from pipeline.ingest.run import SourceCounts

        rows = []
        for index, (source, _) in enumerate(to_read):
            if source.path is None:
                raise ValueError("stdin cannot be read by --engine spark")  # refused by the CLI first
            ordinal = self.stored.ordinals[incremental.file_key(source.name, self.config.ingest_id)]
            rows.append((index, source.name, str(Path(source.path).resolve()), ordinal))
        files = self.spark.createDataFrame(rows, FILES_SCHEMA).repartition(max(1, len(rows)))
        parsed = files.mapInArrow(_parse_task(self.config, block_bytes), BLOB_SCHEMA).persist()
        self._parsed = parsed
        results = parsed.filter("kind = 'result'").select("source", "payload").collect()
        counts = [SourceCounts(path=c.path, size=c.size, sha256=c.sha256) for _, c in to_read]
        for row in results:
            r = json.loads(row["payload"])
            c = counts[row["source"]]
            c.lines, c.size, c.sha256 = r["lines"], r["size"], r["sha256"]
            c.blank_lines, c.events, c.duplicates, c.rejects = r["blank"], r["events"], r["duplicates"], r["rejects"]
            c.problems = r["problems"]
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
        [pa.array(kinds, pa.string()), pa.array(sources, pa.int32()), pa.array(buckets, pa.int32()),
         pa.array(payloads, pa.binary())], schema=BLOB)


# ---------------------------------------------------------------------- the tasks
def _parse_task(config: Config, block_bytes: int):
    """Job 1's function: for each input file of the partition, the local Worker's parse of
    every block (Parquet of events, rejects and bad-line findings written to staging), then
    one blob per non-empty bucket of its events and one result row."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pipeline.ingest.split import split_source

        for batch in batches:
            for f in batch.to_pylist():
                source = InputSource(f["name"], Path(f["path"]))
                worker = Worker(config, PARSE_WORKER + f["source"])
                result = {"blank": 0, "events": 0, "duplicates": 0, "rejects": 0, "touched": set(),
                          "superseded": []}
                spill_dir = Path(tempfile.mkdtemp(prefix="farkle-spark-"))
                try:
                    for n, block in enumerate(split_source(source, f["source"], block_bytes, config.max_line)):
                        spill = spill_dir / f"block-{n:06d}.arrow"
                        r = worker.parse(block, f["ordinal"], spill)
                        for key in ("blank", "events", "duplicates", "rejects"):
                            result[key] += getattr(r, key)
                        result["touched"] |= r.touched
                        result["superseded"] += r.superseded
                        blobs = _blobs_of_spill(spill)
                        spill.unlink()
                        if blobs:
                            yield _blob_batch([("events", f["source"], b, data) for _, _, b, data in blobs])
                finally:
                    shutil.rmtree(spill_dir, ignore_errors=True)
                files = worker.close()
                p = source.problem
                result.update(
                    lines=source.lines, size=source.raw_bytes, sha256=source.sha256,
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
        partition = TaskContext.get().partitionId()
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
        result = {"games": r.games, "findings_error": r.findings_error, "findings_warning": r.findings_warning,
                  "files": {name: [str(x) for x in paths] for name, paths in files.items()}}
        yield _blob_batch([("result", -1, partition, json.dumps(result).encode())])

    return run


def ingest(spark: "SparkSession", specs: list[str], out: Path | str, default_rules=None, **kwargs):
    """`pipeline.ingest.ingest` with stages 2-3 on Spark; same arguments, same summary."""
    from pipeline.ingest.run import ingest as local_ingest

    return local_ingest(specs, out, default_rules, engine=SparkEngine(spark), **kwargs)

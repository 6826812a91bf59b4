"""`farkle-logs ingest --engine spark`: the local ingest's stages 2-3 as Spark jobs.

Everything else is the local ingest itself (`pipeline.ingest.run.ingest` with this module
as its `engine`): which files to read, duplicates and superseded lines of re-read files,
games continued from earlier ingests, the summary and the atomic commit of dataset format
2. So both engines write the same tables by construction, and what differs is only where
the work runs:

    driver: a plain file larger than one task's share is cut into byte ranges; the pass
        that hashes it for the manifest also counts the lines starting in each range, so
        every range knows the number of its first line
    parse stage (one task per gzip or small file, or per byte range of a plain file):
        split_source or the range's lines -> parse_block -> Parquet of events, rejects,
        bad-line findings -> the events routed by hash bucket of game_id: one Arrow IPC
        blob per bucket, keyed by the replay partition its bucket belongs to
    shuffle: the blobs, repartitioned by that key (every event of a game meets in one task)
    replay stage (one task per partition of buckets):
        the partition's events -> replay_partition -> Parquet of the derived tables

A first ingest (nothing stored that the new lines could touch) runs both stages as one
job: the parse tasks' counts travel through the shuffle with the events and come back with
the replay's. An incremental one needs the parse results on the driver before the replay
(which stored games to replay again), so the parse output is cached and the replay is a
second job.

A task runs the local engine's own `Worker` (parse, route, replay, Parquet sinks), so the
line numbers, the compiled scan, the replay order (`file_ordinal`, then line) and the file
schemas are those of the local engine. Tasks write their Parquet files with pyarrow
straight into the dataset's staging directory under names that depend only on the task's
input (a retried task rewrites the same files); the driver commits only the files the
successful tasks report. The jobs are DataFrame `mapInArrow` calls, so they run on a
classic cluster and through Spark Connect alike. docs/spark.md has the sizes and limits.
"""

from __future__ import annotations

import gc
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pyarrow as pa

from pipeline import storage
from pipeline.dataset import tables
from pipeline.ingest import incremental, route
from pipeline.ingest.workers import BucketResult, Config, Worker
from pipeline.reader.inputs import InputSource

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# What a task says: kind "events" (payload: Arrow IPC of one bucket's events), "rejected" (a
# rejected game_start, JSON [game_id, file, line, reason], routed with its game's events so
# that the game's unknown_game names it), "result" (a parse task's counts and files, JSON)
# or "replayed" (a replay task's, JSON). `part`: the
# shuffle key, a value whose hash partitioning lands the row in its replay partition.
BLOB_SCHEMA = "kind string, source int, bucket int, part int, payload binary"
# what a parse task reads; `task`: the number in its files' names, fixed by its input
FILE_FIELDS = ("source", "name", "path", "ordinal", "start", "end", "first_line", "task")
BLOB = pa.schema(
    [
        ("kind", pa.string()),
        ("source", pa.int32()),
        ("bucket", pa.int32()),
        ("part", pa.int32()),
        ("payload", pa.binary()),
    ]
)
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")  # the shuffle's bytes per event
# file-name prefixes -w<n> of the tasks: whole files, replay partitions, byte ranges
WHOLE_WORKER, REPLAY_WORKER, RANGE_WORKER = 10**7, 2 * 10**7, 10**9
# Log bytes per task: two tasks per core for the input at hand, within these bounds. Below
# the floor a task's fixed cost (scheduling, a Worker and its Parquet files) outweighs its
# work; above the ceiling a replay task's memory grows (about 16 bytes of Arrow per log byte).
TASK_BYTES_MIN, TASK_BYTES_MAX = 8 << 20, 64 << 20


def task_bytes(total: int, cores: int) -> int:
    """Log bytes per parse or replay task for `total` bytes of input on `cores` cores."""
    return min(TASK_BYTES_MAX, max(TASK_BYTES_MIN, -(-total // (2 * max(cores, 1)))))


@dataclass
class SparkEngine:
    """The `engine` argument of `pipeline.ingest.run.ingest`. `range_bytes`: a plain file
    larger than this is parsed as byte ranges of this size (None: `task_bytes` of the input)."""

    spark: "SparkSession"
    range_bytes: int | None = None
    last: "SparkReading | None" = None  # the latest reading (its `checks` say how the tasks ran)

    @property
    def parallelism(self) -> int:
        """Cores Spark has: the local ingest sizes its buckets (two per core at least) by it."""
        try:
            return max(1, int(self.spark.sparkContext.defaultParallelism))
        except Exception:  # Spark Connect has no SparkContext
            return max(1, int(self.spark.conf.get("spark.sql.shuffle.partitions", "2") or "2"))

    def check(self, sources: list[InputSource]) -> None:
        """Refuse a stream: tasks open the files they read, and a stream can be read once."""
        from pipeline.reader.inputs import InputError

        for source in sources:
            if source.is_stream:
                raise InputError(
                    source.name,
                    "a stream (stdin, a pipe) cannot be read by --engine spark, whose tasks open the files "
                    "they read; ingest it with --engine local",
                )

    def reading(self, config: Config, stored: incremental.Stored, progress) -> "SparkReading":
        self.last = SparkReading(self, config, stored, progress)
        return self.last


@dataclass
class TaskChecks:
    """What the tasks report about how they ran (bench/spark.py and the tests read it)."""

    bulk_rows: int = 0  # events decoded by the compiled scan, the local engine's fast parse
    compiled_in_task: int = 0  # scan compilations in tasks: 0 once the compile cache is warm
    parse_tasks: int = 0
    replay_tasks: int = 0
    # seconds inside the task functions, wall and CPU of the Python worker (all its threads):
    # against the local engine's CPU, what Spark's tasks cost beyond the shared work
    parse_wall: float = 0.0
    parse_cpu: float = 0.0
    replay_wall: float = 0.0
    replay_cpu: float = 0.0
    partitions: int = 0
    range_bytes: int = 0
    jobs: list[str] = field(default_factory=list)


class SparkReading:
    """`pipeline.ingest.run._Reading` on Spark: `read_all`, `replay_all`, `close` (the files
    written), and the touched games and superseded lines of the parse."""

    def __init__(self, engine: SparkEngine, config: Config, stored: incremental.Stored, progress):
        # tasks may run in another working directory: every path they get is absolute
        reread = {
            name: incremental.StoredLines(
                [_absolute(p) for p in lines.events], [_absolute(p) for p in lines.rejects], list(lines.names)
            )
            for name, lines in config.reread.items()
        }
        staging = config.staging if isinstance(config.staging, str) else config.staging.resolve()
        config = replace(config, staging=staging, reread=reread)
        self.engine, self.spark, self.config, self.stored, self.progress = (
            engine,
            engine.spark,
            config,
            stored,
            progress,
        )
        self.spills: list[Path] = []  # nothing is spilled on this machine: Spark shuffles
        self.touched: set[str] = set()
        self.superseded: list[tuple[str, int, Any]] = []
        self.rejected_starts: dict[str, tuple[str, int, str]] = {}  # game_id -> (file, line, reason)
        self.files: dict[str, list[Path]] = {name: [] for name in tables.TABLES}
        self.checks = TaskChecks()
        self._parsed: "DataFrame | None" = None
        self._replayed: BucketResult | None = None  # the one-job path's replay, done with the parse
        self._unpersisted: "DataFrame | None" = None  # the parse, to run again if inputs are dropped
        self._keys: list[int] = []
        self._by_source: dict[int, dict[str, Any]] = {}  # per input: touched, superseded, files
        self._dropped: set[int] = set()

    def read_all(self, to_read: list[tuple[InputSource, Any]], block_bytes: int) -> list[Any]:
        """The parse stage (and, on a first ingest, the replay stage in the same job). A
        plain file of more than one task's share is parsed as byte ranges by several tasks,
        each knowing its first line number; any other file (gzip, small) by one task
        reading it whole, as the local splitter does (in blocks of `block_bytes`)."""
        from pipeline.ingest.run import SourceCounts
        from pipeline.reader.inputs import InputError
        from pipeline.reader.split import hash_and_count_ranges

        counts = [SourceCounts(path=c.path, size=c.size, sha256=c.sha256, identity=c.identity) for _, c in to_read]
        cores = self.engine.parallelism
        total = sum(c.size or 0 for c in counts)
        range_bytes = self.engine.range_bytes or task_bytes(total, cores)
        rows = []
        spans: dict[int, dict[int, tuple[int, int, int]]] = {}  # input -> range start -> the span it must read
        for index, (source, _) in enumerate(to_read):
            if source.is_stdin:
                raise ValueError("stdin cannot be read by --engine spark")  # refused by SparkEngine.check first
            ordinal = self.stored.ordinal(source.name, self.config.ingest_id)
            path = source.url if source.url is not None else _absolute(source.path)
            size = _plain_size(path)
            if size is None or size <= range_bytes:
                rows.append((index, source.name, path, ordinal, -1, -1, 0, WHOLE_WORKER + index))
                continue
            sha256, lines, crcs = hash_and_count_ranges(path, size, range_bytes)
            c = counts[index]
            c.size, c.sha256, c.content_bytes, c.content_sha256 = size, sha256, size, sha256
            spans[index] = {}
            first = 1
            for k, (start, n) in enumerate(zip(range(0, size, range_bytes), lines)):
                spans[index][start] = (max(start - 1, 0), min(start + range_bytes, size), crcs[k])
                end = min(start + range_bytes, size)
                rows.append((index, source.name, path, ordinal, start, end, first, RANGE_WORKER + index * 10**6 + k))
                first += n
        partitions = min(self.config.buckets, max(cores, -(-total // range_bytes)))
        self._keys = partition_keys(partitions)
        self.checks = TaskChecks(parse_tasks=len(rows), partitions=partitions, range_bytes=range_bytes)
        # one partition per parse task, made by `range` (no shuffle of the task list): task i
        # parses tasks[i], which travels with the function
        tasks = [dict(zip(FILE_FIELDS, row)) for row in rows]
        numbers = self.spark.range(0, len(tasks), 1, max(1, len(tasks)))
        parsed = numbers.mapInArrow(_parse_task(self.config, block_bytes, self._keys, tasks), BLOB_SCHEMA)
        self._unpersisted = parsed
        if self.config.stored_games or self.config.reread:  # the replay needs the parse's results first
            self._parsed = parsed.persist()
            self.checks.jobs.append("parse")
            outputs = parsed.filter("kind = 'result'").select("source", "payload").collect()
        else:
            self.checks.jobs.append("parse+replay")
            outputs = self._replay(parsed)
        read: dict[int, dict[int, tuple]] = {index: {} for index in spans}
        for row in outputs:
            r = json.loads(row["payload"])
            c = counts[row["source"]]
            if r["whole"]:
                c.lines, c.size, c.sha256, c.problems = r["lines"], r["size"], r["sha256"], r["problems"]
                c.content_sha256, c.content_bytes = r["content_sha256"], r["content_bytes"]
            else:
                c.lines += r["lines"]
                read[row["source"]][r["start"]] = tuple(r["span"])
            c.blank_lines += r["blank"]
            c.events += r["events"]
            c.duplicates += r["duplicates"]
            c.rejects += r["rejects"]
            mine = self._by_source.setdefault(row["source"], {"touched": set(), "superseded": [], "files": []})
            mine["touched"] |= set(r["touched"])
            mine["superseded"] += [tuple(s) for s in r["superseded"]]
            mine["files"].append(r["files"])
            self.checks.bulk_rows += r["bulk_rows"]
            self.checks.compiled_in_task += r["compiled"]
            self.checks.parse_wall += r["wall"]
            self.checks.parse_cpu += r["cpu"]
            for game_id, file, line, reason in r["rejected_starts"]:
                self.rejected_starts.setdefault(game_id, (file, line, reason))
        for index, expected in spans.items():  # what the tasks read is what the manifest's hash covers
            if read[index] != expected:
                raise InputError(
                    counts[index].path,
                    "the file changed while it was being ingested; nothing was committed, ingest it again",
                )
        self._gather()
        self.progress(sum(c.size or 0 for c in counts))
        return counts

    def drop(self, inputs: set[int]) -> None:
        """The rows of these inputs leave the run (their content is stored already): their
        events are not replayed, their parse tasks' files not committed. On the one-job path
        their events were replayed with the rest: that replay's files are deleted and the
        replay runs again (as a second job, its parse run again into the same files)."""
        self._dropped |= inputs
        self._gather()
        if self._replayed is not None and inputs:
            for paths in self.files.values():
                for path in paths:
                    _delete(path)
            self.files = {name: [] for name in tables.TABLES}
            self._replayed = None
            self._parsed = self._unpersisted

    def _gather(self) -> None:
        kept = [m for i, m in self._by_source.items() if i not in self._dropped]
        self.touched = set().union(*(m["touched"] for m in kept))
        self.superseded = [s for m in kept for s in m["superseded"]]

    def replay_all(self, spills: list[Path]) -> BucketResult:
        """Replay every game: the parsed events plus the stored events of continued games
        (`spills[0]`, written by `incremental.spill_stored_games`), by bucket."""
        stored = _blobs_of_spill(spills[0], self._keys) if spills else []
        if self._replayed is not None:  # the one-job path: nothing stored could be touched
            assert not stored, "stored events to replay again on a first ingest"
            return self._replayed
        assert self._parsed is not None
        events = self._parsed.filter("kind in ('events', 'rejected')")
        if self._dropped:
            events = events.filter(f"source not in ({', '.join(map(str, sorted(self._dropped)))})")
        if stored:
            events = events.unionByName(self.spark.createDataFrame(stored, BLOB_SCHEMA))
        self.checks.jobs.append("replay")
        self._replay(events)
        if self._parsed.is_cached:
            self._parsed.unpersist()
        assert self._replayed is not None
        return self._replayed

    def _replay(self, blobs: "DataFrame") -> list[Any]:
        """Shuffle the blobs to their replay partitions and replay them; the replay's totals
        go to `_replayed`, and the parse results that came along are returned."""
        routed = blobs.repartition(len(self._keys), "part")
        rows = routed.mapInArrow(_replay_task(self.config), BLOB_SCHEMA).collect()
        total = BucketResult()
        passed = []
        for row in rows:
            if row["kind"] != "replayed":
                passed.append(row)
                continue
            r = json.loads(row["payload"])
            total.games += r["games"]
            total.findings_error += r["findings_error"]
            total.findings_warning += r["findings_warning"]
            self.checks.replay_tasks += 1
            self.checks.replay_wall += r["wall"]
            self.checks.replay_cpu += r["cpu"]
            self._add_files(r["files"])
        self._replayed = total
        return passed

    def close(self) -> dict[str, list[Path]]:
        """The files written, without those of dropped inputs' parse tasks (deleted)."""
        for index, mine in self._by_source.items():
            for files in mine["files"]:
                if index not in self._dropped:
                    self._add_files(files)
                    continue
                for paths in files.values():
                    for path in paths:
                        _delete(path)
        self._by_source = {}
        return self.files

    def _add_files(self, files: dict[str, list[str]]) -> None:
        for name, paths in files.items():
            self.files[name].extend(p if storage.is_url(p) else Path(p) for p in paths)  # type: ignore[misc]


def partition_keys(partitions: int) -> list[int]:
    """For each replay partition p, a key that `repartition(partitions, key)` sends to p.

    Spark places a row by the Murmur3 hash of its key modulo the partition count, so keyed
    by bucket number several buckets would share a partition while others stay empty. Keyed
    by these values, bucket b goes to partition b mod `partitions`: every task gets its
    share. `spark_hash_int` is Spark's hash of an int (tests/spark/test_partitioning.py
    holds it to Spark's own), so finding the keys costs no Spark job."""
    keys: dict[int, int] = {}
    candidate = 0
    while len(keys) < partitions:
        keys.setdefault(spark_hash_int(candidate) % partitions, candidate)
        candidate += 1
    return [keys[p] for p in range(partitions)]


def spark_hash_int(value: int, seed: int = 42) -> int:
    """Spark's `hash(int)`: Murmur3 x86 32-bit of the 4-byte int with seed 42, signed."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    k1 = (value & mask) * 0xCC9E2D51 & mask
    k1 = rotl(k1, 15) * 0x1B873593 & mask
    h1 = rotl(seed ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & mask
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & mask
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & mask
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def _delete(path: Any) -> None:
    """Remove a staged file the commit will not take (a local path or a URL)."""
    if storage.is_url(path):
        storage.remove(path)
    else:
        Path(path).unlink(missing_ok=True)


def _absolute(path: Any) -> str:
    """A path as every task can open it: a URL as it is, a local path made absolute."""
    return path if storage.is_url(path) else str(Path(path).resolve())


def _plain_size(path: str) -> int | None:
    """The size of a file that byte ranges can split: not gzip (a stream is read from its
    start), readable; None otherwise (read whole, by one task)."""
    from pipeline.reader.sniff import GZIP_MAGIC

    try:
        with storage.open_binary(path) as fh:
            if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                return None
            return fh.seek(0, 2)
    except OSError:
        return None


def _range_block(index: int, name: str, path: str, start: int, end: int, first_line: int):
    """The whole lines starting in [start, end) of a plain file, as a splitter Block, and
    the span of bytes read [first, end) with its CRC-32: the driver holds it to the span it
    hashed for the manifest, so a file rewritten meanwhile, even to the same size, commits
    nothing."""
    from pipeline.reader.split import Block, read_range

    read = read_range(path, start, end)
    return Block(index, name, first_line, read.data), (read.first, read.last, read.crc)


def _blobs_of_spill(path: Path, keys: list[int]) -> list[tuple[str, int, int, int, bytes]]:
    """A bucketed spill file (one batch per bucket) as rows of BLOB_SCHEMA."""
    if not path.exists():
        return []
    reader = pa.ipc.open_file(pa.memory_map(str(path)))
    out = []
    for bucket in range(reader.num_record_batches):
        batch = reader.get_batch(bucket)
        if batch.num_rows:
            out.append(("events", -1, bucket, keys[bucket % len(keys)], _ipc(pa.Table.from_batches([batch]))))
    return out


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(payload)).read_all()


def _blob_batch(rows: list[tuple[str, int, int, int, bytes]]) -> pa.RecordBatch:
    kinds, sources, buckets, parts, payloads = zip(*rows) if rows else ((), (), (), (), ())
    return pa.RecordBatch.from_arrays(
        [
            pa.array(kinds, pa.string()),
            pa.array(sources, pa.int32()),
            pa.array(buckets, pa.int32()),
            pa.array(parts, pa.int32()),
            pa.array(payloads, pa.binary()),
        ],
        schema=BLOB,
    )


# ---------------------------------------------------------------------- the tasks
def _task_start() -> None:
    """As in the local engine's worker processes: no cyclic collector while parse and
    replay hold many small objects (the replay frees its cycles itself), and one Arrow
    compute thread per task (Spark already runs a task per core)."""
    gc.disable()
    pa.set_cpu_count(1)


def _task_end() -> None:
    gc.enable()


def _compilations() -> int:
    """Compilations of the scan in this process so far (cache misses): numba loads it from
    the on-disk cache when that is warm."""
    from pipeline.ingest import scan

    total = 0
    for dispatcher in scan.compiled_functions():
        stats = getattr(dispatcher, "stats", None)
        total += sum(getattr(stats, "cache_misses", {}).values()) if stats is not None else 0
    return total


def _parse_task(config: Config, block_bytes: int, keys: list[int], tasks: list[dict]):
    """The parse stage's function: for each file (or byte range) of the partition, the local
    Worker's parse of every block (Parquet of events, rejects and bad-line findings written
    to staging), then one blob per non-empty bucket of its events and one result row."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pipeline.reader.split import split_source

        _task_start()
        try:
            for batch in batches:
                for number in batch.column("id").to_pylist():
                    yield from _parse_one(config, block_bytes, keys, tasks[number], split_source)
        finally:
            _task_end()

    return run


def _parse_one(config: Config, block_bytes: int, keys: list[int], f: dict, split_source) -> Iterator[pa.RecordBatch]:
    wall, cpu = time.perf_counter(), time.process_time()
    url = f["path"] if storage.is_url(f["path"]) else None
    source = InputSource(f["name"], None if url else Path(f["path"]), url=url)
    whole = f["start"] < 0
    span = None
    if whole:
        blocks = split_source(source, f["source"], block_bytes, config.max_line)
    else:
        block, span = _range_block(f["source"], f["name"], f["path"], f["start"], f["end"], f["first_line"])
        blocks = iter([block])
    before = _compilations()
    worker = Worker(config, f["task"])
    result: dict[str, Any] = {
        "blank": 0,
        "events": 0,
        "duplicates": 0,
        "rejects": 0,
        "touched": set(),
        "superseded": [],
        "whole": whole,
        "lines": 0,
        "bulk_rows": 0,
        "rejected_starts": [],
    }
    for block in blocks:
        r = worker.parse(block, f["ordinal"], None)
        for key in ("blank", "events", "duplicates", "rejects", "lines", "bulk_rows"):
            result[key] += getattr(r, key)
        result["touched"] |= r.touched
        result["superseded"] += r.superseded
        result["rejected_starts"] += r.rejected_starts
        assert r.routed is not None
        ordered, sizes = r.routed
        rows, start = [], 0
        for bucket, size in enumerate(sizes):
            if size:
                part = keys[bucket % len(keys)]
                rows.append(("events", f["source"], bucket, part, _ipc(ordered.slice(start, size))))
            start += size
        del ordered
        for game_id, file, line, reason in r.rejected_starts:
            bucket = route.buckets_of(pa.array([game_id]), config.buckets)[0].as_py()
            payload = json.dumps([game_id, file, line, reason]).encode()
            rows.append(("rejected", f["source"], bucket, keys[bucket % len(keys)], payload))
        if rows:
            yield _blob_batch(rows)
    files = worker.close()
    p = source.problem
    if whole:
        result.update(
            lines=source.lines,
            size=source.raw_bytes,
            sha256=source.sha256,
            content_sha256=source.content_sha256,
            content_bytes=source.content_bytes,
        )
    else:
        result.update(start=f["start"], span=span)
    result.update(
        problems=[] if p is None else [{"file": p.file, "line": p.line, "reason": p.reason}],
        touched=sorted(result["touched"]),
        files={name: [str(x) for x in paths] for name, paths in files.items()},
        compiled=_compilations() - before,
        wall=time.perf_counter() - wall,
        cpu=time.process_time() - cpu,
    )
    part = keys[f["source"] % len(keys)]
    yield _blob_batch([("result", f["source"], -1, part, json.dumps(result).encode())])


def _replay_task(config: Config):
    """The replay stage's function: the partition's events (whole games: every blob of a
    bucket lands in one partition) replayed by the local Worker, which writes the derived
    tables. Rows that are not events (parse results, on the one-job path) pass through."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        _task_start()
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            parts: list[pa.Table] = []
            rejected_starts: dict[str, tuple[str, int, str]] = {}
            for batch in batches:
                events = pa.compute.equal(batch.column("kind"), "events")
                rejected = pa.compute.equal(batch.column("kind"), "rejected")
                others = batch.filter(pa.compute.invert(pa.compute.or_(events, rejected)))
                if others.num_rows:
                    yield others
                parts += [_from_ipc(p) for p in batch.filter(events).column("payload").to_pylist()]
                for payload in batch.filter(rejected).column("payload").to_pylist():
                    game_id, file, line, reason = json.loads(payload)
                    rejected_starts.setdefault(game_id, (file, line, reason))
            if not parts:
                return
            events = pa.concat_tables([p.cast(parts[0].schema) for p in parts]).combine_chunks()
            del parts
            partition = TaskContext.get().partitionId()  # type: ignore[union-attr]  # set inside a task
            worker = Worker(config, REPLAY_WORKER + partition)
            r = worker.replay_events(events, rejected_starts)
            del events
            files = worker.close()
            result = {
                "games": r.games,
                "findings_error": r.findings_error,
                "findings_warning": r.findings_warning,
                "files": {name: [str(x) for x in paths] for name, paths in files.items()},
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
            }
            yield _blob_batch([("replayed", -1, partition, -1, json.dumps(result).encode())])
        finally:
            _task_end()

    return run


def ingest(spark: "SparkSession", specs: list[str], out: Path | str, default_rules=None, **kwargs):
    """`pipeline.ingest.ingest` with stages 2-3 on Spark; same arguments, same summary.
    `range_bytes` (keyword): the byte range of a plain file per parse task (None: chosen
    from the input's size)."""
    from pipeline.ingest.run import ingest as local_ingest

    engine = SparkEngine(spark, kwargs.pop("range_bytes", None))
    return local_ingest(specs, out, default_rules, engine=engine, **kwargs)

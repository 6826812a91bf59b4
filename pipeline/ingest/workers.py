"""The work of one core: parse blocks (stage 2) and route them (3), replay buckets (4), and
write what they give (5). The main process also splits (stage 1) and commits.

A `Worker` is the same object in a child process and inline in the main process: the pool
decides where a task runs, not what it does. The main process is always one of the
workers; on a multi-core machine, large inputs get more in spawned processes. Each worker
writes its own Parquet files (prefix `<ingest_id>-w<N>`), so no two processes share a file.

Parallel work runs in spawned processes, not threads: parsing and the reference replay
are Python and hold the GIL. Spawned, not forked: the parent may hold DuckDB or Arrow
thread pools, which fork does not copy safely.
"""

from __future__ import annotations

import gc
import os
import pickle
import queue
import select
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import worker_boot

from pipeline.dataset import tables
from pipeline.dataset import batches
from pipeline.ingest import route
from pipeline.ingest.incremental import drop_stored_lines
from pipeline.ingest.parse import parse_block
from pipeline.ingest.sinks import Sinks
from pipeline.dataset.store import crash_point
from pipeline.reader.split import Block
from pipeline.reader.inputs import InputError
from pipeline.replay.partition import bad_line_findings, replay_partition
from pipeline.rules import Ruleset


@dataclass
class Config:
    """What every worker of one ingest needs to know; sent once to each process."""

    ingest_id: str
    staging: Path  # or a URL (str): the next snapshot's prefix of a dataset on an object store
    default_rules: Ruleset
    buckets: int
    max_line: int
    stored_games: frozenset[str] = frozenset()  # games with events in the dataset
    reread: dict[str, "Any"] = field(default_factory=dict)  # file name → its stored lines (incremental)
    reference: bool = False  # every game by the reference engine (pipeline.engines.Routing)
    jit: bool = True  # numba-compiled scan and kernel (False: plain Python, the same rows)
    bulk_scan: bool = True  # the compiled scan first (False: msgspec's decoder for every line, the same rows)
    spill: Path | None = None  # where blocks spill when staging is not on this machine (a URL)

    @property
    def spill_dir(self) -> Path:
        return self.spill if self.spill is not None else Path(self.staging) / "spill"


@dataclass
class BlockResult:
    source: int
    lines: int = 0
    blank: int = 0
    events: int = 0
    duplicates: int = 0
    rejects: int = 0
    touched: set[str] = field(default_factory=set)  # stored games that get events here
    superseded: list[tuple[str, int, str | None]] = field(default_factory=list)  # (file, line, game_id)
    bulk_rows: int = 0  # events the compiled scan decoded (the rest went through msgspec or the reference)
    # spill_path None (the Spark engine's tasks): the block's events with the ordering
    # column, grouped by bucket, and the rows of each bucket, instead of a spill file
    routed: tuple[pa.Table, list[int]] | None = None
    # (game_id, file, line, reason) of each rejected game_start: its game's first
    # unknown_game message names it (pipeline.replay.engine.Replayer.note_rejected_start)
    rejected_starts: list[tuple[str, str, int, str]] = field(default_factory=list)
    spilled: bool = False  # a spill file was written (a block without events writes none)
    bucket_rows: list[int] = field(default_factory=list)  # per bucket: events spilled
    bucket_games: list[int] = field(default_factory=list)  # per bucket: game ids among them


@dataclass
class BucketResult:
    events: int = 0  # replayed (the progress of the replay stage)
    games: int = 0
    findings_error: int = 0
    findings_warning: int = 0

    def __iadd__(self, other: "BucketResult") -> "BucketResult":
        self.events += other.events
        self.games += other.games
        self.findings_error += other.findings_error
        self.findings_warning += other.findings_warning
        return self


# What replaying a bucket holds, about: the reference replay's Python records per event
# (the columns as lists, the event, its records) and the state and results of each game.
# A bucket estimated past REPLAY_BUDGET is replayed in parts (a log of a million one-line
# games, say, that gzip squeezed into a few MB: the bucket count follows the file's size).
REPLAY_BYTES_PER_ROW = 1_000
REPLAY_BYTES_PER_GAME = 6_000
REPLAY_BUDGET = 96 << 20


def replay_parts(rows: int, games: int) -> int:
    """Parts to replay a bucket of `rows` events and `games` game ids in."""
    estimate = rows * REPLAY_BYTES_PER_ROW + games * REPLAY_BYTES_PER_GAME
    return max(1, -(-estimate // REPLAY_BUDGET))


class Worker:
    def __init__(self, config: Config, number: int):
        self.config = config
        self.number = number  # 0: the main process's own worker
        self.sinks = Sinks(config.staging, f"{config.ingest_id}-w{number}")
        self.spills = route.SpillFiles()

    def parse(self, block: Block, file_ordinal: int, spill_path: Path | None) -> BlockResult:
        """Parse a block, route its events to the spill file (or, without one, to the
        result's `routed`), write events and rejects."""
        c = self.config
        if self.number:
            crash_point("worker_parse")  # tests: a spawned worker dies
        block = block.attached()
        parsed = parse_block(block, c.ingest_id, c.max_line, jit=c.jit, bulk_scan=c.bulk_scan)
        result = BlockResult(block.source, lines=parsed.lines, blank=parsed.blank, bulk_rows=parsed.bulk_rows)
        events, bad = parsed.events, parsed.bad
        if block.name in c.reread:
            events, bad, result.duplicates, result.superseded = drop_stored_lines(
                c.reread[block.name], block, events, bad
            )
        if spill_path is None:
            events, routed, rows, games = route.by_bucket(events, file_ordinal, c.buckets)
            result.routed = (routed, rows)
        else:
            spilled = route.spill(events, file_ordinal, c.buckets, spill_path)
            events, rows, games = spilled.events, spilled.rows, spilled.games
        result.spilled = spill_path is not None and events.num_rows > 0
        result.bucket_rows, result.bucket_games = rows, games
        self.sinks.write("events", events)
        if bad:
            self.sinks.write("rejects", batches.rejects_table(bad, c.ingest_id))
            self.sinks.write("findings", bad_line_findings(bad))
        result.events, result.rejects = events.num_rows, len(bad)
        result.rejected_starts = [
            (b.game_id, b.file, b.line, b.reason) for b in bad if b.type == "game_start" and b.game_id is not None
        ]
        if c.stored_games and events.num_rows:
            ids = pc.unique(events.column("game_id")).to_pylist()
            result.touched = {g for g in ids if g in c.stored_games}
        return result

    def replay(
        self,
        bucket: int,
        spill_paths: list[Path],
        rows: int = 0,
        games: int = 0,
        rejected_starts: dict[str, tuple[str, int, str]] | None = None,
    ) -> BucketResult:
        """Replay the whole games of one bucket and write their derived tables; a bucket
        whose `rows` events of `games` games would take more than REPLAY_BUDGET is replayed
        in parts, each a share of its games read from the spill files again."""
        parts = replay_parts(rows, games)
        buckets = self.config.buckets
        total = BucketResult()
        for part in range(parts):

            def keep(batch: pa.RecordBatch, part: int = part) -> pa.RecordBatch:
                return batch.filter(route.part_of(batch.column("game_id"), buckets, parts) == part)

            events = self.spills.gather(spill_paths, bucket, keep if parts > 1 else None)
            total += self._replay_and_write(events, rejected_starts)
            del events  # frees the bucket's batches
        return total

    def replay_events(
        self, events: pa.Table, rejected_starts: dict[str, tuple[str, int, str]] | None = None
    ) -> BucketResult:
        """Replay whole games (`events` with the ordering column: a Spark replay task's
        partition) and write their derived tables."""
        return self._replay_and_write(events, rejected_starts)

    def _replay_and_write(
        self, events: pa.Table, rejected_starts: dict[str, tuple[str, int, str]] | None
    ) -> BucketResult:
        out = replay_partition(
            events,
            self.config.default_rules,
            reference=self.config.reference,
            jit=self.config.jit,
            rejected_starts=rejected_starts,
        )
        replayed = events.num_rows
        del events  # frees the bucket's batches
        for name, table in out.items():
            self.sinks.write(name, table)
        # The collector is off in workers (parse and replay hold many small objects), but a
        # replayed bucket leaves reference cycles behind (the engine's state): free them now,
        # or memory grows with every bucket. What survives is long-lived (modules, compiled
        # code, the sinks): frozen, so the next bucket's collection scans only its own objects
        # (each full scan cost about 0.05 s).
        gc.collect()
        gc.freeze()
        findings = out["findings"]
        warnings = pc.sum(pc.equal(findings.column("severity"), "warning")).as_py() or 0
        return BucketResult(replayed, out["games"].num_rows, findings.num_rows - warnings, warnings)

    def close(self) -> dict[str, list[Path]]:
        gc.unfreeze()  # inline, this is the caller's process: its objects are collectable again
        self.spills.close()
        return self.sinks.close()


# ---------------------------------------------------------------------- the pool
class WorkerError(RuntimeError):
    """A worker failed or died: a bug, reported with its traceback."""


class Pool:
    """`workers` workers for one ingest: this process is always one of them (an inline
    `Worker`), and `workers - 1` more are spawned processes pulling tasks from one queue.

    `run(tasks)` hands each task to the spawned workers while fewer than QUEUE_DEPTH each
    are queued for them, and otherwise runs it here; results come back in completion order,
    tagged. So this process starts parsing at once, while the spawned workers are still
    importing, no core waits at the end of a stage for more than one task,
    and two cores cost one extra interpreter (about 175 MiB), not two."""

    QUEUE_DEPTH = 2  # tasks queued per spawned worker: it never waits, and this process refills it between its own

    def __init__(self, config: Config, workers: int):
        self.config = config
        self.inline = Worker(config, 0)
        self._procs = []
        self._queued = 0  # tasks sent to the spawned workers and not yet answered
        if workers > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")
            self._inbox = ctx.Queue()
            self._outbox = ctx.Queue()
            for number in range(1, workers):
                payload = pickle.dumps((config, number))
                p = ctx.Process(
                    target=worker_boot.run,
                    daemon=True,
                    args=(f"{__name__}:_worker_main", payload, self._inbox, self._outbox, os.getpid()),
                )
                p.start()
                self._procs.append(p)

    def run(self, tasks: Iterable[tuple[Any, str, tuple]]) -> Iterator[tuple[Any, Any]]:
        """Run every (tag, method, args) task; yields (tag, result) as tasks finish. Raises
        WorkerError if a spawned worker failed or died."""
        depth = self.QUEUE_DEPTH * len(self._procs)
        for tag, method, args in tasks:
            yield from self._finished()
            if self._queued < depth:
                self._queued += 1
                # a plain file's block travels as its place in the file (Block.detached)
                self._inbox.put((tag, method, tuple(a.detached() if isinstance(a, Block) else a for a in args)))
            else:
                yield tag, getattr(self.inline, method)(*args)
        while self._queued:
            self._queued -= 1
            yield self._receive(block=True)

    def _finished(self) -> Iterator[tuple[Any, Any]]:
        """Results the spawned workers have sent back, without waiting."""
        while self._queued:
            answer = self._receive(block=False)
            if answer is None:
                return
            self._queued -= 1
            yield answer

    def _receive(self, block: bool) -> Any:
        while True:
            try:
                status, tag, payload = self._outbox.get(timeout=1.0) if block else self._outbox.get_nowait()
            except queue.Empty:
                dead = [p for p in self._procs if not p.is_alive()]
                if dead:
                    raise WorkerError(f"ingest worker process died (exit code {dead[0].exitcode})") from None
                if not block:
                    return None
                continue
            if status == "oserror":
                errno, strerror, filename = payload
                raise OSError(errno, strerror, filename) if filename is not None else OSError(errno, strerror)
            if status == "input":
                raise InputError(*payload)
            if status == "error":
                raise WorkerError(f"ingest worker failed:\n{payload}")
            return tag, payload

    def close(self) -> dict[str, list[Path]]:
        """Every worker closes its files; the files of all workers, per table."""
        files: dict[str, list[Path]] = {name: [] for name in tables.TABLES}
        for _ in self._procs:
            self._inbox.put(None)
        for name, paths in self.inline.close().items():
            files[name].extend(paths)
        for _ in self._procs:
            tag, payload = self._receive(block=True)
            for name, paths in payload.items():
                files[name].extend(paths)
        for p in self._procs:
            p.join()
        if self._procs:
            _end_feeder(self._inbox)
        return files

    def terminate(self) -> None:
        gc.unfreeze()
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            p.join()
        if self._procs:
            _end_feeder(self._inbox)


def _end_feeder(inbox: Any, patience: float = 10.0) -> None:
    """End the inbox's feeder thread (the thread that writes queued tasks into its pipe) once
    the workers are stopped, before this process goes on to exit.

    Tasks still queued for the stopped workers can fill the pipe, and the thread then waits
    on it forever, holding the queue's lock and semaphore. Left so, the thread races the
    interpreter's exit: stopped between unlinking a semaphore and telling multiprocessing's
    resource tracker, it makes the tracker print "leaked semaphore" warnings under the
    one-line error of a failed ingest. So this side reads the pipe empty until the thread
    has written its last task and ended. It reads through a handle of its own: the thread
    closes the queue's handles when it ends, which may be while a read is under way.
    `_thread` and `_reader` are the queue's internals: nothing public reads back what no
    worker will take (`get` may wait forever on the read lock a stopped worker held)."""
    thread = getattr(inbox, "_thread", None)
    try:
        pipe = os.dup(inbox._reader.fileno()) if thread is not None else None
    except OSError:  # the thread has closed the pipe already: it is done
        pipe = None
    inbox.close()  # the thread ends after the tasks it has
    try:
        deadline = time.monotonic() + patience
        while thread is not None and thread.is_alive() and time.monotonic() < deadline:
            if pipe is None:
                thread.join(0.05)
                continue
            readable, _, _ = select.select([pipe], [], [], 0.05)
            if readable and not os.read(pipe, 1 << 20):  # the thread closed its end: ending
                thread.join(0.05)
    finally:
        if pipe is not None:
            os.close(pipe)
    if thread is not None and thread.is_alive():
        inbox.cancel_join_thread()  # do not hang at exit on a thread that would not end
    else:
        inbox.join_thread()


def _worker_main(config: Config, number: int, inbox, outbox, parent: int) -> None:
    gc.disable()  # parse and replay hold many small objects; the collector would rescan them
    # one compute thread per worker: the workers already fill the cores, and Arrow's own
    # pool of one thread per core in each of them only adds switching
    pa.set_cpu_count(1)
    try:
        worker = Worker(config, number)
        while True:
            try:
                task = inbox.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:
                    os._exit(1)  # the main process is gone (killed): stop
                continue
            if task is None:
                outbox.put(("closed", None, worker.close()))
                return
            tag, method, args = task
            outbox.put(("ok", tag, getattr(worker, method)(*args)))
    except InputError as exc:  # an input changed under us: the parent stops with its words
        outbox.put(("input", None, (exc.spec, exc.reason)))
    except OSError as exc:  # a full or read-only disk: the parent reports it as for its own writes
        outbox.put(("oserror", None, (exc.errno, exc.strerror, exc.filename)))
    except BaseException:
        outbox.put(("error", None, traceback.format_exc()))

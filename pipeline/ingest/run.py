"""Ingest orchestration: the staged pipeline, from input specs to a committed snapshot.

    split (this process)  →  parse + route (workers)  →  replay per bucket (workers)  →  commit
    pipeline.reader.split    .parse, .route              pipeline.replay.partition        .store

1. split: each input is cut into blocks of whole lines (`split.split_source`), hashed and
   counted as it is read; a gzip stream is decompressed here, once.
2. parse + route: a worker turns a block into the `events` Arrow table and its bad lines
   (`parse.parse_block`), writes events, rejects and the bad lines' findings, and spills
   the events to an Arrow IPC file grouped by hash bucket of game id (`route.spill`).
3. replay: once every block is parsed, a worker replays each bucket (whole games, in reading
   order) with `replay_partition` and writes the derived tables.
4. commit: games that continue stored ones, and stored lines that a re-read file changed,
   are handled by `incremental`; the store publishes the snapshot atomically.

This process is always a worker itself (it parses and replays between cutting blocks);
inputs of 32 MiB or more on a multi-core machine add a spawned worker process per further
core (at most 8 in all); smaller ones run in this process alone (a process's start-up
would cost more than it saves).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Callable, Sequence

from pipeline.ingest import incremental
from pipeline.ingest.route import bucket_count
from pipeline.reader.split import BLOCK_BYTES, MAX_LINE_BYTES, split_source
from pipeline.dataset.store import Store, crash_point
from pipeline.ingest.workers import Config, Pool
from pipeline.reader.inputs import InputSource, resolve
from pipeline.rules import Ruleset
from pipeline.errors import UserError


@dataclass
class SourceCounts:
    path: str
    size: int | None = None
    sha256: str | None = None
    lines: int = 0
    blank_lines: int = 0
    events: int = 0
    duplicates: int = 0
    rejects: int = 0
    # rows of earlier readings of this file (events, rejects) that this reading superseded:
    # they left the tables, so the tables hold sum(events - superseded_events) over `files`
    superseded_events: int = 0
    superseded_rejects: int = 0
    skipped: bool = False
    progress: int = 0  # raw bytes already reported to the progress bar
    problems: list[dict[str, Any]] = field(default_factory=list)

    def as_manifest(self, ingest_id: str) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "sha256": self.sha256,
            "ingest_id": ingest_id,
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "events": self.events,
            "duplicates": self.duplicates,
            "rejects": self.rejects,
            "superseded_events": self.superseded_events,
            "superseded_rejects": self.superseded_rejects,
            "problems": self.problems,
        }


@dataclass
class IngestSummary:
    dataset: str
    ingest_id: str
    files: int = 0  # files read
    files_skipped: int = 0  # content ingested before
    lines: int = 0
    blank_lines: int = 0
    events: int = 0  # accepted and written
    duplicates: int = 0
    rejects: int = 0
    games: int = 0  # game results written by this run (new or recomputed)
    games_recomputed: int = 0
    superseded: int = 0  # stored lines replaced: their file changed at that line (or ended before it)
    findings: int = 0
    findings_error: int = 0
    findings_warning: int = 0
    file_problems: int = 0
    seconds: float = 0.0
    skipped_paths: list[str] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    snapshot: int = 0

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    @property
    def invariant_holds(self) -> bool:
        return self.lines == self.events + self.duplicates + self.rejects + self.blank_lines

    @property
    def exit_code(self) -> int:
        return 1 if (self.rejects or self.findings_error or self.file_problems) else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "ingest_id": self.ingest_id,
            "snapshot": self.snapshot,
            "files": self.files,
            "files_skipped": self.files_skipped,
            "skipped": self.skipped_paths,
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "events": self.events,
            "duplicates": self.duplicates,
            "rejects": self.rejects,
            "invariant": f"lines {self.lines} = events {self.events} + duplicates {self.duplicates} "
            f"+ rejects {self.rejects} + blank lines {self.blank_lines}",
            "invariant_holds": self.invariant_holds,
            "games": self.games,
            "games_recomputed": self.games_recomputed,
            "superseded": self.superseded,
            "findings": self.findings,
            "findings_error": self.findings_error,
            "findings_warning": self.findings_warning,
            # every reject is also a bad_json/bad_event error finding; these are the others
            "replay_errors": self.findings_error - self.rejects,
            "file_problems": self.file_problems,
            "problems": self.problems,
            "seconds": round(self.seconds, 3),
            "events_per_second": round(self.events_per_second, 1),
            "exit_code": self.exit_code,
        }


def new_ingest_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class InputErrors(UserError):
    """Several specs name nothing readable; each is in `problems` (and, as text, `details`)."""

    def __init__(self, problems: Sequence[Exception]):
        super().__init__(
            f"{len(problems)} input{'s' if len(problems) != 1 else ''} name nothing readable",
            details=tuple(map(str, problems)),
        )
        self.problems = problems


def _size(source: InputSource) -> int | None:
    if source.path is None:
        return None
    try:
        return source.path.stat().st_size
    except OSError:
        return None


# ---------------------------------------------------------------------- the entry point
PARALLEL_MIN_BYTES = 32 << 20  # below this, worker processes cost more than they save


def ingest(
    specs: list[str],
    out: Path | str,
    default_rules: Ruleset | None = None,
    *,
    progress: Callable[..., None] | None = None,
    notice: Callable[[str], None] | None = None,
    stdin: BinaryIO | None = None,
    workers: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    block_bytes: int = BLOCK_BYTES,
    engine: Any = None,
    reference: bool = False,
    jit: bool = True,
) -> IngestSummary:
    """Ingest the inputs named by `specs` (files, directories, globs, .gz, '-') into `out`.

    Raises StoreError (the output cannot be used) and InputError/InputErrors (a spec names
    nothing readable) before anything is written; bad lines and broken files never raise.
    `workers`: processes that parse and replay, this one included (1: this process
    alone); None = 2 on a multi-core machine for inputs of 32 MiB or more, else 1. A line
    longer than `max_line_bytes` is rejected unread. `reference` and `jit` choose the replay
    path and whether the kernels are compiled (pipeline.engines.Routing): the same rows.
    `engine`: where stages 2-3 run instead of the worker pool (the Spark engine,
    `pipeline.engines.spark.ingest`): an object with `parallelism` and
    `reading(config, stored, progress)` giving what `_Reading` gives; planning, incremental
    bookkeeping and the commit stay here, one code path for both engines.
    """
    started = time.perf_counter()
    default_rules = default_rules or Ruleset.builtin("standard")
    notice = notice or (lambda message: None)
    progress = progress or (lambda *a, **k: None)
    resolution = resolve(specs, stdin=stdin)
    for message in resolution.notices:  # first: a problem may be "every file was skipped (see the notes)"
        notice(message)
    if resolution.problems:
        raise resolution.problems[0] if len(resolution.problems) == 1 else InputErrors(resolution.problems)
    store = Store.open(Path(out))
    pool: Pool | None = None
    try:
        ingest_id = new_ingest_id()
        summary = IngestSummary(dataset=str(out), ingest_id=ingest_id)
        to_read = _plan(resolution.sources, store.manifest, summary, notice)
        if not to_read:  # every input was skipped: nothing to add, the dataset stays as it is
            store.discard_staging()
            summary.snapshot = store.manifest["snapshot"]
            summary.seconds = time.perf_counter() - started
            return summary
        processes = _processes(workers, to_read) if engine is None else engine.parallelism
        stored = incremental.Stored.load(store, [c.path for _, c in to_read], ingest_id)
        staging = store.staging_dir(ingest_id)
        total = sum(c.size or 0 for _, c in to_read)
        config = Config(
            ingest_id,
            staging,
            default_rules,
            bucket_count(total, processes),
            max_line_bytes,
            stored.games,
            stored.reread,
            reference=reference,
            jit=jit,
        )
        config.spill_dir.mkdir(parents=True, exist_ok=True)
        if engine is None:
            pool = Pool(config, processes)
            run = _Reading(pool, config, stored, progress)
        else:
            run = engine.reading(config, stored, progress)
        sources = run.read_all(to_read, block_bytes)
        for counts in sources:
            for problem in counts.problems:
                notice(f"{problem['file']}:{problem['line'] or '-'}: {problem['reason']}")
        crash_point("read_done")
        for counts in sources:
            if counts.path in stored.reread:
                run.superseded += incremental.lines_past_end(store, counts.path, counts.lines)
        touched = run.touched | {game for _, _, game in run.superseded if game is not None}
        stored_spill = config.spill_dir / "stored.arrow"
        incremental.spill_stored_games(store, touched, run.superseded, stored.ordinals, config.buckets, stored_spill)
        replayed = run.replay_all([stored_spill] + run.spills)
        files = pool.close() if pool is not None else run.close()  # type: ignore[attr-defined]  # the engine's
        pool = None
        replaced = incremental.supersede(store, touched, run.superseded, staging, ingest_id)
        for table, paths in replaced.new_files.items():
            files[table].extend(paths)
        for counts in sources:  # a re-read file's name is read once per run (stdin is never re-read)
            counts.superseded_events = replaced.events.pop(counts.path, 0)
            counts.superseded_rejects = replaced.rejects.pop(counts.path, 0)
        shutil.rmtree(config.spill_dir, ignore_errors=True)
        for counts in sources:
            summary.files += 1
            summary.lines += counts.lines
            summary.blank_lines += counts.blank_lines
            summary.events += counts.events
            summary.duplicates += counts.duplicates
            summary.rejects += counts.rejects
            summary.problems.extend(counts.problems)
        summary.file_problems = len(summary.problems)
        summary.games = replayed.games
        summary.games_recomputed = len(touched)
        summary.superseded = len(run.superseded)
        summary.findings_error = replayed.findings_error + summary.rejects
        summary.findings_warning = replayed.findings_warning
        summary.findings = summary.findings_error + summary.findings_warning
        store.commit(_manifest(store.manifest, summary, sources, ingest_id, default_rules), files, replaced.removed)
        for warning in store.warnings:
            notice(warning)
        summary.snapshot = store.manifest["snapshot"]
        summary.seconds = time.perf_counter() - started
        return summary
    finally:
        if pool is not None:
            pool.terminate()
        store.close()


class _Reading:
    """Stage 1 here, stages 2-4 on the pool: blocks are handed out as they are cut, results
    are summed per input."""

    def __init__(self, pool: Pool, config: Config, stored: incremental.Stored, progress):
        self.pool, self.config, self.stored, self.progress = pool, config, stored, progress
        self.spills: list[Path] = []
        self.counts: list[SourceCounts] = []
        self.touched: set[str] = set()
        self.superseded: list[tuple[str, int, Any]] = []

    def read_all(self, to_read: list[tuple[InputSource, SourceCounts]], block_bytes: int) -> list[SourceCounts]:
        for _, result in self.pool.run(self._parse_tasks(to_read, block_bytes)):
            self._take(result)
        return self.counts

    def _parse_tasks(self, to_read: list[tuple[InputSource, SourceCounts]], block_bytes: int):
        """One parse task per block, cut lazily; each input's counts are final once its last
        block is cut."""
        for index, (source, planned) in enumerate(to_read):
            counts = SourceCounts(path=planned.path, size=planned.size, sha256=planned.sha256)
            self.counts.append(counts)
            ordinal = self.stored.ordinals[incremental.file_key(source.name, self.config.ingest_id)]
            for block in split_source(source, index, block_bytes, self.config.max_line):
                spill = self.config.spill_dir / f"block-{len(self.spills):06d}.arrow"
                self.spills.append(spill)
                self.progress(source.raw_bytes - counts.progress)
                counts.progress = source.raw_bytes
                yield "block", "parse", (block, ordinal, spill)
            counts.lines = source.lines
            counts.sha256 = source.sha256 or counts.sha256
            counts.size = source.raw_bytes
            if source.problem is not None:
                p = source.problem
                counts.problems.append({"file": p.file, "line": p.line, "reason": p.reason})
            self.progress(source.raw_bytes - counts.progress)
            counts.progress = source.raw_bytes

    def _take(self, r) -> None:
        counts = self.counts[r.source]
        counts.blank_lines += r.blank
        counts.events += r.events
        counts.duplicates += r.duplicates
        counts.rejects += r.rejects
        self.touched |= r.touched
        self.superseded += r.superseded

    def replay_all(self, spills: list[Path]):
        from pipeline.ingest.workers import BucketResult

        total = BucketResult()
        tasks = (("bucket", "replay", (bucket, spills)) for bucket in range(self.config.buckets))
        for _, r in self.pool.run(tasks):
            total.games += r.games
            total.findings_error += r.findings_error
            total.findings_warning += r.findings_warning
        return total


def _plan(
    inputs: list[InputSource], manifest: dict[str, Any], summary: IngestSummary, notice
) -> list[tuple[InputSource, SourceCounts]]:
    """The sources to read: a file whose exact content is in the dataset, or was named
    earlier in this run under another name, is skipped. Only files whose size matches such
    a file are hashed here; the rest are hashed while they are read."""
    # the latest reading of each file name: an earlier content of a file that changed was
    # superseded, so reading it again is not a no-op
    known = set({f["path"]: (f["size"], f["sha256"]) for f in manifest["files"]}.values())
    sizes = [_size(source) for source in inputs]
    size_count: dict[int | None, int] = {}
    for size in sizes:
        size_count[size] = size_count.get(size, 0) + 1
    known_sizes = {size for size, _ in known}
    plan = []
    for source, size in zip(inputs, sizes):
        counts = SourceCounts(path=source.name, size=size)
        if source.path is not None and size is not None and (size in known_sizes or size_count[size] > 1):
            try:
                counts.sha256 = file_sha256(source.path)
            except OSError:
                counts.sha256 = None  # the reader reports it as a FileProblem
            if counts.sha256 is not None and (size, counts.sha256) in known:
                summary.files_skipped += 1
                summary.skipped_paths.append(source.name)
                notice(
                    f"{source.name}: skipped, its content was ingested before (its sha256 begins {counts.sha256[:12]})"
                )
                continue
            if counts.sha256 is not None:
                known.add((size, counts.sha256))
                known_sizes.add(size)
        plan.append((source, counts))
    return plan


def _processes(workers: int | None, to_read: list[tuple[InputSource, SourceCounts]]) -> int:
    """Workers, this process included: 1 runs everything here."""
    if workers is not None:
        return 1 if workers <= 1 else min(workers, os.cpu_count() or 1, 8)
    if (os.cpu_count() or 1) < 2:
        return 1
    total = sum(counts.size or 0 for _, counts in to_read)
    return 2 if total >= PARALLEL_MIN_BYTES else 1


def _manifest(
    old: dict[str, Any], summary: IngestSummary, sources: list[SourceCounts], ingest_id: str, default_rules: Ruleset
) -> dict[str, Any]:
    manifest = {k: v for k, v in old.items() if k not in ("tables", "snapshot")}
    manifest["files"] = list(old["files"]) + [c.as_manifest(ingest_id) for c in sources]
    counted = (
        "files",
        "files_skipped",
        "lines",
        "blank_lines",
        "events",
        "duplicates",
        "rejects",
        "games",
        "games_recomputed",
        "superseded",
        "findings",
        "findings_error",
        "findings_warning",
        "file_problems",
    )
    record = {
        "ingest_id": ingest_id,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "default_rules": default_rules.to_dict(),
        "skipped": summary.skipped_paths,
        "counts": {k: v for k, v in summary.to_dict().items() if k in counted},
    }
    manifest["ingests"] = list(old["ingests"]) + [record]
    return manifest

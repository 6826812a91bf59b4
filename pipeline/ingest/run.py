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
from pipeline.dataset.sources import Catalog, digests
from pipeline.ingest.identity import Identity, check_stream_name, identify
from pipeline.ingest.route import bucket_count
from pipeline.reader.split import BLOCK_BYTES, MAX_LINE_BYTES, split_source
from pipeline import storage
from pipeline.dataset.store import Store, crash_point
from pipeline.storage import open_binary
from pipeline.ingest.workers import Config, Pool
from pipeline.reader.inputs import InputSource, resolve
from pipeline.reader.lines import file_digests, gzip_size_hint
from pipeline.rules import Ruleset
from pipeline.errors import UserError


@dataclass
class SourceCounts:
    path: str  # the name its rows carry (pipeline.ingest.identity)
    size: int | None = None
    sha256: str | None = None
    content_bytes: int | None = None  # size and sha256 of the decompressed bytes
    content_sha256: str | None = None
    identity: Identity | None = None
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
            **(self.identity.manifest_keys() if self.identity is not None else {}),
            "size": self.size,
            "sha256": self.sha256,
            "content_bytes": self.content_bytes,
            "content_sha256": self.content_sha256,
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
    same_content: dict[str, str] = field(default_factory=dict)  # skipped input → the source holding its content
    superseded_files: list[dict[str, Any]] = field(default_factory=list)  # sources whose stored rows were replaced
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
            "same_content": self.same_content,
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
            "superseded_files": self.superseded_files,
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
    with open_binary(path) as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def open_store(out: Path | str):
    """The dataset to write: a local directory (`Store`: rename, hard links, flock) or a URL
    (`RemoteStore`: conditional creates and a lock object with a lease)."""
    if storage.is_url(out):
        from pipeline.dataset.remote import RemoteStore

        return RemoteStore.open(str(out))
    return Store.open(Path(out))


class InputErrors(UserError):
    """Several specs name nothing readable; each is in `problems` (and, as text, `details`)."""

    def __init__(self, problems: Sequence[Exception]):
        super().__init__(
            f"{len(problems)} input{'s' if len(problems) != 1 else ''} name nothing readable",
            details=tuple(map(str, problems)),
        )
        self.problems = problems


def _size(source: InputSource) -> int | None:
    if source.url is not None:
        try:
            return storage.size(source.url)
        except OSError:
            return None
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
    stream_name: str | None = None,
    workers: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    block_bytes: int = BLOCK_BYTES,
    engine: Any = None,
    reference: bool = False,
    jit: bool = True,
    fast_min_bytes: int = 0,
) -> IngestSummary:
    """Ingest the inputs named by `specs` (files, directories, globs, .gz, '-') into `out`.

    Raises StoreError (the output cannot be used) and InputError/InputErrors (a spec names
    nothing readable) before anything is written; bad lines and broken files never raise.
    `stream_name`: the name of the one stream among the inputs (stdin, a pipe), which makes
    it a source read again on the next run under that name (pipeline.ingest.identity).
    `workers`: processes that parse and replay, this one included (1: this process
    alone); None = 2 on a multi-core machine for inputs of 32 MiB or more, else 1. A line
    longer than `max_line_bytes` is rejected unread. `reference` and `jit` choose the replay
    path and whether the kernels are compiled (pipeline.engines.Routing): the same rows.
    Files to read of fewer than `fast_min_bytes` bytes in all take the paths that need no
    compiled code (msgspec's decoder for every line, the reference replay for every game):
    the compiled ones would cost more to load, or on a first run to compile, than they save.
    `progress` follows the stages: `progress(stage=..., total=..., unit=...)` as each
    begins (reading, in bytes; replaying, in events; writing), `progress(n)` as n more of
    it is done; `notice` gets one line for what the user should know (skipped files, broken
    ones, the compile of the fast paths on a first run).
    `engine`: where stages 2-3 run instead of the worker pool (the Spark engine,
    `pipeline.engines.spark.ingest`): an object with `parallelism`, `check(sources)` and
    `reading(config, stored, progress)` giving what `_Reading` gives; planning, identities,
    incremental bookkeeping and the commit stay here, one code path for both engines.
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
    check_stream_name(resolution.sources, stream_name)
    if engine is not None:
        engine.check(resolution.sources)
    store = open_store(out)
    pool: Pool | None = None
    run: Any = None
    try:
        ingest_id = new_ingest_id()
        summary = IngestSummary(dataset=str(out), ingest_id=ingest_id)
        catalog = Catalog.of(store.manifest["files"])
        identities, notes = identify(resolution.sources, catalog, ingest_id, stream_name)
        for message in notes:
            notice(message)
        to_read = _plan(resolution.sources, identities, catalog, summary, notice)
        if not to_read:  # every input was skipped: nothing to add, the dataset stays as it is
            return _nothing_committed(store, summary, started)
        processes = _processes(workers, to_read) if engine is None else engine.parallelism
        reading = [c.identity for _, c in to_read if c.identity is not None]
        stored = incremental.Stored.load(store, reading, ingest_id, catalog.unnamed)
        staging = store.staging_dir(ingest_id)
        total = sum(c.size or 0 for _, c in to_read)
        small = engine is None and total < fast_min_bytes and all(c.size is not None for _, c in to_read)
        config = Config(
            ingest_id,
            staging,
            default_rules,
            bucket_count(total, processes),
            max_line_bytes,
            stored.games,
            stored.reread,
            reference=reference or small,
            jit=jit,
            bulk_scan=not small,
            spill=getattr(store, "local_spill", None),  # a dataset at a URL spills on this machine
        )
        config.spill_dir.mkdir(parents=True, exist_ok=True)
        if engine is None:
            pool = Pool(config, processes)  # spawned workers import while this process warms up
            if not small:
                from pipeline.ingest import warm

                def compiling() -> None:
                    notice(warm.WHAT)
                    progress(stage=warm.WHAT)

                warm.ready(jit, on_compile=compiling, replay=not reference)
            run = _Reading(pool, config, stored, progress)
        else:
            run = engine.reading(config, stored, progress)
        known = all(c.size is not None for _, c in to_read)
        progress(stage="reading the logs", total=total if known and total else None, unit="bytes")
        sources = run.read_all(to_read, block_bytes)
        for counts in sources:
            for problem in counts.problems:
                notice(f"{problem['file']}:{problem['line'] or '-'}: {problem['reason']}")
        repeated = _repeated_content(sources, catalog, summary, notice)
        if repeated:  # a stream, or a file that could not be told apart before reading
            run.drop(repeated)
            sources = [c for i, c in enumerate(sources) if i not in repeated]
            if not sources:
                return _nothing_committed(store, summary, started)
        crash_point("read_done")
        for counts in sources:
            if counts.identity is not None and counts.identity.reread:
                run.superseded += incremental.lines_past_end(store, list(counts.identity.names), counts.lines)
        touched = run.touched | {game for _, _, game in run.superseded if game is not None}
        stored_spill = config.spill_dir / "stored.arrow"
        kept_rules = incremental.spill_stored_games(
            store, touched, run.superseded, stored, config.buckets, stored_spill, default_rules.to_json()
        )
        _say_kept_rules(kept_rules, default_rules, notice)
        events = sum(c.events for c in sources) + _rows(stored_spill)
        progress(stage="replaying games", total=events or None, unit="events")
        replayed = run.replay_all([stored_spill] + run.spills)
        progress(stage="writing the snapshot")
        files = run.close()
        pool = None
        replaced = incremental.supersede(store, touched, run.superseded, staging, ingest_id, stored.streams)
        for table, paths in replaced.new_files.items():
            files[table].extend(paths)
        for counts in sources:  # a source read again is read once per run (an unnamed stream never again)
            names = counts.identity.names if counts.identity is not None else (counts.path,)
            counts.superseded_events = sum(replaced.events.pop(name, 0) for name in names)
            counts.superseded_rejects = sum(replaced.rejects.pop(name, 0) for name in names)
            if counts.superseded_events or counts.superseded_rejects:
                summary.superseded_files.append(
                    {"path": counts.path, "events": counts.superseded_events, "rejects": counts.superseded_rejects}
                )
                notice(
                    f"{counts.path}: changed since it was ingested: {counts.superseded_events:,} stored event(s) and "
                    f"{counts.superseded_rejects:,} reject(s) of its earlier reading were replaced by this reading"
                )
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


def _nothing_committed(store: Store, summary: IngestSummary, started: float) -> IngestSummary:
    """The summary of a run that adds nothing (every input's content is stored already)."""
    store.discard_staging()
    summary.snapshot = store.manifest["snapshot"]
    summary.seconds = time.perf_counter() - started
    return summary


KEPT_RULES_SHOWN = 5  # game ids named in the note on kept rulesets


def _say_kept_rules(kept: list[tuple[str, str]], default_rules: Ruleset, notice: Callable[[str], None]) -> None:
    """One note for the continued games whose ruleset is not this run's --rules: a game keeps
    the ruleset it was first replayed with."""
    by_game = dict(kept)
    if not by_game:
        return
    ids = sorted(by_game)
    names = sorted(set(by_game.values()))
    shown = ", ".join(ids[:KEPT_RULES_SHOWN]) + (
        f" and {len(ids) - KEPT_RULES_SHOWN:,} more" if len(ids) > KEPT_RULES_SHOWN else ""
    )
    notice(
        f"{len(ids):,} game(s) continued from earlier ingests keep the ruleset they were first replayed with "
        f"({', '.join(names)}), not this run's {default_rules.name} (--rules applies to games that start "
        f"in this run): {shown}"
    )


class _Reading:
    """Stage 1 here, stages 2-4 on the pool: blocks are handed out as they are cut, results
    are summed per input."""

    def __init__(self, pool: Pool, config: Config, stored: incremental.Stored, progress):
        self.pool, self.config, self.stored, self.progress = pool, config, stored, progress
        self.spills: list[Path] = []
        self.counts: list[SourceCounts] = []
        self.touched: set[str] = set()
        self.superseded: list[tuple[str, int, Any]] = []
        self.rejected_starts: dict[str, tuple[str, int, str]] = {}  # game_id -> (file, line, reason)
        self._spilled: list[int] = []  # the input of each spill file
        self._touched: dict[int, set[str]] = {}  # per input
        self._dropped: set[str] = set()  # names of inputs whose rows leave the run
        self.empty: set[Path] = set()  # spill files of blocks without events: never written
        self.bucket_rows = [0] * config.buckets
        self.bucket_games = [0] * config.buckets

    def read_all(self, to_read: list[tuple[InputSource, SourceCounts]], block_bytes: int) -> list[SourceCounts]:
        for spill, result in self.pool.run(self._parse_tasks(to_read, block_bytes)):
            self._take(result)
            if not result.spilled:
                self.empty.add(spill)
        kept = [(path, index) for path, index in zip(self.spills, self._spilled) if path not in self.empty]
        self.spills, self._spilled = [path for path, _ in kept], [index for _, index in kept]
        return self.counts

    def _parse_tasks(self, to_read: list[tuple[InputSource, SourceCounts]], block_bytes: int):
        """One parse task per block, cut lazily; each input's counts are final once its last
        block is cut."""
        for index, (source, planned) in enumerate(to_read):
            counts = SourceCounts(
                path=planned.path, size=planned.size, sha256=planned.sha256, identity=planned.identity
            )
            self.counts.append(counts)
            ordinal = self.stored.ordinal(source.name, self.config.ingest_id)
            for block in split_source(source, index, block_bytes, self.config.max_line):
                spill = self.config.spill_dir / f"block-{len(self.spills):06d}.arrow"
                self.spills.append(spill)
                self._spilled.append(index)
                self.progress(source.raw_bytes - counts.progress)
                counts.progress = source.raw_bytes
                yield spill, "parse", (block, ordinal, spill)
            counts.lines = source.lines
            counts.sha256 = source.sha256 or counts.sha256
            counts.size = source.raw_bytes
            counts.content_sha256, counts.content_bytes = source.content_sha256, source.content_bytes
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
        self._touched.setdefault(r.source, set()).update(r.touched)
        self.superseded += r.superseded
        for bucket, (rows, games) in enumerate(zip(r.bucket_rows, r.bucket_games)):
            self.bucket_rows[bucket] += rows
            self.bucket_games[bucket] += games
        for game_id, file, line, reason in r.rejected_starts:
            self.rejected_starts.setdefault(game_id, (file, line, reason))

    def drop(self, inputs: set[int]) -> None:
        """The rows of these inputs leave the run (their content is stored already): their
        spilled events are not replayed, their rows are filtered out of the staged files."""
        names = {self.counts[i].path for i in inputs}
        stored = {n for i in inputs if (ident := self.counts[i].identity) is not None for n in ident.names}
        self._dropped |= names
        self.spills = [p for p, i in zip(self.spills, self._spilled) if i not in inputs]
        self._spilled = [i for i in self._spilled if i not in inputs]
        self.touched = set().union(*(t for i, t in self._touched.items() if i not in inputs))
        self.superseded = [s for s in self.superseded if s[0] not in stored]

    def replay_all(self, spills: list[Path]):
        from pipeline.ingest.workers import BucketResult

        total = BucketResult()
        starts = self.rejected_starts
        tasks = (
            ("bucket", "replay", (bucket, spills, self.bucket_rows[bucket], self.bucket_games[bucket], starts))
            for bucket in range(self.config.buckets)
        )
        for _, r in self.pool.run(tasks):
            self.progress(r.events)
            total.games += r.games
            total.findings_error += r.findings_error
            total.findings_warning += r.findings_warning
        return total

    def close(self) -> dict[str, list[Path]]:
        """Every worker's files, per table, without the rows of dropped inputs."""
        files = self.pool.close()
        if self._dropped:
            incremental.drop_rows_of(files, self._dropped, self.config.staging, self.config.ingest_id)
        return files


def _rows(spill: Path) -> int:
    """Rows of a spilled IPC file (0 if there is none)."""
    import pyarrow as pa

    try:
        with pa.ipc.open_file(pa.OSFile(str(spill))) as reader:
            return reader.count_rows()
    except (OSError, pa.ArrowInvalid):
        return 0


def _plan(
    inputs: list[InputSource],
    identities: list[Identity],
    catalog: Catalog,
    summary: IngestSummary,
    notice: Callable[[str], None],
) -> list[tuple[InputSource, SourceCounts]]:
    """The sources to read, each under the name its rows carry. A regular file whose
    content, or whose stored bytes, equal a source in the dataset or a file named earlier in
    this run is skipped. Only files whose size could match such a one (a gzip file's
    recorded size counts) are hashed here; the rest are hashed while they are read, and a
    repeat found then leaves the run (`_repeated_content`)."""
    known = dict(catalog.contents)
    sizes = [_size(source) if source.regular else None for source in inputs]
    hints: list[set[int]] = []
    for source, size in zip(inputs, sizes):
        marks: set[int] = set()
        if size is not None:
            marks.add(size % 2**32)
            hint = gzip_size_hint(source.path) if source.path is not None else None
            if hint is not None:
                marks.add(hint)
        hints.append(marks)
    seen: dict[int, int] = {}
    for marks in hints:
        for mark in marks:
            seen[mark] = seen.get(mark, 0) + 1
    known_marks = {size % 2**32 for size, _ in known}
    plan = []
    for source, identity, size, marks in zip(inputs, identities, sizes, hints):
        typed = source.name
        counts = SourceCounts(path=identity.name, size=size, identity=identity)
        if marks and (marks & known_marks or any(seen[m] > 1 for m in marks)):
            found = file_digests(source)
            digest = next((d for d in found if d in known), None)
            if digest is not None:
                earlier = digest not in catalog.contents
                _skip(summary, notice, typed, identity, known[digest], digest[1], earlier=earlier)
                continue
            for digest in found:
                known.setdefault(digest, (identity.key, identity.name))
                known_marks.add(digest[0] % 2**32)
            if found:
                counts.sha256 = found[0][1]
        source.name = identity.name
        plan.append((source, counts))
    return plan


def _skip(
    summary: IngestSummary,
    notice: Callable[[str], None],
    typed: str,
    identity: Identity | None,
    match: tuple[str, str],
    sha256: str,
    *,
    earlier: bool,
    read: bool = False,
) -> None:
    """Count an input whose content is stored already (or read earlier in this run) as
    skipped, and say which source holds it."""
    key, name = match
    if key.startswith("reading:"):  # an unnamed stream: its name is shared by every reading
        name = f"{name} (read by ingest {key.rpartition(chr(0))[2]})"
    summary.files_skipped += 1
    summary.skipped_paths.append(typed)
    summary.same_content[typed] = name
    what = "read, adds nothing" if read else "skipped"
    if identity is not None and key == identity.key:
        notice(f"{typed}: {what}, its content was ingested before (its sha256 begins {sha256[:12]})")
    elif earlier:
        notice(f"{typed}: {what}, its content is that of {name}, read earlier in this run (sha256 {sha256[:12]}...)")
    else:
        notice(f"{typed}: {what}, its content is that of {name}, ingested before (sha256 {sha256[:12]}...)")


def _repeated_content(
    sources: list[SourceCounts], catalog: Catalog, summary: IngestSummary, notice: Callable[[str], None]
) -> set[int]:
    """Inputs whose content turned out, once read, to be stored already or read earlier in
    this run (a stream's content is known only then): they leave the run, counted as skipped."""
    known = dict(catalog.contents)
    repeated: set[int] = set()
    for index, counts in enumerate(sources):
        found = digests({"size": counts.size, "sha256": counts.sha256, **_content_of(counts)})
        digest = next((d for d in found if d in known), None)
        if digest is not None:
            repeated.add(index)
            earlier = digest not in catalog.contents
            _skip(summary, notice, counts.path, counts.identity, known[digest], digest[1], earlier=earlier, read=True)
            continue
        identity = counts.identity
        for digest in found:
            known.setdefault(digest, (identity.key if identity else counts.path, counts.path))
    return repeated


def _content_of(counts: SourceCounts) -> dict[str, Any]:
    if counts.problems:  # a reading stopped short: its content is not the file's
        return {}
    return {"content_bytes": counts.content_bytes, "content_sha256": counts.content_sha256}


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
        "same_content": summary.same_content,
        "superseded_files": summary.superseded_files,
        "counts": {k: v for k, v in summary.to_dict().items() if k in counted},
    }
    manifest["ingests"] = list(old["ingests"]) + [record]
    return manifest

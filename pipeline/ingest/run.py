"""Ingest orchestration: read → dedupe → replay → write staged Parquet → commit a snapshot.

The per-line loop in `_Run.read_source` is the hot path: one `parse_line` call, a few dict
operations for the duplicate check, one list append, one `Replayer.feed`. Everything else
(Arrow conversion, Parquet writing, replay output) happens per batch.

Incremental ingest (docs/dataset.md, "Incremental ingest"):
- a file whose (size, sha256) is already in the manifest is skipped;
- an event whose (game_id, seq) is stored, or was read earlier in this run, is a duplicate:
  counted, not written, not replayed;
- a game that already has events in the dataset and gets new ones in this run is replayed
  whole at the end of the run (stored events, then new ones, in input order) and its rows in
  the derived tables are replaced: the dataset equals what one ingest of all files gives.
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import secrets
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from zlib import crc32
from typing import Any, BinaryIO, Callable, Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.dataset_check import duckdb_path
from pipeline.ingest import batches
from pipeline.ingest.store import Store, _crash_point
from pipeline.inputs import InputSource, resolve
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event
from pipeline.reader import iter_lines, parse_line
from pipeline.replay import Replayer
from pipeline.rules import Ruleset

BATCH = 65_536  # events per Arrow batch
ROW_GROUP = 65_536  # rows per Parquet row group (batches are gathered up to this; more holds more memory)
BAD_CHARS = 64 << 20  # write the held bad lines once their text passes this
ROWS_PER_FILE = 2_000_000  # a new Parquet file after this many rows (parallel reads)
PARSE_CODES = frozenset({"bad_json", "bad_event"})  # findings owned by a line, not a game's replay
DERIVED = ("turns", "rolls", "decisions", "games", "game_players", "findings")


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


class _TableSink:
    """Arrow tables of one table → Parquet files in staging, a new file every ROWS_PER_FILE.

    Batches are gathered into row groups of ROW_GROUP rows and written by a background
    thread (Parquet encoding and zstd run without the GIL, so they overlap the Python loop);
    one write per table is in flight at a time, which keeps order and bounds memory.
    """

    def __init__(self, directory: Path, table: str, ingest_id: str, executor: ThreadPoolExecutor):
        self.directory = directory / table
        self.table = table
        self.schema = tables.TABLES[table]
        self.ingest_id = ingest_id
        self.files: list[Path] = []
        self._executor = executor
        self._writer: pq.ParquetWriter | None = None
        self._rows = 0
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._in_flight: Future | None = None

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._pending.append(table)
        self._pending_rows += table.num_rows
        if self._pending_rows >= ROW_GROUP:
            self._submit()

    def _submit(self) -> None:
        data = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending, self._pending_rows = [], 0
        if self._in_flight is not None:
            self._in_flight.result()
        self._in_flight = self._executor.submit(self._write_now, data)

    def _write_now(self, data: pa.Table) -> None:
        if self._writer is None or self._rows >= ROWS_PER_FILE:
            self._close_file()
            path = self.directory / f"part-{self.ingest_id}-{len(self.files):04d}.parquet"
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
            self.files.append(path)
            self._rows = 0
        self._writer.write_table(data, row_group_size=data.num_rows)
        self._rows += data.num_rows

    def _close_file(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with open(self.files[-1], "rb+") as fh:
                os.fsync(fh.fileno())
            self._writer = None

    def close(self) -> None:
        if self._pending:
            self._submit()
        if self._in_flight is not None:
            self._in_flight.result()
            self._in_flight = None
        self._close_file()


def new_ingest_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class _Run:
    """One reader-replayer. With parts > 1, several run side by side (one per process), each
    over every input line but keeping only the games that `_owner` gives to its `part`."""

    def __init__(
        self,
        store: Store,
        default_rules: Ruleset,
        ingest_id: str,
        progress: Callable[..., None] | None = None,
        part: int = 0,
        parts: int = 1,
        max_line_bytes: int = MAX_LINE_BYTES,
    ):
        self.store = store
        self.max_line_bytes = max_line_bytes
        self.default_rules = default_rules
        self.ingest_id = ingest_id
        self.progress = progress or (lambda *a, **k: None)
        self.part, self.parts = part, parts
        self.parent = os.getppid()
        self.staging = store.staging_dir(ingest_id)
        prefix = ingest_id if parts == 1 else f"{ingest_id}-p{part}"
        self.writer_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet")
        self.sinks = {name: _TableSink(self.staging, name, prefix, self.writer_thread) for name in tables.TABLES}
        self.replayer = Replayer(default_rules)
        self.sources: list[SourceCounts] = []
        # Duplicate index: per game, every seq 1..hi is present, plus the seqs in extra[game].
        self.hi: dict[str, int] = {}
        self.extra: dict[str, set[int]] = {}
        self.stored_games: set[str] = set()
        self.touched: set[str] = set()  # stored games with new events: replayed whole at the end
        self.events: list[Event] = []
        self.bad: list[BadLine] = []
        self.bad_chars = 0  # text held by `bad`: bad lines can be megabytes each
        self.findings_error = 0
        self.findings_warning = 0
        self.findings = 0
        self.games = 0
        self._load_index()

    # ------------------------------------------------------------------ duplicate index
    def _load_index(self) -> None:
        files = self.store.table_files("events")
        if not files:
            return
        import duckdb

        con = duckdb.connect()
        paths = [duckdb_path(p) for p in files]
        agg = con.execute(
            "select game_id, min(seq), max(seq), count(*), count(distinct seq) "
            "from read_parquet(?) group by game_id",
            [paths],
        ).fetchall()
        gappy = []
        for game_id, lo, hi, _count, distinct in agg:
            self.stored_games.add(game_id)
            if lo == 1 and distinct == hi:
                self.hi[game_id] = hi
            else:
                gappy.append(game_id)
        if gappy:
            con.register("gappy", pa.table({"game_id": gappy}))
            rows = con.execute(
                "select game_id, list(distinct seq) from read_parquet(?) where game_id in "
                "(select game_id from gappy) group by game_id",
                [paths],
            ).fetchall()
            for game_id, seqs in rows:
                self._add_seqs(game_id, seqs)
        con.close()

    def _add_seqs(self, game_id: str, seqs: Iterable[int]) -> None:
        rest = set(seqs)
        h = 0
        while h + 1 in rest:
            h += 1
            rest.discard(h)
        self.hi[game_id] = h
        if rest:
            self.extra[game_id] = rest

    # ------------------------------------------------------------------ reading
    def read_source(self, counts: SourceCounts, source: InputSource) -> None:
        """The hot loop over one source's non-blank lines."""
        hi, extra, stored, touched = self.hi, self.extra, self.stored_games, self.touched
        events, bad, feed, parse = self.events, self.bad, self.replayer.feed, parse_line
        name = source.name
        part, parts, gid_search = self.part, self.parts, _GAME_ID
        n_events = dups = rejects = 0
        for line, raw in iter_lines(source, self.max_line_bytes):
            if parts > 1:  # inlined _owner: the common line costs three C calls
                if b"\\" not in raw and raw.count(b'"game_id"') == 1 and (m := gid_search(raw)) is not None:
                    if crc32(m.group(1)) % parts != part:
                        continue
                elif _owner(raw, parts, name, line) != part:
                    continue
            item = parse(raw, name, line)
            if type(item) is Event:
                g = item.game_id
                s = item.seq
                h = hi.get(g, 0)
                if s <= h:
                    dups += 1
                    continue
                if s == h + 1:
                    hi[g] = s
                    if g in extra:
                        self._absorb(g)
                else:
                    ex = extra.get(g)
                    if ex is None:
                        extra[g] = {s}
                    elif s in ex:
                        dups += 1
                        continue
                    else:
                        ex.add(s)
                n_events += 1
                events.append(item)
                if g in stored:
                    touched.add(g)
                else:
                    feed(item)
                if len(events) >= BATCH:
                    self.flush()
                    self.progress(source.raw_bytes - counts.progress)
                    counts.progress = source.raw_bytes
            elif item is not None:  # a BadLine (None would be a blank line; iter_lines skips those)
                rejects += 1
                bad.append(item)
                feed(item)
                self.bad_chars += len(item.raw)
                if len(bad) >= BATCH or self.bad_chars >= BAD_CHARS:  # a file of long bad lines
                    self.flush()
        counts.lines = source.lines
        counts.blank_lines = source.blank_lines
        counts.events = n_events
        counts.duplicates = dups
        counts.rejects = rejects
        counts.sha256 = source.sha256 or counts.sha256
        counts.size = source.raw_bytes
        if source.problem is not None:
            p = source.problem
            counts.problems.append({"file": p.file, "line": p.line, "reason": p.reason})
        self.progress(source.raw_bytes - counts.progress)

    def _absorb(self, g: str) -> None:
        ex = self.extra[g]
        h = self.hi[g]
        while h + 1 in ex:
            h += 1
            ex.discard(h)
        self.hi[g] = h
        if not ex:
            del self.extra[g]

    # ------------------------------------------------------------------ writing
    def flush(self) -> None:
        if self.parts > 1 and self.part > 0 and os.getppid() != self.parent:
            os._exit(1)  # the main process is gone (killed): stop writing
        if self.events:
            self.sinks["events"].write(batches.events_table(self.events, self.ingest_id))
            self.events.clear()
        if self.bad:
            self.sinks["rejects"].write(batches.rejects_table(self.bad, self.ingest_id))
            self.bad.clear()
            self.bad_chars = 0
        self._write_output()

    def _write_output(self) -> None:
        out = self.replayer.drain()
        if out.turns:
            self.sinks["turns"].write(batches.turns_table(out.turns))
        if out.rolls:
            self.sinks["rolls"].write(batches.rolls_table(out.rolls))
        if out.decisions:
            self.sinks["decisions"].write(batches.decisions_table(out.decisions))
        if out.findings:
            self.findings += len(out.findings)
            for f in out.findings:
                if f.severity == "error":
                    self.findings_error += 1
                else:
                    self.findings_warning += 1
            self.sinks["findings"].write(batches.findings_table(out.findings))
        if out.games:
            self.games += len(out.games)
            games, players = batches.games_tables(out.games)
            self.sinks["games"].write(games)
            self.sinks["game_players"].write(players)

    # ------------------------------------------------------------------ end of input
    def replay_touched(self) -> None:
        """Replay each stored game that got new events whole: stored events, then new ones."""
        self.flush()
        self.sinks["events"].close()
        if not self.touched:
            return
        import duckdb

        order_rows = [(f["ingest_id"], f["path"]) for f in self.store.manifest["files"]]
        order_rows += [(self.ingest_id, s.path) for s in self.sources if not s.skipped]
        order = pa.table(
            {
                "ingest_id": [r[0] for r in order_rows],
                "source_file": [r[1] for r in order_rows],
                "ordinal": list(range(len(order_rows))),
            }
        )
        touched = pa.table({"game_id": sorted(self.touched)})
        paths = [duckdb_path(p) for p in self.store.table_files("events") + self.sinks["events"].files]
        con = duckdb.connect()
        con.register("file_order", order)
        con.register("touched", touched)
        stored_rules = self._stored_rulesets(con)
        relation = con.sql(
            "select e.* from read_parquet($paths) e "
            "join file_order o on o.ingest_id = e.ingest_id and o.source_file = e.source_file "
            "where e.game_id in (select game_id from touched) "
            "order by o.ordinal, e.source_line",
            params={"paths": paths},
        )
        reader = relation.to_arrow_reader(BATCH)
        feed = self.replayer.feed
        for batch in reader:
            for row in batch.to_pylist():
                feed(_event_from_row(row, stored_rules))
            self._write_output()
        con.close()

    def _stored_rulesets(self, con) -> dict[str, Ruleset]:
        """The ruleset each touched game was replayed with, for games whose game_start has no
        `rules`: a later run with another --rules does not change an existing game."""
        files = [duckdb_path(p) for p in self.store.table_files("games")]
        if not files:
            return {}
        rows = con.execute(
            "select game_id, ruleset from read_parquet(?) where game_id in (select game_id from touched)",
            [files],
        ).fetchall()
        return {g: Ruleset.from_value(json.loads(r)) for g, r in rows if r is not None}

    def finish(self) -> None:
        """finish() the replayer, write its last output, close every file."""
        self.replayer.finish()
        self._write_output()
        for sink in self.sinks.values():
            sink.close()
        self.writer_thread.shutdown()

    def result(self) -> dict[str, Any]:
        """What the main process needs from a part (sent through a pipe by a child process)."""
        return {
            "sources": self.sources,
            "touched": self.touched,
            "files": {name: sink.files for name, sink in self.sinks.items()},
            "findings": self.findings,
            "findings_error": self.findings_error,
            "findings_warning": self.findings_warning,
            "games": self.games,
        }

    def supersede(self, all_touched: set[str]) -> dict[str, set[str]]:
        """Rewrite each derived-table file that holds rows of a recomputed game, without them."""
        removed: dict[str, set[str]] = {}
        if not all_touched:
            return removed
        touched = pa.array(sorted(all_touched), pa.string())
        for table in DERIVED:
            for path in self.store.table_files(table):
                ids = pq.read_table(path, columns=["game_id"]).column("game_id")
                if not pc.any(pc.is_in(ids, value_set=touched)).as_py():
                    continue
                data = pq.read_table(path, schema=tables.TABLES[table])
                drop = pc.fill_null(pc.is_in(data.column("game_id"), value_set=touched), False)
                if table == "findings":
                    keep_code = pc.is_in(data.column("code"), value_set=pa.array(sorted(PARSE_CODES)))
                    drop = pc.and_(drop, pc.invert(keep_code))
                kept = data.filter(pc.invert(drop))
                removed.setdefault(table, set()).add(path.name)
                if kept.num_rows:
                    sink = self.sinks[table]
                    out = sink.directory / f"part-{self.ingest_id}-rw{len(sink.files):04d}.parquet"
                    pq.write_table(kept, out, compression="zstd")
                    sink.files.append(out)
        return removed


_GAME_ID = re.compile(rb'"game_id"\s*:\s*"([^"\\]*)"').search


def _owner(raw: bytes, parts: int, name: str, line: int) -> int:
    """Which part replays this line: crc32 of its game_id, the same for every line of a game.

    Fast route: a line without backslashes that names "game_id" once; that one occurrence
    is then the top-level key (or the line has no top-level game_id and is a stateless bad
    line), and its raw bytes are the UTF-8 of the decoded id. Any other line is parsed.
    Lines without a readable game_id go to part 0.
    """
    if b"\\" not in raw and raw.count(b'"game_id"') == 1:
        m = _GAME_ID(raw)
        if m is not None:
            return crc32(m.group(1)) % parts
    game_id = getattr(parse_line(raw, name, line), "game_id", None)
    if isinstance(game_id, str):
        return crc32(game_id.encode("utf-8", "surrogatepass")) % parts
    return 0


class InputErrors(Exception):
    """Several specs name nothing readable; each is in `problems`."""

    def __init__(self, problems: list[Exception]):
        super().__init__("; ".join(map(str, problems)))
        self.problems = problems


def _size(source: InputSource) -> int | None:
    if source.path is None:
        return None
    try:
        return source.path.stat().st_size
    except OSError:
        return None


def _event_from_row(row: dict[str, Any], stored_rules: dict[str, Ruleset]) -> Event:
    """A stored events row back into the Event the reader made of it."""
    ts = row["ts"]
    rules_raw = None if row["rules"] is None else json.loads(row["rules"])
    rules = None
    if row["type"] == "game_start":
        if rules_raw is not None:
            rules = Ruleset.from_value(rules_raw)
        else:
            rules = stored_rules.get(row["game_id"])
    winner = row["winner"]
    if winner is not None and len(winner) == 1:
        winner = winner[0]
    elif winner is not None:
        winner = tuple(winner)
    return Event(
        game_id=row["game_id"],
        seq=row["seq"],
        type=row["type"],
        file=row["source_file"],
        line=row["source_line"],
        ts=None if ts is None else ts.isoformat(),
        player=row["player"],
        dice=None if row["dice"] is None else tuple(row["dice"]),
        points=row["points"],
        total=row["total"],
        players=None if row["players"] is None else tuple(row["players"]),
        rules=rules,
        rules_raw=rules_raw,
        winner=winner,
        scores=None if row["scores"] is None else json.loads(row["scores"]),
        extra={} if row["extra"] is None else json.loads(row["extra"]),
    )


# ---------------------------------------------------------------------- the entry point
PARALLEL_MIN_BYTES = 32 << 20  # below this, a second process costs more than it saves


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
) -> IngestSummary:
    """Ingest the inputs named by `specs` (files, directories, globs, .gz, '-') into `out`.

    Raises StoreError (the output cannot be used) and InputError/InputErrors (a spec names
    nothing readable) before anything is written; bad lines and broken files never raise.
    `workers`: processes that read and replay (each takes half of the games), 1 or 2; None =
    $FARKLE_LOGS_WORKERS if set, else 2 on a multi-core machine for inputs of 32 MiB or
    more, else 1. `max_line_bytes`: longer lines are bad_json rejects (pipeline.reader.lines).
    """
    started = time.perf_counter()
    default_rules = default_rules or Ruleset.builtin("standard")
    notice = notice or (lambda message: None)
    resolution = resolve(specs, stdin=stdin)
    if resolution.problems:
        raise resolution.problems[0] if len(resolution.problems) == 1 else InputErrors(resolution.problems)
    for message in resolution.notices:
        notice(message)
    store = Store.open(Path(out))
    try:
        ingest_id = new_ingest_id()
        summary = IngestSummary(dataset=str(out), ingest_id=ingest_id)
        to_read = _plan(resolution.sources, store.manifest, summary, notice)
        parts = _parts(workers, to_read)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # the loop holds many small objects; the collector would scan them all again and again
        try:
            child = _start_part(store, default_rules, ingest_id, to_read, 1, max_line_bytes) if parts > 1 else None
            run = _Run(store, default_rules, ingest_id, progress, part=0, parts=parts, max_line_bytes=max_line_bytes)
            _read_all(run, to_read)
            for counts in run.sources:
                for problem in counts.problems:
                    notice(f"{problem['file']}:{problem['line'] or '-'}: {problem['reason']}")
            _crash_point("read_done")
            run.replay_touched()
            run.finish()
            results = [run.result()] + ([_join_part(child)] if child is not None else [])
        finally:
            if gc_was_enabled:
                gc.enable()
        sources = _merge_sources([r["sources"] for r in results])
        touched = set().union(*(r["touched"] for r in results))
        removed = run.supersede(touched)
        for counts in sources:
            summary.files += 1
            summary.lines += counts.lines
            summary.blank_lines += counts.blank_lines
            summary.events += counts.events
            summary.duplicates += counts.duplicates
            summary.rejects += counts.rejects
            summary.problems.extend(counts.problems)
        summary.file_problems = len(summary.problems)
        summary.games = sum(r["games"] for r in results)
        summary.games_recomputed = len(touched)
        summary.findings = sum(r["findings"] for r in results)
        summary.findings_error = sum(r["findings_error"] for r in results)
        summary.findings_warning = sum(r["findings_warning"] for r in results)
        if sources:
            new_files = {name: [f for r in results for f in r["files"][name]] for name in tables.TABLES}
            store.commit(_manifest(store.manifest, summary, sources, ingest_id, default_rules), new_files, removed)
            for warning in store.warnings:
                notice(warning)
        else:  # every input was skipped: nothing to add, the dataset stays as it is
            store.discard_staging()
        summary.snapshot = store.manifest["snapshot"]
        summary.seconds = time.perf_counter() - started
        return summary
    finally:
        store.close()


def _plan(inputs: list[InputSource], manifest: dict[str, Any], summary: IngestSummary, notice) -> list[tuple[InputSource, SourceCounts]]:
    """The sources to read: a file whose exact content is in the dataset, or was named
    earlier in this run under another name, is skipped. Only files whose size matches such
    a file are hashed here; the rest are hashed while they are read."""
    known = {(f["size"], f["sha256"]) for f in manifest["files"]}
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
                notice(f"{source.name}: skipped, its content was ingested before (sha256 {counts.sha256[:12]}…)")
                continue
            if counts.sha256 is not None:
                known.add((size, counts.sha256))
                known_sizes.add(size)
        plan.append((source, counts))
    return plan


def _parts(workers: int | None, to_read: list[tuple[InputSource, SourceCounts]]) -> int:
    if any(source.is_stdin for source, _ in to_read):
        return 1  # stdin can be read once only
    if workers is None and os.environ.get("FARKLE_LOGS_WORKERS", "").isdigit():
        workers = int(os.environ["FARKLE_LOGS_WORKERS"])
    if workers is not None:
        return max(1, min(workers, 2))
    if (os.cpu_count() or 1) < 2:
        return 1
    total = sum(counts.size or 0 for _, counts in to_read)
    return 2 if total >= PARALLEL_MIN_BYTES else 1


def _read_all(run: _Run, to_read: list[tuple[InputSource, SourceCounts]]) -> None:
    for source, planned in to_read:
        counts = SourceCounts(path=planned.path, size=planned.size, sha256=planned.sha256)
        run.sources.append(counts)
        run.read_source(counts, _fresh(source))


def _fresh(source: InputSource) -> InputSource:
    """A source with its counters at zero (each part reads the file itself)."""
    if source.is_stdin:
        return source
    return InputSource(source.name, path=source.path)


def _start_part(store: Store, default_rules: Ruleset, ingest_id: str, to_read, part: int, max_line_bytes: int):
    """A child process that reads every input and replays the games of `part` (of 2).

    Spawned, not forked: the parent may hold DuckDB, Arrow or polars thread pools, which
    fork does not copy safely. Start-up (imports) costs ~0.3 s, and only inputs of 32 MiB or
    more, which take seconds, use a second process."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_part_main,
        args=(str(store.root), default_rules, ingest_id, to_read, part, sender, max_line_bytes),
        daemon=True,
    )
    process.start()
    sender.close()
    return process, receiver


def _part_main(root: str, default_rules: Ruleset, ingest_id: str, to_read, part: int, sender,
               max_line_bytes: int = MAX_LINE_BYTES) -> None:
    try:
        gc.disable()
        store = Store.attach(Path(root))
        run = _Run(store, default_rules, ingest_id, None, part=part, parts=2, max_line_bytes=max_line_bytes)
        _read_all(run, to_read)
        run.replay_touched()
        run.finish()
        sender.send(("ok", run.result()))
    except OSError as exc:  # a full or read-only disk: the parent reports it as for its own writes
        sender.send(("oserror", (exc.errno, exc.strerror, exc.filename)))
    except BaseException as exc:  # reported by the parent, which owns the exit code
        import traceback

        sender.send(("error", f"{exc!r}\n{traceback.format_exc()}"))
    finally:
        sender.close()


def _join_part(child) -> dict[str, Any]:
    process, receiver = child
    try:
        status, payload = receiver.recv()
    except EOFError:
        process.join()
        raise RuntimeError(f"ingest worker process died (exit code {process.exitcode})") from None
    process.join()
    if status == "oserror":
        raise OSError(*payload)
    if status != "ok":
        raise RuntimeError(f"ingest worker process failed: {payload}")
    return payload


def _merge_sources(per_part: list[list[SourceCounts]]) -> list[SourceCounts]:
    """Every part read every line: lines, blanks, sha256 and problems come from part 0,
    the counts of events, duplicates and rejects are summed."""
    merged = per_part[0]
    for other in per_part[1:]:
        for mine, theirs in zip(merged, other):
            mine.events += theirs.events
            mine.duplicates += theirs.duplicates
            mine.rejects += theirs.rejects
    return merged


def _manifest(old: dict[str, Any], summary: IngestSummary, sources: list[SourceCounts], ingest_id: str,
              default_rules: Ruleset) -> dict[str, Any]:
    manifest = {k: v for k, v in old.items() if k not in ("tables", "snapshot")}
    manifest["files"] = list(old["files"]) + [c.as_manifest(ingest_id) for c in sources]
    counted = ("files", "files_skipped", "lines", "blank_lines", "events", "duplicates", "rejects", "games",
               "games_recomputed", "findings", "findings_error", "findings_warning", "file_problems")
    record = {
        "ingest_id": ingest_id,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "default_rules": default_rules.to_dict(),
        "skipped": summary.skipped_paths,
        "counts": {k: v for k, v in summary.to_dict().items() if k in counted},
    }
    manifest["ingests"] = list(old["ingests"]) + [record]
    return manifest

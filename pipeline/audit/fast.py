"""Audit in two passes: a fast scan finds the clean games, the reference replays the rest.

Pass 1 reads every line in blocks, parsed as ingest parses them
(`pipeline.ingest.parse.parse_block`: the compiled scan, msgspec for what it does not
take, the reader's own `parse_line` for what neither takes), and runs the compiled kernel
over their integer columns without records. At the end it knows which games are clean
(no finding at all: their results come from the kernel's totals) and which lines are bad.
A large plain file is scanned by two threads at once, each reading a byte range of its
own; whichever finishes first takes the back half of what the other has not read yet (and
again, while that is worth it), so neither core waits long at the end. Threads, not
processes: the scan, the kernel and Arrow's compute functions release the interpreter's
lock, and a second process would load numba and its compiled code a second time. A game
seen in two ranges is simply not clean (the reference replays it whole in pass 2).

Pass 2, only if some game is suspect or some line bad, reads the inputs again and feeds
the reference `Replayer` the bad lines and every event of the suspect games, in input
order. Pass 1 noted, for each block it read from a plain file, its bytes, its lines and
the games it met there, so pass 2 reads only the blocks that hold a bad line or an event
of a suspect game; within them a line of a clean game is recognised by its raw `game_id`
bytes and skipped without being parsed. The reference's findings, traces and results for those games are exactly
what a one-pass reference audit gives (games do not interact in replay), and clean games
have no finding, so the merged report is the same report, finding for finding.

With `give_up` (what `audit_sources` asks for), pass 1 stops once the lines read are mostly
bad (MOSTLY_BAD_AFTER): such a log is cheaper audited in one reference pass, which the
caller then runs.

Inputs are read twice, so standard input (readable once) is audited in one reference
pass instead; so are audits with a scoresheet (which needs every game's turns) or a game
filter (see `pipeline.audit.run.audit_sources`).

Memory: pass 1 holds one row of integers per game and per seat, the results of clean
games, the line numbers of bad lines and, per block read, the slots of the games met in it
(a few dozen integers a block in a log of whole games); pass 2 the reference's state of
suspect games.
"""

from __future__ import annotations

import gc
import os
import re
import threading
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from pipeline.audit import finding_store
from pipeline.ingest.parse import parse_block

from pipeline.audit.finding_store import FindingStore
from pipeline.audit.game_stores import DiskGames
from pipeline.reader.inputs import InputSource
from pipeline.reader.sniff import GZIP_MAGIC, starts_with
from pipeline.reader.split import Block, NotInBlocks, line_start, plain_blocks, split_source
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem, GameResult
from pipeline.reader import iter_lines, parse_line
from pipeline.replay import Replayer
from pipeline.replay.fast.arrow import event_columns
from pipeline.replay.fast.runner import EventColumns, FastReplay
from pipeline.rules import Ruleset

BLOCK = 1 << 20  # bytes read at a time from a plain file; a smaller line limit reads by the splitter
PARALLEL_MIN_BYTES = 32 << 20  # a plain file this large is read by two threads at once
# The helper thread's region starts here; the ranges rebalance as they go (see _Regions),
# so this only sets where the one certain range boundary falls.
FIRST_SHARE = 0.5
# pass 1 gives up (MostlyBad) once this many lines are read and more than this share of them
# are bad: each bad line costs pass 1 a decode and the reader's parse, and pass 2 the same
# parse again, so such a log is cheaper audited in one reference pass
MOSTLY_BAD_AFTER = 50_000
MOSTLY_BAD_SHARE = 0.5
# ... and once it has met more games than this, or noted more bad lines: pass 1 holds a row
# of integers per game, each clean game's result and 8 bytes per bad line, all until the end
# (about 1.5 KB a game). The reference pass keeps games, results and findings on disk past a
# limit (pipeline/audit/game_stores.py), so it audits a log of millions of games in bounded memory.
MANY_GAMES = 100_000
MANY_BAD_LINES = 10_000_000
STEAL_MIN_BYTES = 4 << 20  # a thread that is done takes half of the other's rest if this much is left
_GAME_ID = re.compile(rb'"game_id"\s*:\s*"([^"\\]*)"').search


@dataclass
class ScanSummary:
    """What pass 1 learnt, independent of how it was read (one range or several)."""

    events: int = 0
    bad_lines: list[array] = field(default_factory=list)  # per source: numbers of its bad lines
    clean: dict[str, GameResult] = field(default_factory=dict)  # clean games' results
    starts: dict[str, int] = field(default_factory=dict)  # started games: position of their first game_start
    seen: set[str] = field(default_factory=set)  # every game id met
    lines: int = 0  # lines read (blank ones included)
    # per source, the blocks pass 1 read (first byte, end byte, first line, lines, part,
    # slots in that part of the games met in the block), or None where the reader's lines
    # were read; a part is one kernel state (one range), `part_games` its game ids by slot
    blocks: list[list[tuple[int, int, int, int, int, np.ndarray]] | None] = field(default_factory=list)
    part_games: list[list[str]] = field(default_factory=list)

    @property
    def suspect(self) -> set[str]:
        return self.seen - self.clean.keys()

    def blocks_to_replay(self, source: int, suspect: set[str]) -> list[tuple[int, int, int, int]] | None:
        """(first byte, end byte, first line, lines) of the blocks of `source` that hold a bad
        line or an event of a suspect game, in order; None if it was not read in blocks."""
        records = self.blocks[source] if source < len(self.blocks) else None
        if records is None:
            return None
        marked = [
            np.fromiter((g in suspect for g in games), bool, len(games)) if suspect else None
            for games in self.part_games
        ]
        bad = (
            np.sort(np.frombuffer(self.bad_lines[source], np.int64))
            if source < len(self.bad_lines)
            else np.zeros(0, np.int64)
        )
        chosen = []
        for start, end, first, n, part, slots in records:
            at = np.searchsorted(bad, first)
            if (at < len(bad) and bad[at] < first + n) or (
                marked[part] is not None and len(slots) and marked[part][slots].any()  # type: ignore[index]
            ):
                chosen.append((start, end, first, n))
        return chosen


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The collector would rescan the batch's live objects again and again: paused meanwhile."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class MostlyBad(Exception):
    """Pass 1 gave up: most lines read so far are bad (see MOSTLY_BAD_AFTER), or it met too
    many games or bad lines to keep them in memory (MANY_GAMES, MANY_BAD_LINES)."""


def _upto(end: int) -> Callable[[int], int]:
    """Reads of BLOCK bytes up to `end` (see plain_blocks)."""
    return lambda pos: min(pos + BLOCK, end)


def _is_plain(source: InputSource) -> bool:
    """A regular file that is not gzip: read in blocks (anything else: the reader's lines)."""
    if source.path is None:
        return False
    try:
        if not source.path.is_file():
            return False
        return not starts_with(source.path, GZIP_MAGIC)
    except OSError:
        return False


def _scan_parts(
    parts: Sequence[tuple[InputSource, int, int | Callable[[int], int] | None]],
    default_rules: Ruleset,
    on_items: Callable[[int], None] | None = None,
    on_problem: Callable[[FileProblem], None] | None = None,
    blocks: bool = True,
    max_line_bytes: int = MAX_LINE_BYTES,
    give_up: bool = False,
    jit: bool = True,
) -> ScanSummary:
    """Pass 1 over (source, start byte, end byte or reads as for plain_blocks or None for the
    whole source), in order, in this thread, as one part (one kernel state). Plain files
    are read in blocks whose places are noted (pass 2 reads only some of them again); the
    rest through the splitter ingest uses. With `give_up`, raises MostlyBad as soon as the
    lines read are mostly bad ones."""
    fast = FastReplay(default_rules, records=False, jit=jit)
    state = fast.state
    base = 0
    events = 0
    bad_lines: list[array[int]] = []
    records_of: list[list | None] = []
    last_line = 0
    read = 0  # lines read, for give_up

    def replay(block: Block, n_lines: int, bad: array) -> None:
        """Parse and replay one block of `n_lines` lines; its bad lines' numbers go to `bad`."""
        nonlocal base, events, read
        cols, bad_items = block_columns(block, fast, default_rules, base, max_line_bytes, jit)
        fast.feed(cols)
        bad.extend(b.line for b in bad_items)
        base += len(cols)
        events += len(cols)
        if give_up:
            read += n_lines
            bad_count = sum(map(len, bad_lines))
            if read >= MOSTLY_BAD_AFTER and bad_count > MOSTLY_BAD_SHARE * read:
                raise MostlyBad
            if len(state.game_ids) > MANY_GAMES or bad_count > MANY_BAD_LINES:
                raise MostlyBad

    with _gc_paused():
        for source, start, end in parts:
            bad = array("q")
            bad_lines.append(bad)
            name = source.name
            if blocks and (end is not None or _is_plain(source)):
                reads = end if callable(end) else _upto(end if end is not None else source.path.stat().st_size)  # type: ignore[union-attr]
                records: list = []
                records_of.append(records)
                for data, first_line, n_lines, at, stop in plain_blocks(
                    source.path,  # type: ignore[arg-type]  # a plain file has one
                    start,
                    reads,
                    max_line_bytes,
                ):
                    replay(Block(0, name, first_line, data + b"\n"), n_lines, bad)
                    records.append((at, stop, first_line, n_lines, 0, state.last_slots.astype(np.int32)))
                    last_line = first_line + n_lines - 1
                    if on_items is not None:
                        on_items(stop - at + 1)
                continue
            records_of.append(None)
            done = 0
            for block in split_source(source, 0, BLOCK, max_line_bytes):
                replay(block, block.lines, bad)
                if on_items is not None:
                    on_items(source.raw_bytes - done)
                    done = source.raw_bytes
            if source.problem is not None and on_problem is not None:
                on_problem(source.problem)
    summary = ScanSummary(
        events=events,
        bad_lines=bad_lines,
        lines=last_line,
        blocks=records_of,
        part_games=[list(state.game_ids)],
    )
    summary.seen = set(state.game_ids)
    clean = fast.clean()
    for slot, game_id in enumerate(state.game_ids):
        if state.players[slot] is not None:
            summary.starts[game_id] = fast.order(slot)
        if clean[slot]:
            summary.clean[game_id] = fast.result(slot)
    return summary


def block_columns(
    block: Block, fast: FastReplay, default_rules: Ruleset, base: int, max_line_bytes: int, jit: bool = True
) -> tuple[EventColumns, list[BadLine]]:
    """The kernel's columns of a block's valid events, in line order (positions from
    `base`), and its bad lines: parsed as ingest parses (the compiled scan, then msgspec,
    then the reader's `parse_line` for whatever they refuse), so a line is valid here
    exactly when the reader accepts it, with the same values."""
    parsed = parse_block(block, "", max_line_bytes, jit=jit)
    events = parsed.events
    cols = event_columns(events, fast, default_rules, base)
    # The scan's rows come first, then msgspec's and the reader's (each in line order): the
    # integer columns are put in line order, cheaper than taking the whole table.
    line = events.column("source_line").to_numpy()
    if len(line) > 1 and (line[1:] < line[:-1]).any():
        order = np.argsort(line, kind="stable")
        at = np.empty_like(order)
        at[order] = np.arange(len(order))
        cols.reorder(order)
        first = itemgetter(0)
        cols.starts = sorted(((base + int(at[p - base]), g, pl, r) for p, g, pl, r in cols.starts), key=first)
        cols.ends = sorted(((base + int(at[p - base]), *rest) for p, *rest in cols.ends), key=first)
    return cols, parsed.bad


def scan(
    sources: Sequence[InputSource],
    default_rules: Ruleset,
    on_problem: Callable[[FileProblem], None] | None = None,
    on_items: Callable[[int], None] | None = None,
    *,
    parallel: bool = True,
    max_line_bytes: int = MAX_LINE_BYTES,
    give_up: bool = False,
    jit: bool = True,
) -> ScanSummary:
    """Pass 1 over every source, in order (two threads at once for one large plain file).
    Blocks are read only when the line limit is at least a block (see `plain_blocks`); with a
    smaller limit every line goes through the reader's own splitter. With `give_up`,
    raises MostlyBad once the lines read are mostly bad (in either thread)."""
    blocks = max_line_bytes >= BLOCK
    if blocks and parallel and len(sources) == 1 and (os.cpu_count() or 1) > 1:
        try:
            found = _scan_shared(sources[0], default_rules, max_line_bytes, give_up, jit, on_items)
        except NotInBlocks:
            found = None  # a line over the limit: the whole file by the splitter, below
        if found is not None:
            return found
    parts = [(source, 0, None) for source in sources]
    try:
        if blocks:
            return _scan_parts(
                parts, default_rules, on_items, on_problem, max_line_bytes=max_line_bytes, give_up=give_up, jit=jit
            )
    except NotInBlocks:
        parts = [(s.fresh(), 0, None) for s in sources]
    summary = _scan_parts(
        parts,
        default_rules,
        on_items,
        on_problem,
        blocks=False,
        max_line_bytes=max_line_bytes,
        give_up=give_up,
        jit=jit,
    )
    summary.blocks = [None] * len(sources)
    return summary


def _append(summary: ScanSummary, part: ScanSummary, *, line_offset: int, new_source: bool) -> None:
    """Add a later part of the input: its positions come after every event so far; a game
    met in both is not clean (its events are split, only the reference sees them whole)."""
    both = summary.seen & part.seen
    for game_id, position in part.starts.items():
        summary.starts.setdefault(game_id, summary.events + position)
    for game_id in both:
        summary.clean.pop(game_id, None)
    summary.clean.update((g, r) for g, r in part.clean.items() if g not in both)
    summary.seen |= part.seen
    summary.events += part.events
    (bad,) = part.bad_lines  # parts are ranges of one source
    if line_offset:
        bad = array("q", (n + line_offset for n in bad))
    (records,) = part.blocks
    assert records is not None  # ranges of one plain file: read in blocks
    shift = len(summary.part_games)
    summary.part_games.extend(part.part_games)
    records = [(start, end, first + line_offset, n, k + shift, slots) for start, end, first, n, k, slots in records]
    if new_source:
        summary.bad_lines.append(bad)
        summary.blocks.append(records)
    else:
        summary.bad_lines[-1].extend(bad)
        summary.blocks[-1].extend(records)  # type: ignore[union-attr]  # read in blocks, as `part` was


# ---- one file, two threads ------------------------------------------------------------------


class Positions:
    """[this thread's read position, its region's end, the other thread's position, its
    end], changed only under `get_lock()`."""

    def __init__(self, values: Sequence[int]):
        self._values = list(values)
        self._lock = threading.Lock()

    def get_lock(self) -> threading.Lock:
        return self._lock

    def __getitem__(self, i: int) -> int:
        return self._values[i]

    def __setitem__(self, i: int, value: int) -> None:
        self._values[i] = value


class _Regions:
    """The byte regions of one file that the two threads are reading: per thread (0: the
    calling one, 1: the helper) how far it has committed to read and where its region ends,
    in one `Positions`. A thread reads its region forward, one BLOCK at a time (each read
    committed first, under the lock); one that is done takes the back half of the other's
    uncommitted rest, cut at a line start, as a new range of its own (`steal`). So both
    finish within about a block's time of each other however fast each goes, and the file
    is cut into few ranges (each range boundary makes the games that cross it suspect)."""

    def __init__(self, shared: Positions, me: int, path: Path):
        self.shared, self.me, self.path = shared, me, path

    def __call__(self, pos: int) -> int:
        """The end of the next read from `pos` (pos itself: the region is done)."""
        shared, me = self.shared, 2 * self.me
        with shared.get_lock():
            end = max(pos, min(pos + BLOCK, shared[me + 1]))
            shared[me] = end
        return end

    def steal(self) -> int | None:
        """Take the back half of the other thread's rest; its start, or None if too little is left."""
        shared, me, other = self.shared, 2 * self.me, 2 * (1 - self.me)
        with shared.get_lock():
            pos, end = shared[other], shared[other + 1]
            if end - pos < STEAL_MIN_BYTES:
                return None
            cut = line_start(self.path, (pos + end) // 2, end)
            if cut is None:
                return None
            shared[other + 1] = cut
            shared[me], shared[me + 1] = cut, end
        return cut

    def stop_both(self) -> None:
        """End both regions at what each has read (pass 1 gives up: MostlyBad)."""
        shared = self.shared
        with shared.get_lock():
            shared[1], shared[3] = shared[0], shared[2]


def _scan_regions(
    source: InputSource,
    start: int | None,
    regions: _Regions,
    default_rules: Ruleset,
    max_line_bytes: int,
    give_up: bool = False,
    jit: bool = True,
    on_items: Callable[[int], None] | None = None,
) -> list[tuple[int, ScanSummary]]:
    """This thread's ranges: its own region from `start`, then stolen ones, each a part.
    Giving up (MostlyBad) or failing ends the other thread's region too."""
    parts = []
    try:
        while start is not None:
            parts.append(
                (
                    start,
                    _scan_parts(
                        [(source, start, regions)],
                        default_rules,
                        on_items,
                        max_line_bytes=max_line_bytes,
                        give_up=give_up,
                        jit=jit,
                    ),
                )
            )
            start = regions.steal()
    except BaseException:
        regions.stop_both()
        raise
    return parts


def _scan_shared(
    source: InputSource,
    default_rules: Ruleset,
    max_line_bytes: int,
    give_up: bool = False,
    jit: bool = True,
    on_items: Callable[[int], None] | None = None,
) -> ScanSummary | None:
    """One large plain file scanned by this thread and a helper thread at once (see
    _Regions): the parse and the kernel spend most of their time in compiled code and
    Arrow's, which let the other thread run. None where it cannot be (too small, not plain:
    scan it in one thread)."""
    if source.path is None or not _is_plain(source):
        return None
    path = Path(source.path)
    try:
        size = path.stat().st_size
        middle = line_start(path, int(size * FIRST_SHARE), size) if size >= PARALLEL_MIN_BYTES else None
    except OSError:
        return None
    if middle is None:
        return None
    shared = Positions([0, middle, middle, size])
    theirs: list[tuple[int, ScanSummary]] = []
    failed: list[BaseException] = []

    def helper() -> None:
        try:
            theirs.extend(
                _scan_regions(
                    source, middle, _Regions(shared, 1, path), default_rules, max_line_bytes, give_up, jit, on_items
                )
            )
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            failed.append(exc)

    thread = threading.Thread(target=helper, name="audit-pass-1", daemon=True)
    thread.start()
    try:
        mine = _scan_regions(
            source, 0, _Regions(shared, 0, path), default_rules, max_line_bytes, give_up, jit, on_items
        )
    finally:
        thread.join()
    if failed:
        raise failed[0]
    return _merge(mine + theirs)


def _merge(parts: list[tuple[int, ScanSummary]]) -> ScanSummary:
    """One summary of a file's ranges (start byte, part), given in any order."""
    summary = ScanSummary()
    line_offset = 0
    for i, (_, part) in enumerate(sorted(parts, key=lambda p: p[0])):
        _append(summary, part, line_offset=line_offset, new_source=i == 0)
        line_offset += part.lines
    return summary


# ---- pass 2 ------------------------------------------------------------------------------
def replay_suspects(
    sources: Sequence[InputSource],
    found: ScanSummary,
    default_rules: Ruleset,
    *,
    trace: bool,
    findings: FindingStore | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    finish: bool = True,
    progress: Callable[..., None] | None = None,
) -> Replayer:
    """Pass 2: the reference replay of the bad lines and of every event of the suspect games.
    With `findings`, the replayer's findings are moved there as they come (bounded memory);
    without `finish`, the caller finishes the replayer (in steps: pipeline.audit.run.finish);
    `progress` is told the bytes to read again, then each block's as it is read."""
    replayer = Replayer(default_rules, trace=trace, records=False, spill=DiskGames())
    suspect = found.suspect
    out = replayer.out
    replay = replayer.feed

    def feed(item) -> None:
        replay(item)
        if findings is not None and len(out.findings) >= finding_store.DRAIN:
            findings.extend(out.findings)
            out.findings.clear()

    if suspect or any(found.bad_lines):
        chosen = [found.blocks_to_replay(i, suspect) for i in range(len(sources))]
        if progress is not None:
            again = sum(
                sum(end - start + 1 for start, end, _, _ in blocks) if blocks is not None else _size(source)
                for source, blocks in zip(sources, chosen)
            )
            progress(stage=f"replaying {len(suspect):,} games with findings", total=again or None, unit="bytes")
        with _gc_paused():
            for source, bad_numbers, blocks in zip(sources, found.bad_lines, chosen):
                _replay_source(feed, source, _Lines(bad_numbers), suspect, blocks, max_line_bytes, progress)
    if finish:
        replayer.finish()
    return replayer


def _size(source: InputSource) -> int:
    try:
        return source.path.stat().st_size if source.path is not None else 0
    except OSError:
        return 0


class _Lines:
    """Line numbers (the bad lines of a source) asked about in increasing order: `n in
    lines` walks a sorted int64 array instead of a set, 8 bytes a line instead of about 70
    (a log of millions of bad lines)."""

    def __init__(self, numbers: Sequence[int]):
        self.numbers = (
            np.sort(np.frombuffer(numbers, np.int64))
            if isinstance(numbers, array)
            else np.sort(np.asarray(numbers, np.int64))
        )
        self._at = 0

    def __contains__(self, n: int) -> bool:
        numbers, at = self.numbers, self._at
        if at < len(numbers) and numbers[at] < n:
            at = self._at = int(np.searchsorted(numbers, n))
        return at < len(numbers) and numbers[at] == n


def _replay_source(
    feed: Callable,
    source: InputSource,
    bad: _Lines,
    suspect: set[str],
    chosen: list[tuple[int, int, int, int]] | None,
    max_line_bytes: int = MAX_LINE_BYTES,
    progress: Callable[..., None] | None = None,
) -> None:
    """Pass 2 over one source: only the `chosen` blocks of a file pass 1 read in blocks
    (ScanSummary.blocks_to_replay), else every line as the reader splits them."""
    name = source.name
    if chosen is not None:
        with open(source.path, "rb", buffering=0) as fh:  # type: ignore[arg-type]
            for start, end, first, n_lines in chosen:
                fh.seek(start)
                block = fh.read(end - start)
                lines = block.split(b"\n")
                if len(block) != end - start or len(lines) != n_lines:  # pass 1 read other bytes
                    raise OSError(f"{name}: the file changed while it was audited")
                for offset, raw in enumerate(lines):
                    if raw and not raw.isspace():
                        _replay_line(feed, raw, name, first + offset, bad, suspect)
                if progress is not None:
                    progress(end - start + 1)
        return
    again = InputSource(name, path=source.path)
    told = 0
    for count, (line, raw) in enumerate(iter_lines(again, max_line_bytes), 1):
        _replay_line(feed, raw, name, line, bad, suspect)
        if progress is not None and count % 2048 == 0:
            progress(again.raw_bytes - told)
            told = again.raw_bytes


def _replay_line(feed: Callable, raw: bytes, name: str, line: int, bad: _Lines, suspect: set[str]) -> None:
    if line in bad:
        item = parse_line(raw, name, line)
        if item is not None:
            feed(item)
        return
    if b"\\" not in raw and raw.count(b'"game_id"') == 1:
        m = _GAME_ID(raw)
        if m is not None:
            try:
                if m.group(1).decode("utf-8") not in suspect:
                    return  # a line of a clean game: nothing to say about it
            except UnicodeDecodeError:
                pass
    item = parse_line(raw, name, line)
    if type(item) is Event:
        if item.game_id in suspect:
            feed(item)
    elif isinstance(item, BadLine):  # pragma: no cover - pass 1 found every bad line
        feed(item)


def merged_results(found: ScanSummary, reference_games: Iterable[GameResult]) -> list[GameResult]:
    """Every started game's result, in the order the reference lists them (first game_start)."""
    results = [*found.clean.values(), *reference_games]
    results.sort(key=lambda g: found.starts[g.game_id])
    return results

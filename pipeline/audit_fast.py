"""Audit in two passes: a fast scan finds the clean games, the reference replays the rest.

Pass 1 reads every line in batches (`pipeline.replay.fast.lines`: one msgspec call per
batch, the reader's own `parse_line` for any batch that is not plainly valid) and runs the
compiled kernel over them without records. At the end it knows which games are clean (no
finding at all: their results come from the kernel's totals) and which lines are bad.
A large plain file is scanned as two byte ranges at once, one per core: a game seen in
both ranges is simply not clean (the reference replays it whole in pass 2).

Pass 2, only if some game is suspect or some line bad, reads the inputs again and feeds
the reference `Replayer` the bad lines and every event of the suspect games, in input
order: a line of a clean game is recognised by its raw `game_id` bytes and skipped without
being parsed. The reference's findings, traces and results for those games are exactly
what a one-pass reference audit gives (games do not interact in replay), and clean games
have no finding, so the merged report is the same report, finding for finding.

Inputs are read twice, so standard input (readable once) is audited in one reference
pass instead; so are audits with a scoresheet (which needs every game's turns) or a game
filter (see `pipeline.audit.audit_sources`).

Memory: pass 1 holds one row of integers per game and per seat, the results of clean
games and the line numbers of bad lines; pass 2 the reference's state of suspect games.
"""
from __future__ import annotations

import gc
import os
import re
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence

import numpy as np

from pipeline import finding_store, worker_boot
from pipeline.finding_store import FindingStore
from pipeline.inputs import InputSource
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem, GameResult
from pipeline.reader import iter_lines, parse_line
from pipeline.replay import Replayer
from pipeline.replay.fast.lines import LineBatcher
from pipeline.replay.fast.runner import FastReplay
from pipeline.rules import Ruleset

BATCH_LINES = 16_384  # lines decoded per msgspec call; a refused batch is re-parsed line by line
PARALLEL_MIN_BYTES = 32 << 20  # a plain file this large is scanned as two ranges at once
# The first range's share of the bytes: this process starts on it at once, while the spawned
# worker first imports pyarrow, msgspec and the compiled kernel (about a second), so an even
# split left this process waiting for the worker at the end.
FIRST_SHARE = 0.58
_GAME_ID = re.compile(rb'"game_id"\s*:\s*"([^"\\]*)"').search
_NOT_A_RANGE_START = (b"\x1f\x8b", b"\xef\xbb\xbf")  # gzip magic, BOM: the reader treats them specially


@dataclass
class ScanSummary:
    """What pass 1 learnt, independent of how it was read (one range or several)."""

    events: int = 0
    bad_lines: list[array] = field(default_factory=list)  # per source: numbers of its bad lines
    clean: dict[str, GameResult] = field(default_factory=dict)  # clean games' results
    starts: dict[str, int] = field(default_factory=dict)  # started games: position of their first game_start
    seen: set[str] = field(default_factory=set)  # every game id met
    lines: int = 0  # lines read (blank ones included)
    read_in_blocks: bool = True  # plain files were read in blocks (else all by the reader's lines)

    @property
    def suspect(self) -> set[str]:
        return self.seen - self.clean.keys()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The collector would rescan the batch's live objects again and again (performance-facts.md)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _NotPlain(Exception):
    """A plain file turned out to need the reader's own line handling: scan the reader's way."""


BLOCK = 1 << 20  # bytes read at a time by the block reader


def _blocks(path: Path, start: int, end: int, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes, int, int]]:
    """(block of whole lines without the final newline, number of its first line, number of
    its lines), for the bytes [start, end) of a plain file; lines are counted from 1 at `start`.

    The same lines as iter_lines gives (split on b"\\n" only; a last line without newline
    is a line); blank lines stay in (the batcher skips them). A BOM at the file's start is
    dropped, as the reader does. Raises _NotPlain for a line longer than max_line_bytes (the
    reader makes it a reject, in bounded memory) or a read error, so such files are read by
    the reader itself. Every line but a block's first (carried over from the previous read)
    lies within one read of BLOCK bytes: with max_line_bytes >= BLOCK (the caller's
    condition for reading blocks) only that one needs measuring."""
    try:
        with open(path, "rb", buffering=0) as fh:
            fh.seek(start)
            left = end - start
            line = 1
            carry = b""
            first = start == 0
            while left > 0:
                data = fh.read(min(BLOCK, left))
                if not data:
                    break
                left -= len(data)
                if first:
                    first = False
                    if data.startswith(b"\xef\xbb\xbf"):
                        data = data[3:]
                if carry:
                    # the one line that can be longer than a read: the carried one, completed
                    at = data.find(b"\n")
                    if len(carry) + (at if at >= 0 else len(data)) > max_line_bytes:
                        raise _NotPlain
                    data = carry + data
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                block, carry = data[:cut], data[cut + 1:]
                n = block.count(b"\n") + 1
                yield block, line, n
                line += n
            if carry:
                if len(carry) > max_line_bytes:
                    raise _NotPlain
                yield carry, line, carry.count(b"\n") + 1
    except OSError:
        raise _NotPlain from None


def _is_plain(source: InputSource) -> bool:
    """A regular file that is not gzip: read in blocks (anything else: the reader's lines)."""
    if source.path is None:
        return False
    try:
        if not source.path.is_file():
            return False
        with open(source.path, "rb") as fh:
            return fh.read(2) != b"\x1f\x8b"
    except OSError:
        return False


def _scan_parts(parts: Sequence[tuple[InputSource, int, int | None]], default_rules: Ruleset,
                on_items: Callable[[int], None] | None = None,
                on_problem: Callable[[FileProblem], None] | None = None,
                blocks: bool = True, max_line_bytes: int = MAX_LINE_BYTES) -> ScanSummary:
    """Pass 1 over (source, start byte, end byte or None for the whole source), in order, in
    this process. Plain files are read in blocks; the rest through the reader's lines."""
    fast = FastReplay(default_rules, records=False)
    batcher = LineBatcher(fast.state, default_rules)
    feed = fast.feed
    base = 0
    bad_lines = []
    last_line = 0
    with _gc_paused():
        for source, start, end in parts:
            bad = array("q")
            bad_lines.append(bad)
            on_bad = lambda b: bad.append(b.line)  # noqa: E731
            name = source.name
            if blocks and (end is not None or _is_plain(source)):
                stop = end if end is not None else source.path.stat().st_size  # type: ignore[union-attr]
                for block, first_line, n_lines in _blocks(source.path, start, stop,  # type: ignore[arg-type]
                                                          max_line_bytes):
                    cols = batcher.block_columns(block, first_line, name, base, on_bad, n_lines)
                    feed(cols)
                    base += len(cols)
                    last_line = first_line + n_lines - 1
                    if on_items is not None:
                        on_items(n_lines)
                continue
            lines = iter_lines(source, max_line_bytes)
            while chunk := list(islice(lines, BATCH_LINES)):
                linenos, raws = zip(*chunk)
                cols = batcher.lines_columns(raws, linenos, name, base, on_bad)
                feed(cols)
                base += len(cols)
                if on_items is not None:
                    on_items(len(chunk))
            if source.problem is not None and on_problem is not None:
                on_problem(source.problem)
    summary = ScanSummary(events=batcher.events, bad_lines=bad_lines, lines=last_line)
    st = fast.state
    summary.seen = set(st.game_ids)
    clean = fast.clean()
    for slot, game_id in enumerate(st.game_ids):
        if st.players[slot] is not None:
            summary.starts[game_id] = fast.order(slot)
        if clean[slot]:
            summary.clean[game_id] = fast.result(slot)
    return summary


def scan(sources: Sequence[InputSource], default_rules: Ruleset,
         on_problem: Callable[[FileProblem], None] | None = None,
         on_items: Callable[[int], None] | None = None, *, parallel: bool = True,
         max_line_bytes: int = MAX_LINE_BYTES) -> ScanSummary:
    """Pass 1 over every source, in order (two ranges at once for one large plain file).
    Blocks are read only when the line limit is at least a block (see `_blocks`); with a
    smaller limit every line goes through the reader's own splitter."""
    blocks = max_line_bytes >= BLOCK
    if blocks and parallel and len(sources) == 1 and (os.cpu_count() or 1) > 1:
        found = _scan_two_ranges(sources[0], default_rules, max_line_bytes)
        if found is not None:
            return found
    parts = [(source, 0, None) for source in sources]
    try:
        if blocks:
            return _scan_parts(parts, default_rules, on_items, on_problem, max_line_bytes=max_line_bytes)
    except _NotPlain:
        parts = [(InputSource(s.name, path=s.path), 0, None) for s in sources]
    summary = _scan_parts(parts, default_rules, on_items, on_problem, blocks=False, max_line_bytes=max_line_bytes)
    summary.read_in_blocks = False
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
    if new_source:
        summary.bad_lines.append(bad)
    else:
        summary.bad_lines[-1].extend(bad)


# ---- one file as two byte ranges ----------------------------------------------------------
def _split_point(path: Path, size: int) -> int | None:
    """Start of the first line that begins at or after FIRST_SHARE of the file, or None
    where a range cannot start (no such line, or its first bytes would be read as gzip or BOM)."""
    with open(path, "rb") as fh:
        head = fh.read(2)
        if head == b"\x1f\x8b":
            return None
        offset = int(size * FIRST_SHARE)
        fh.seek(offset)
        while block := fh.read(1 << 16):
            at = block.find(b"\n")
            if at >= 0:
                start = offset + at + 1
                fh.seek(start)
                first = fh.read(3)
                if not first or any(first.startswith(m) for m in _NOT_A_RANGE_START):
                    return None
                return start
            offset += len(block)
    return None


def _scan_range(source: InputSource, start: int, end: int, default_rules: Ruleset, max_line_bytes: int):
    """One byte range of a plain file: its summary and its number of lines."""
    part = _scan_parts([(source, start, end)], default_rules, max_line_bytes=max_line_bytes)
    return part, part.lines


def _scan_two_ranges(source: InputSource, default_rules: Ruleset, max_line_bytes: int) -> ScanSummary | None:
    if source.path is None:
        return None
    try:
        size = source.path.stat().st_size
        if size < PARALLEL_MIN_BYTES or not source.path.is_file():
            return None
        middle = _split_point(source.path, size)
    except OSError:
        return None
    if middle is None:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawned, not forked: the parent may already hold Arrow's thread pools
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=worker_boot.without_pandas) as pool:
            second = pool.submit(_scan_range, source, middle, size, default_rules, max_line_bytes)
            first, first_lines = _scan_range(source, 0, middle, default_rules, max_line_bytes)
            later, _ = second.result()
    except _NotPlain:
        return None  # a long line or a read error: the reader's own scan reports it where it happens
    except Exception:  # pragma: no cover - a worker that cannot start: scan in one process
        return None
    summary = ScanSummary()
    _append(summary, first, line_offset=0, new_source=True)
    _append(summary, later, line_offset=first_lines, new_source=False)
    return summary


# ---- pass 2 ------------------------------------------------------------------------------
SKIP_BLOCKS_UP_TO = 256  # suspect games: up to this many, blocks that name none of them are skipped whole


def replay_suspects(sources: Sequence[InputSource], found: ScanSummary, default_rules: Ruleset, *,
                    trace: bool, findings: FindingStore | None = None,
                    max_line_bytes: int = MAX_LINE_BYTES) -> Replayer:
    """Pass 2: the reference replay of the bad lines and of every event of the suspect games.
    With `findings`, the replayer's findings are moved there as they come (bounded memory)."""
    replayer = Replayer(default_rules, trace=trace, records=False)
    suspect = found.suspect
    out = replayer.out
    replay = replayer.feed

    def feed(item) -> None:
        replay(item)
        if findings is not None and len(out.findings) >= finding_store.DRAIN:
            findings.extend(out.findings)
            out.findings.clear()

    if suspect or any(found.bad_lines):
        with _gc_paused():
            for source, bad_numbers in zip(sources, found.bad_lines):
                _replay_source(feed, source, _Lines(bad_numbers), suspect, found.read_in_blocks, max_line_bytes)
    replayer.finish()
    return replayer


class _Lines:
    """Line numbers (the bad lines of a source) asked about in increasing order: `n in
    lines` walks a sorted int64 array instead of a set, 8 bytes a line instead of about 70
    (a log of millions of bad lines)."""

    def __init__(self, numbers: Sequence[int]):
        self.numbers = np.sort(np.frombuffer(numbers, np.int64)) if isinstance(numbers, array) \
            else np.sort(np.asarray(numbers, np.int64))
        self._at = 0

    def __contains__(self, n: int) -> bool:
        numbers, at = self.numbers, self._at
        if at < len(numbers) and numbers[at] < n:
            at = self._at = int(np.searchsorted(numbers, n))
        return at < len(numbers) and numbers[at] == n

    def first_at_least(self, n: int) -> int | None:
        i = int(np.searchsorted(self.numbers, n))
        return int(self.numbers[i]) if i < len(self.numbers) else None


def _replay_source(feed: Callable, source: InputSource, bad: _Lines, suspect: set[str], blocks: bool,
                   max_line_bytes: int = MAX_LINE_BYTES) -> None:
    name = source.name
    if blocks and _is_plain(source) and len(suspect) <= SKIP_BLOCKS_UP_TO:
        # a block that holds no bad line, no escaped text and no suspect id cannot hold an
        # event of a suspect game: skip it without splitting it into lines
        needles = [b'"' + g.encode("utf-8", "surrogatepass") + b'"' for g in suspect]
        try:
            for block, first, n_lines in _blocks(source.path, 0, source.path.stat().st_size,  # type: ignore[union-attr]
                                                 max_line_bytes):
                last = first + n_lines - 1
                at = bad.first_at_least(first)
                if (at is None or at > last) and b"\\" not in block and not any(n in block for n in needles):
                    continue
                for offset, raw in enumerate(block.split(b"\n")):
                    if raw and not raw.isspace():
                        _replay_line(feed, raw, name, first + offset, bad, suspect)
            return
        except _NotPlain:  # pass 1 read this very file in blocks: it changed under us
            raise OSError(f"{name}: the file changed while it was audited") from None
    for line, raw in iter_lines(InputSource(name, path=source.path), max_line_bytes):
        _replay_line(feed, raw, name, line, bad, suspect)


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


def merged_results(found: ScanSummary, reference_games: list[GameResult]) -> list[GameResult]:
    """Every started game's result, in the order the reference lists them (first game_start)."""
    results = list(found.clean.values()) + reference_games
    results.sort(key=lambda g: found.starts[g.game_id])
    return results

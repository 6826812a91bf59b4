"""Stage 2, parse: a block of lines → the `events` Arrow table and the bad lines, in bulk.

The common line (a roll, keep, bank or farkle with its own fields and plain integers) is
decoded by one msgspec call into a flat typed struct, and its columns go to Arrow whole: no
`Event` record, no per-field Python per event beyond one attribute read. Everything that
shape does not fit, and every row a column check (in Arrow, over the whole block) does not
pass, is handed line by line to the reference, `pipeline.reader.parse_line`, which says
what is wrong or builds the Event. So this path can only accept what the reference
accepts, with the same values; tests/test_ingest_parse.py holds the two equal on nasty
lines, sample logs and simulated logs with injected errors.

Why a flat struct rather than one struct per type: the field-per-type rules (a roll has
dice and no points, …) are checked on columns in C++, and a flat struct lets every column
be gathered with a plain attribute read. A field of another type (say `points` on a roll)
is an unknown field for the reference (it goes to `extra`), so such a row is sent there.

Before msgspec, every line of a block goes through a compiled scan
(`pipeline.ingest.scan`), which decodes the common turn lines of a strict subset of JSON
straight from the block's bytes into columns, and marks every other line for msgspec. The
block must be valid UTF-8 (else it skips the scan: the scan trusts the bytes of a text
value), and the value rules the scan does not judge (seq >= 1, non-empty names, 1-6 dice of
1-6, a type's own fields, ts) are checked on the columns; a row that fails goes to the
reference like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset import tables
from pipeline.dataset import batches
from pipeline.ingest import scan
from pipeline.reader.split import Block, too_long
from pipeline.model import BadLine, Event
from pipeline.reader import parse_line
from pipeline.reader.fast import TurnLine
from pipeline.reader.timestamps import TS_PATTERN

TURN_TYPES = pa.array(["roll", "keep", "bank", "farkle"])


_decode = msgspec.json.Decoder(TurnLine).decode
_MsgspecError = msgspec.MsgspecError


@dataclass
class Parsed:
    """What one block gives: its valid events (EVENTS schema; the bulk-decoded rows first,
    then the reference's, each in line order), its bad lines in line order, and its count of
    blank lines. `lines` = events + bad + blank. `bulk_rows`: events the compiled scan
    made (tests check that the path ran)."""

    events: pa.Table
    bad: list[BadLine] = field(default_factory=list)
    blank: int = 0
    lines: int = 0
    bulk_rows: int = 0


class _Lines:
    """The lines of a block as offsets into its data (found in C by numpy), so that the
    common lines are never cut into Python bytes objects: the scan reads them in place."""

    def __init__(self, data: bytes):
        self.data = data
        self.buf = np.frombuffer(data, np.uint8)
        self.ends = np.flatnonzero(self.buf == 10)  # one per line: the data ends with a newline
        self.starts = np.empty(len(self.ends), np.int64)
        self.starts[:1] = 0
        self.starts[1:] = self.ends[:-1] + 1

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> bytes:
        return self.data[self.starts[i] : self.ends[i]]

    def longest(self) -> int:
        return int((self.ends - self.starts).max()) if len(self.ends) else 0

    def blank(self) -> np.ndarray:
        """Which lines are blank (empty or only ASCII whitespace, as `parse.is_blank`), in
        array operations: a flood of blank lines costs no Python per line. A log line starts
        with `{`, so only lines starting with whitespace are looked into."""
        n = len(self.ends)
        empty = self.starts == self.ends
        first = self.buf[np.minimum(self.starts, max(len(self.buf) - 1, 0))] if n else np.zeros(0, np.uint8)
        maybe = np.flatnonzero(~empty & np.isin(first, _WHITESPACE))
        blank = empty
        if len(maybe) <= _FEW:
            for i in maybe.tolist():
                blank[i] = self[i].isspace()
        else:  # many: a running count of non-whitespace bytes, compared at each line's ends
            solid = np.zeros(len(self.buf) + 1, np.int64)
            np.cumsum(~np.isin(self.buf, _WHITESPACE), out=solid[1:])
            blank[maybe] = solid[self.ends[maybe]] == solid[self.starts[maybe]]
        return blank


_WHITESPACE = np.frombuffer(b" \t\n\r\x0b\x0c", np.uint8)  # bytes.isspace
_FEW = 64  # lines starting with whitespace checked one by one; more, all at once


def parse_block(block: Block, ingest_id: str, max_line: int, jit: bool = True, bulk_scan: bool = True) -> Parsed:
    """`bulk_scan` False leaves the compiled scan out: every line goes to msgspec's decoder (for
    small inputs, where loading or compiling the scan costs more than it saves)."""
    lines = _Lines(block.data)
    first, name = block.first_line, block.name
    bad = list(block.long_lines)
    parts: list[pa.Table] = []
    slow_at: list[int] = []
    blank_lines = lines.blank()
    over = lines.longest() > max_line  # rare: a line over the cap inside a block
    if over:
        blank_lines &= (lines.ends - lines.starts) <= max_line  # a line over the cap is never blank
    blank = int(blank_lines.sum())
    wanted = np.flatnonzero(~blank_lines)
    if over:
        struct_at = []
        for i in wanted.tolist():
            raw = lines[i]
            if len(raw) > max_line:
                bad.append(too_long(name, first + i, len(raw), raw, max_line))
            else:
                struct_at.append(i)
    elif bulk_scan:
        struct_at = _scanned(lines, wanted, first, name, ingest_id, parts, slow_at, jit)
    else:
        struct_at = wanted.tolist()
    bulk_rows = sum(t.num_rows for t in parts)
    fast: list[TurnLine] = []
    fast_at: list[int] = []
    decode = _decode
    for i in struct_at:
        try:
            fast.append(decode(lines[i]))
            fast_at.append(i)
        except _MsgspecError:
            slow_at.append(i)
    if fast:
        table, rejected = _fast_table(fast, fast_at, first, name, ingest_id)
        parts.append(table)
        slow_at.extend(rejected)
    slow: list[Event] = []
    for i in sorted(slow_at):
        item = parse_line(lines[i], name, first + i)
        if item is None:
            blank += 1  # pragma: no cover - blank lines are counted above
        elif type(item) is Event:
            slow.append(item)
        else:
            bad.append(item)
    if slow:  # rows out of line order: the route stage sorts once, by bucket and line
        parts.append(batches.events_table(slow, ingest_id))
    if not parts:
        table = tables.EVENTS.empty_table()
    elif len(parts) == 1:
        table = parts[0]
    else:
        table = pa.concat_tables(parts).combine_chunks()
    bad.sort(key=lambda b: b.line)
    return Parsed(table, bad, blank, len(lines) + len(block.long_lines), bulk_rows)


def _scanned(
    lines: _Lines,
    wanted: np.ndarray,
    first: int,
    name: str,
    ingest_id: str,
    parts: list[pa.Table],
    slow_at: list[int],
    jit: bool = True,
) -> list[int]:
    """Decode the block's lines at the indexes `wanted` (in order) with the compiled scan
    (module docstring): accepted rows are appended to `parts`, rows the column checks refuse
    to `slow_at`; returns the line indexes left for the msgspec path, in line order."""
    data = lines.data
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return wanted.tolist()
    n = len(wanted)
    ok = np.zeros(n, np.bool_)
    spans = np.full((n, 6), -1, np.int64)
    ints = np.zeros((n, 4), np.int64)
    has = np.zeros((n, 4), np.bool_)
    kinds = np.zeros(n, np.int8)
    dice = np.zeros((n, 6), np.int8)
    ndice = np.full(n, -1, np.int8)
    every = n == len(lines)
    scan.compiled("scan_lines", jit)(
        lines.buf,
        lines.starts if every else lines.starts[wanted],
        lines.ends if every else lines.ends[wanted],
        scan.KEY_BYTES,
        scan.KEY_LENS,
        scan.TYPE_BYTES,
        scan.TYPE_LENS,
        ok,
        spans,
        ints,
        has,
        kinds,
        dice,
        ndice,
    )
    rest = wanted[~ok].tolist()
    scanned = np.flatnonzero(ok)
    rows = wanted[scanned]  # the lines' indexes in the block
    # The rules msgspec's types check, here on the scan's integer columns (a row that breaks
    # one goes to the reference, which says what is wrong with it): non-empty game_id and
    # player, seq >= 1, 1-6 dice of 1-6; then the rules both decoders share (_shape_ok).
    spans, ints, has = spans[scanned], ints[scanned], has[scanned]
    counts, kind = ndice[scanned].astype(np.int64), kinds[scanned]
    listed = counts >= 0
    faces = dice[scanned]
    in_list = np.arange(6) < counts[:, None]
    ts = _text(lines.buf, spans[:, scan.SP_TS], spans[:, scan.SP_TS + 1], jit)
    player = spans[:, scan.SP_PLAYER + 1] > spans[:, scan.SP_PLAYER]
    good = (
        _shape_ok(kind, listed, has[:, scan.IN_POINTS], has[:, scan.IN_TOTAL], player, ts, has[:, scan.IN_TURN_POINTS])
        & (spans[:, scan.SP_GAME + 1] > spans[:, scan.SP_GAME])
        & (ints[:, scan.IN_SEQ] >= 1)
        & (~listed | (counts >= 1))
        & ~(in_list & ((faces < 1) | (faces > 6))).any(axis=1)
    )
    if not good.all():
        slow_at.extend(rows[~good].tolist())
        rows, spans, ints, has, counts, listed, faces, in_list, kind = (  # type: ignore[assignment]
            a[good] for a in (rows, spans, ints, has, counts, listed, faces, in_list, kind)
        )
        ts = ts.filter(pa.array(good))
    if not len(rows):
        return rest
    counts[~listed] = 0
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    parts.append(
        _events_from_columns(
            _text(lines.buf, spans[:, scan.SP_GAME], spans[:, scan.SP_GAME + 1], jit),
            pa.array(ints[:, scan.IN_SEQ]),
            TURN_TYPES.take(pa.array(kind)),
            ts,
            _text(lines.buf, spans[:, scan.SP_PLAYER], spans[:, scan.SP_PLAYER + 1], jit),
            pa.ListArray.from_arrays(
                pa.array(offsets), pa.array(faces[in_list], pa.int8()), type=_DICE, mask=pa.array(~listed)
            ),
            pa.array(ints[:, scan.IN_POINTS], mask=~has[:, scan.IN_POINTS]),
            pa.array(ints[:, scan.IN_TOTAL], mask=~has[:, scan.IN_TOTAL]),
            pa.array(ints[:, scan.IN_TURN_POINTS], mask=~has[:, scan.IN_TURN_POINTS]),
            pa.array(rows, pa.int64()),
            first,
            name,
            ingest_id,
        )
    )
    return rest


_DICE = tables.EVENTS.field("dice").type


def _text(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, jit: bool = True) -> pa.Array:
    """A string array of the byte spans [starts, ends) of buf; a start of -1 is null."""
    present = starts >= 0
    size = int((ends - starts)[present].sum())
    offsets = np.empty(len(starts) + 1, np.int32)
    out = np.empty(size, np.uint8)
    scan.compiled("gather_text", jit)(buf, starts, ends, offsets, out)
    validity = None if present.all() else pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(starts), [validity, pa.py_buffer(offsets), pa.py_buffer(out)])


def _fast_table(
    rows: list[TurnLine], at: list[int], first: int, name: str, ingest_id: str
) -> tuple[pa.Table, list[int]]:
    """The events table of the struct-decoded rows that pass the column checks, and the
    line indexes of those that do not (for the reference)."""
    n = len(rows)
    if n == 0:
        return tables.EVENTS.empty_table(), []
    kind = pa.array([r.type for r in rows], pa.string())
    ts = pa.array([r.ts for r in rows], pa.string())
    player = pa.array([r.player for r in rows], pa.string())
    dice = pa.array([r.dice for r in rows], pa.list_(pa.int8()))
    points = pa.array([r.points for r in rows], pa.int64())
    total = pa.array([r.total for r in rows], pa.int64())
    turn_points = pa.array([r.turn_points for r in rows], pa.int64())

    def valid(column: pa.Array) -> np.ndarray:
        return column.is_valid().to_numpy(zero_copy_only=False)

    codes = pc.index_in(kind, value_set=TURN_TYPES).fill_null(-1).to_numpy(zero_copy_only=False)
    ok = _shape_ok(codes, valid(dice), valid(points), valid(total), valid(player), ts, valid(turn_points))
    index = pa.array(at, pa.int64())
    rejected: list[int] = []
    if not ok.all():
        rejected = np.asarray(at)[~ok].tolist()
        keep = pa.array(np.flatnonzero(ok))
        rows = [rows[i] for i in keep.to_pylist()]
        kind, ts, player, dice, points, total, turn_points, index = (
            c.take(keep) for c in (kind, ts, player, dice, points, total, turn_points, index)
        )
        n = len(rows)
    table = _events_from_columns(
        pa.array([r.game_id for r in rows], pa.string()),
        pa.array([r.seq for r in rows], pa.int64()),
        kind,
        ts,
        player,
        dice,
        points,
        total,
        turn_points,
        index,
        first,
        name,
        ingest_id,
    )
    return table, rejected


def _events_from_columns(
    game_id,
    seq,
    kind,
    ts,
    player,
    dice,
    points,
    total,
    turn_points,
    index: pa.Array,
    first: int,
    name: str,
    ingest_id: str,
) -> pa.Table:
    """The EVENTS table of turn lines given as columns; `index`: each row's line in the block."""
    n = len(index)
    nulls = pa.nulls(n, pa.string())
    return pa.Table.from_arrays(
        [
            game_id,
            seq,
            batches.timestamps(ts) if ts.null_count < n else pa.nulls(n, tables.TS),
            kind,
            player,
            dice,
            pc.list_value_length(dice).cast(pa.int8()),
            points,
            total,
            turn_points,
            pa.nulls(n, pa.list_(pa.string())),
            nulls,
            pa.nulls(n, pa.list_(pa.string())),
            nulls,
            nulls,
            nulls,
            _repeated(name, n),
            pc.add(index, first),
            _repeated(ingest_id, n),
        ],
        schema=tables.EVENTS,
    )


def _repeated(text: str, n: int) -> pa.Array:
    """`text` n times, built from buffers (fill_null copied it value by value)."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8: Arrow's own conversion decides
        return pc.fill_null(pa.nulls(n, pa.string()), text)
    offsets = np.arange(n + 1, dtype=np.int64) * len(raw)
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(
            pa.string(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(raw * n)]
        )
    return pa.array([text] * n, pa.string())


def _shape_ok(
    kind: np.ndarray,
    dice: np.ndarray,
    points: np.ndarray,
    total: np.ndarray,
    player: np.ndarray,
    ts: pa.Array,
    turn_points: np.ndarray,
) -> np.ndarray:
    """Per row, for both decoders: a turn event type (`kind`, an index into TURN_TYPES, -1 for
    any other) with exactly its own fields (`dice`, `points`, `total`, `turn_points`,
    `player`: present or not; a keep has exactly one of `points` and `turn_points`), and a
    valid ts if any."""
    fields = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3],
        [
            dice & ~points & ~total & ~turn_points,
            dice & (points != turn_points) & ~total,
            ~dice & points & total & ~turn_points,
            ~dice & ~points & ~turn_points,
        ],
        False,
    )
    ok = fields & player
    if ts.null_count < len(ts):
        ok &= pc.fill_null(pc.match_substring_regex(ts, TS_PATTERN), True).to_numpy(zero_copy_only=False)
    return ok

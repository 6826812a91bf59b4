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
"""
from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import tables
from pipeline.ingest import batches
from pipeline.ingest.split import Block, too_long
from pipeline.model import BadLine, Event
from pipeline.reader import parse_line
from pipeline.reader.fast import Dice, Int, Name, Seq
from pipeline.reader.timestamps import TS_PATTERN

TURN_TYPES = pa.array(["roll", "keep", "bank", "farkle"])


class TurnLine(msgspec.Struct, forbid_unknown_fields=True):
    """A roll/keep/bank/farkle line as msgspec checks it in C. A default of None on a
    non-optional type: absent decodes to None, an explicit null is an error (→ reference)."""

    game_id: Name
    seq: Seq
    type: str
    ts: str = None  # type: ignore[assignment]
    player: Name = None  # type: ignore[assignment]
    dice: Dice = None  # type: ignore[assignment]
    points: Int = None  # type: ignore[assignment]
    total: Int = None  # type: ignore[assignment]


_decode = msgspec.json.Decoder(TurnLine).decode
_MsgspecError = msgspec.MsgspecError


@dataclass
class Parsed:
    """What one block gives: its valid events (EVENTS schema; the struct-decoded rows first,
    then the reference's, each in line order), its bad lines in line order, and its count of
    blank lines. `lines` = events + bad + blank."""

    events: pa.Table
    bad: list[BadLine] = field(default_factory=list)
    blank: int = 0
    lines: int = 0


def parse_block(block: Block, ingest_id: str, max_line: int) -> Parsed:
    lines = block.data.split(b"\n")
    lines.pop()  # the data ends with a newline
    first, name = block.first_line, block.name
    bad = list(block.long_lines)
    fast: list[TurnLine] = []
    fast_at: list[int] = []
    slow_at: list[int] = []
    decode = _decode
    if lines and max(map(len, lines)) > max_line:  # rare: a line over the cap inside a block
        for i, raw in enumerate(lines):
            if len(raw) > max_line:
                bad.append(too_long(name, first + i, len(raw), raw, max_line))
                continue
            try:
                fast.append(decode(raw))
                fast_at.append(i)
            except _MsgspecError:
                slow_at.append(i)
    else:
        for i, raw in enumerate(lines):
            try:
                fast.append(decode(raw))
                fast_at.append(i)
            except _MsgspecError:
                slow_at.append(i)
    table, rejected = _fast_table(fast, fast_at, first, name, ingest_id)
    slow_at.extend(rejected)
    slow: list[Event] = []
    blank = 0
    for i in sorted(slow_at):
        item = parse_line(lines[i], name, first + i)
        if item is None:
            blank += 1
        elif type(item) is Event:
            slow.append(item)
        else:
            bad.append(item)
    if slow:  # rows out of line order: the route stage sorts once, by bucket and line
        table = pa.concat_tables([table, batches.events_table(slow, ingest_id)]).combine_chunks()
    bad.sort(key=lambda b: b.line)
    return Parsed(table, bad, blank, len(lines) + len(block.long_lines))


def _fast_table(rows: list[TurnLine], at: list[int], first: int, name: str,
                ingest_id: str) -> tuple[pa.Table, list[int]]:
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
    ok = _shape_ok(kind, ts, player, dice, points, total)
    index = pa.array(at, pa.int64())
    rejected: list[int] = []
    if not pc.all(ok).as_py():
        rejected = pc.filter(index, pc.invert(ok)).to_pylist()
        keep = pc.filter(pa.array(range(n), pa.int64()), ok)
        rows = [rows[i] for i in keep.to_pylist()]
        kind, ts, player, dice, points, total, index = (
            c.take(keep) for c in (kind, ts, player, dice, points, total, index))
        n = len(rows)
    nulls = pa.nulls(n, pa.string())
    table = pa.Table.from_arrays(
        [
            pa.array([r.game_id for r in rows], pa.string()),
            pa.array([r.seq for r in rows], pa.int64()),
            batches.timestamps(ts) if ts.null_count < n else pa.nulls(n, tables.TS),
            kind,
            player,
            dice,
            pc.list_value_length(dice).cast(pa.int8()),
            points,
            total,
            pa.nulls(n, pa.list_(pa.string())),
            nulls,
            pa.nulls(n, pa.list_(pa.string())),
            nulls,
            nulls,
            pc.fill_null(nulls, name),
            pc.add(index, first),
            pc.fill_null(nulls, ingest_id),
        ],
        schema=tables.EVENTS,
    )
    return table, rejected


def _shape_ok(kind: pa.Array, ts: pa.Array, player: pa.Array, dice: pa.Array, points: pa.Array,
              total: pa.Array) -> pa.Array:
    """Per row: a turn event type with exactly its own fields, and a valid ts if any."""
    has_dice, has_points, has_total = pc.is_valid(dice), pc.is_valid(points), pc.is_valid(total)
    no_dice, no_points, no_total = pc.invert(has_dice), pc.invert(has_points), pc.invert(has_total)
    a = pc.and_
    fields_ok = pc.case_when(
        pc.make_struct(pc.equal(kind, "roll"), pc.equal(kind, "keep"), pc.equal(kind, "bank"),
                       pc.equal(kind, "farkle")),
        a(has_dice, a(no_points, no_total)),
        a(has_dice, a(has_points, no_total)),
        a(no_dice, a(has_points, has_total)),
        a(no_dice, no_points),
        False,
    )
    ts_ok = pc.or_(pc.is_null(ts), pc.fill_null(pc.match_substring_regex(ts, TS_PATTERN), False))
    return pc.fill_null(a(a(fields_ok, pc.is_valid(player)), ts_ok), False)

"""Raw log lines in, the kernel's integer columns out: the fast path as `audit` uses it.

A block of lines is decoded by one msgspec call (its newlines turned into the commas of
one JSON array) into one `AnyLine` per line (the decoder structs of `pipeline.reader.fast`); which fields each type needs, `ts` (one vectorised regex,
the reader's pattern in RE2 syntax), distinct players and rulesets are then checked for
the whole block at once. If anything in a block is not plainly valid (a bad line, a blank
line, `3.0` for an integer, a line holding two objects...), each of its lines is decoded
alone, the same checks run on them all at once, and each line that fails either is left
to the reader's own `parse_line`, which decides and explains. So a line accepted here is
one the reader accepts, with the same values, and a bad line costs one more decode and
the reader's parse, not a slow block (a log of millions of bad lines stays linear).

Unlike the reader's fast path, unknown fields are ignored rather than refused: audit
never shows them (ingest keeps them, so ingest does not use this module).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from msgspec import UNSET

from pipeline.model import BadLine, Event
from pipeline.reader import parse_line
from pipeline.reader.fast import AnyLine
from pipeline.reader.timestamps import TS_PATTERN
from pipeline.reader.validate import END_REASONS
from pipeline.replay.fast.kernel import TYPE_CODES
from pipeline.replay.fast.runner import EventColumns
from pipeline.replay.fast.scoring import dice_keys
from pipeline.replay.fast.state import FastState
from pipeline.rules import Ruleset, RulesetError

FIELDS = AnyLine.__struct_fields__
(
    F_GAME_ID,
    F_SEQ,
    F_TYPE,
    F_TS,
    F_PLAYER,
    F_DICE,
    F_POINTS,
    F_TOTAL,
    F_PLAYERS,
    F_RULES,
    F_WINNER,
    F_SCORES,
    F_TURN_POINTS,
    F_REASON,
) = range(len(FIELDS))
_decode_block = msgspec.json.Decoder(list[AnyLine]).decode
_decode_line = msgspec.json.Decoder(AnyLine).decode
_astuple = msgspec.structs.astuple
# not plainly valid: msgspec's own errors, and RecursionError for JSON nested deeper than it
# follows (in a field the Struct ignores); the reader's parse_line then decides (bad_json)
_MsgspecError = (msgspec.MsgspecError, RecursionError)
_N_FIELDS = len(FIELDS)


_CODE_OF = TYPE_CODES.__getitem__


class _Refused(Exception):
    """Not plainly valid: try smaller groups of lines, down to the reader's own parse."""


class LineBatcher:
    """Turns blocks of raw lines into EventColumns, keeping what the state needs between them."""

    def __init__(self, state: FastState, default_rules: Ruleset):
        self.state = state
        self.default_rules = default_rules
        self._rules: dict[Any, Ruleset] = {}
        self.events = 0  # valid events seen

    def block_columns(
        self,
        block: bytes,
        first_line: int,
        file: str,
        base: int,
        on_bad: Callable[[BadLine], None],
        n_lines: int | None = None,
    ) -> EventColumns:
        """Columns of the valid events of `block` (lines joined by b"\\n", the first one
        numbered `first_line`), positions from `base`; each bad line goes to on_bad in order."""
        try:
            items = _decode_block(b"[" + block.replace(b"\n", b",") + b"]")
            if len(items) != (n_lines if n_lines is not None else block.count(b"\n") + 1):
                raise _Refused
            cols = self._gather(list(zip(*map(_astuple, items))), base, check=True)
        except (*_MsgspecError, _Refused):
            lines = block.split(b"\n")
            rows = self._lines_rows(lines, range(first_line, first_line + len(lines)), file, on_bad)
            cols = self._gather(list(zip(*rows)) if rows else [()] * _N_FIELDS, base)
        self.events += len(cols)
        return cols

    def lines_columns(
        self, raws: Sequence[bytes], linenos: Any, file: str, base: int, on_bad: Callable[[BadLine], None]
    ) -> EventColumns:
        """The same for lines already split (and numbered) by the reader."""
        rows = self._lines_rows(list(raws), linenos, file, on_bad, whole=True)
        cols = self._gather(list(zip(*rows)) if rows else [()] * _N_FIELDS, base)
        self.events += len(cols)
        return cols

    def _lines_rows(self, lines: list[bytes], linenos: Any, file: str, on_bad, whole: bool = False) -> list[tuple]:
        """Rows of the valid events among lines, in order: each line decoded alone, the
        checks of `_bad_rows` made for all of them at once, and every line that fails either
        left to the reader's own `parse_line` (which accepts it or explains it). One pass:
        a block that is mostly bad lines costs a decode per line, not a search by halves."""
        if whole:  # first, all of them plainly valid: one decode
            try:
                items = _decode_block(b"[" + b",".join(lines) + b"]")
                if len(items) == len(lines):
                    rows = list(map(_astuple, items))
                    if rows and not self._bad_rows(list(zip(*rows))).any():
                        return rows
            except _MsgspecError:
                pass
        decoded: list[tuple | None] = []
        for line in lines:
            try:
                decoded.append(_astuple(_decode_line(line)))
            except _MsgspecError:
                decoded.append(None)
        good = [row for row in decoded if row is not None]
        refused = iter(self._bad_rows(list(zip(*good))).tolist() if good else ())
        rows = []
        for line, lineno, row in zip(lines, linenos, decoded):
            if row is not None and not next(refused):
                rows.append(row)
                continue
            item = parse_line(line, file, lineno)
            if type(item) is Event:
                rows.append(_event_row(item))
            elif item is not None:
                on_bad(item)
        return rows

    def _gather(self, columns: list[tuple], base: int, check: bool = False) -> EventColumns:
        """The kernel's columns; with `check`, first what a Struct cannot say alone (each
        type's own fields, ts, distinct players, the ruleset), raising _Refused."""
        st = self.state
        n = len(columns[F_GAME_ID])
        code = np.fromiter(map(_CODE_OF, columns[F_TYPE]), np.int64, n)
        dice = pa.array(columns[F_DICE], pa.list_(pa.int8()))
        player = pa.array(columns[F_PLAYER], pa.string())
        points = pa.array(columns[F_POINTS], pa.int64())
        total = pa.array(columns[F_TOTAL], pa.int64())
        if check:
            self._check(columns, code, dice, player, points, total)
        key, ndice = dice_keys(dice)
        running = np.zeros(n, np.int64)
        if columns[F_TURN_POINTS].count(None) != n:  # keeps logged with the turn's running total
            turn_points = pa.array(columns[F_TURN_POINTS], pa.int64())
            running = turn_points.is_valid().to_numpy(zero_copy_only=False).astype(np.int64)
            running[code != TYPE_CODES["keep"]] = 0
            points = pc.if_else(pa.array(running != 0), turn_points, points)
        abandoned = np.zeros(n, np.int64)
        for i in np.flatnonzero(code == TYPE_CODES["game_end"]).tolist():
            abandoned[i] = columns[F_REASON][i] == "abandoned"
        cols = EventColumns(
            slot=st.slots(pa.array(columns[F_GAME_ID], pa.string())),
            code=code,
            seq=np.fromiter(columns[F_SEQ], np.int64, n),
            name=st.names(player),
            key=key,
            ndice=ndice,
            points=points.fill_null(0).to_numpy(),
            total=total.fill_null(0).to_numpy(),
            has_total=total.is_valid().to_numpy(zero_copy_only=False).astype(np.int64),
            running=running,
            abandoned=abandoned,
            base=base,
        )
        for i in np.flatnonzero(code == TYPE_CODES["game_start"]).tolist():
            cols.starts.append(
                (base + i, int(cols.slot[i]), tuple(columns[F_PLAYERS][i]), self._ruleset(columns[F_RULES][i]))
            )
        for i in np.flatnonzero(code == TYPE_CODES["game_end"]).tolist():
            cols.ends.append(
                (base + i, int(cols.slot[i]), columns[F_WINNER][i], columns[F_SCORES][i], columns[F_REASON][i])
            )
        return cols

    def _check(self, columns, code, dice, player, points, total) -> None:
        if self._bad_rows(columns, code, dice, player, points, total).any():
            raise _Refused

    def _bad_rows(self, columns, code=None, dice=None, player=None, points=None, total=None) -> np.ndarray:
        """Per row, True where a decoded line is not plainly valid for what a Struct cannot
        say alone: each type's own fields, the ts pattern, distinct players, the ruleset."""
        n = len(columns[F_GAME_ID])
        if code is None:
            code = np.fromiter(map(_CODE_OF, columns[F_TYPE]), np.int64, n)
            dice = pa.array(columns[F_DICE], pa.list_(pa.int8()))
            player = pa.array(columns[F_PLAYER], pa.string())
            points = pa.array(columns[F_POINTS], pa.int64())
            total = pa.array(columns[F_TOTAL], pa.int64())
        bad = np.zeros(n, bool)
        running_given = columns[F_TURN_POINTS].count(None) != n
        missing = {
            "roll": (player, dice),
            "keep": (player, dice) if running_given else (player, dice, points),
            "bank": (player, points, total),
            "farkle": (player,),
        }
        if running_given:  # a keep has exactly one of points and turn_points
            has_points = points.is_valid().to_numpy(zero_copy_only=False)
            turn_points = pa.array(columns[F_TURN_POINTS], pa.int64())
            has_running = turn_points.is_valid().to_numpy(zero_copy_only=False)
            bad |= (code == TYPE_CODES["keep"]) & (has_points == has_running)
        null = {id(a): np.asarray(a.is_null()) for a in (dice, player, points, total) if a.null_count}
        for kind, arrays in missing.items():
            for array in arrays:
                if id(array) in null:
                    bad |= null[id(array)] & (code == TYPE_CODES[kind])
        for i in np.flatnonzero(code == TYPE_CODES["game_start"]).tolist():
            players = columns[F_PLAYERS][i]
            if players is None or len(set(players)) != len(players):
                bad[i] = True
                continue
            try:
                self._ruleset(columns[F_RULES][i])
            except _Refused:
                bad[i] = True
        for i in np.flatnonzero(code == TYPE_CODES["game_end"]).tolist():
            reason = columns[F_REASON][i]
            if reason is not None and reason not in END_REASONS:
                bad[i] = True
            elif reason != "abandoned" and (columns[F_WINNER][i] is None or columns[F_SCORES][i] is None):
                bad[i] = True
        ts = pa.array(columns[F_TS], pa.string())
        if ts.null_count < len(ts):
            bad |= ~np.asarray(pc.match_substring_regex(ts, TS_PATTERN).fill_null(True))
        return bad

    def _ruleset(self, raw: Any) -> Ruleset:
        if raw is UNSET or raw is None:  # None: an Event's absent rules (a logged null never gets here)
            return self.default_rules
        if isinstance(raw, Ruleset):  # an Event's, validated by the reader
            return raw
        key = raw if isinstance(raw, str) else msgspec.json.encode(raw)
        rules = self._rules.get(key)
        if rules is None:
            try:
                rules = self._rules[key] = Ruleset.from_value(raw)
            except RulesetError:
                raise _Refused from None
        return rules


def _event_row(e: Event) -> tuple:
    """An Event the reader accepted, in the Struct's field order."""
    return (
        e.game_id,
        e.seq,
        e.type,
        e.ts,
        e.player,
        e.dice,
        e.points,
        e.total,
        e.players,
        e.rules if e.rules is not None else UNSET,
        e.winner,
        e.scores,
        e.turn_points,
        e.reason,
    )

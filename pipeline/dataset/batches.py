"""Records → Arrow tables with the exact schemas of pipeline.dataset.tables, a column at a time.

Per-record Python is the cost of ingest, so nothing here loops over a record more than
once per column: each column is one list comprehension (or a C-level `map`), and types,
timestamps and list lengths are done by Arrow in bulk.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any, Iterable, Mapping, Sequence

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset import tables
from pipeline.model import BadLine, DecisionRecord, Event, Finding, GameResult, RollRecord, TurnRecord
from pipeline.dataset.timestamps import to_utc_array as timestamps

RAW_LIMIT = 64 * 1024  # rejects.raw keeps at most this many characters of a line

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_encode = msgspec.json.encode


def _dumps_totals(totals: Mapping[str, int | None]) -> str:
    """`_dumps` of a {player: points} dict, by msgspec: the same text for names and integers
    (tests/test_ingest_batches.py), a fifth of the cost, and games_tables makes two per game.
    A name holding a lone surrogate (a JSON escape can make one) is not UTF-8: json's way."""
    try:
        return _encode(totals).decode()
    except UnicodeEncodeError:
        return _dumps(totals)


def _col(records: Sequence[Any], name: str) -> list[Any]:
    return list(map(attrgetter(name), records))


def _names(value: Any) -> list[str] | None:
    """A winner as a list: "ana" and ["ana"] are the same."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(value)


def _array(values: list[Any], typ: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, typ)
    except (pa.ArrowInvalid, OverflowError):
        if not pa.types.is_integer(typ):
            raise
        # A hostile log can make a sum (a claimed total) leave the column's range: store
        # null for that value rather than fail the ingest; the raw events are kept.
        lo, hi = _INT_RANGE[typ.bit_width]
        return pa.array([v if v is None or lo <= v <= hi else None for v in values], typ)


_INT_RANGE = {w: (-(2 ** (w - 1)), 2 ** (w - 1) - 1) for w in (8, 16, 32, 64)}


def _table(schema: pa.Schema, columns: dict[str, Any]) -> pa.Table:
    arrays = []
    for fld in schema:
        values = columns[fld.name]
        arrays.append(values if isinstance(values, (pa.Array, pa.ChunkedArray)) else _array(values, fld.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def events_table(events: Sequence[Event], ingest_id: str) -> pa.Table:
    n = len(events)
    dice = pa.array(_col(events, "dice"), pa.list_(pa.int8()))
    rules_raw = _col(events, "rules_raw")
    extra = _col(events, "extra")
    return _table(
        tables.EVENTS,
        {
            "game_id": _col(events, "game_id"),
            "seq": _col(events, "seq"),
            "ts": timestamps(_col(events, "ts")),
            "type": _col(events, "type"),
            "player": _col(events, "player"),
            "dice": dice,
            "dice_count": pc.list_value_length(dice).cast(pa.int8()),
            "points": _col(events, "points"),
            "total": _col(events, "total"),
            "turn_points": _col(events, "turn_points"),
            "players": _col(events, "players"),
            "rules": [r if r is None else _dumps(r) for r in rules_raw],
            "winner": [w if w is None else [w] if type(w) is str else list(w) for w in _col(events, "winner")],
            "scores": [v if v is None else _dumps(v) for v in _col(events, "scores")],
            "reason": _col(events, "reason"),
            "extra": [_dumps(x) if x else None for x in extra],
            "source_file": _col(events, "file"),
            "source_line": _col(events, "line"),
            "ingest_id": [ingest_id] * n,
        },
    )


def rejects_table(bad: Sequence[BadLine], ingest_id: str) -> pa.Table:
    raws = [b.raw for b in bad]
    return _table(
        tables.REJECTS,
        {
            "file": _col(bad, "file"),
            "line": _col(bad, "line"),
            "code": _col(bad, "code"),
            "reason": _col(bad, "reason"),
            "raw": [r if r is None or len(r) <= RAW_LIMIT else r[:RAW_LIMIT] for r in raws],
            "raw_truncated": [r is not None and len(r) > RAW_LIMIT for r in raws],
            "game_id": _col(bad, "game_id"),
            "seq": _col(bad, "seq"),
            "ingest_id": [ingest_id] * len(bad),
        },
    )


def turns_table(turns: Sequence[TurnRecord]) -> pa.Table:
    return _table(
        tables.TURNS,
        {name: (timestamps(_col(turns, "ts")) if name == "ts" else _col(turns, name)) for name in tables.TURNS.names},
    )


def rolls_table(rolls: Sequence[RollRecord]) -> pa.Table:
    return _table(
        tables.ROLLS,
        {name: (timestamps(_col(rolls, "ts")) if name == "ts" else _col(rolls, name)) for name in tables.ROLLS.names},
    )


def decisions_table(decisions: Sequence[DecisionRecord]) -> pa.Table:
    return _table(
        tables.DECISIONS,
        {
            name: (timestamps(_col(decisions, "ts")) if name == "ts" else _col(decisions, name))
            for name in tables.DECISIONS.names
        },
    )


def findings_table(findings: Sequence[Finding]) -> pa.Table:
    cols: dict[str, Any] = {name: _col(findings, name) for name in tables.FINDINGS.names if name != "ts"}
    cols["claimed"] = [None if v is None else float(v) for v in cols["claimed"]]
    cols["expected"] = [None if v is None else float(v) for v in cols["expected"]]
    cols["ts"] = timestamps([getattr(f, "ts", None) for f in findings])
    return _table(tables.FINDINGS, cols)


def games_tables(games: Iterable[GameResult]) -> tuple[pa.Table, pa.Table]:
    """The games table and its long form, game_players."""
    g_rows: dict[str, list[Any]] = {name: [] for name in tables.GAMES.names}
    p_rows: dict[str, list[Any]] = {name: [] for name in tables.GAME_PLAYERS.names}
    # (json, name) per ruleset object: games share a few rulesets, and both are costly
    # (a JSON dump, a comparison with every built-in)
    described: dict[int, tuple[Any, Any, Any]] = {}  # id -> (the ruleset, kept alive; json; name)
    for g in games:
        won_claimed = set(_names(g.winner_claimed) or ())
        won_corrected = set(_names(g.winner_corrected) or ())
        g_rows["game_id"].append(g.game_id)
        rules = described.get(id(g.ruleset))
        if rules is None or rules[0] is not g.ruleset:
            rules = described[id(g.ruleset)] = (
                (g.ruleset, g.ruleset.to_json(), g.ruleset.name) if g.ruleset is not None else (None, None, None)
            )
        g_rows["ruleset"].append(rules[1])
        g_rows["ruleset_name"].append(rules[2])
        g_rows["players"].append(list(g.players))
        g_rows["claimed"].append(_dumps_totals(g.claimed))
        g_rows["corrected"].append(_dumps_totals(g.corrected))
        g_rows["winner_claimed"].append(_names(g.winner_claimed))
        g_rows["winner_corrected"].append(_names(g.winner_corrected))
        g_rows["complete"].append(g.complete)
        g_rows["ended"].append(g.ended)
        g_rows["events"].append(g.events)
        g_rows["first_ts"].append(g.first_ts)
        g_rows["last_ts"].append(g.last_ts)
        for seat, player in enumerate(g.players, start=1):
            p_rows["game_id"].append(g.game_id)
            p_rows["player"].append(player)
            p_rows["seat"].append(seat)
            p_rows["claimed_total"].append(g.claimed.get(player))
            p_rows["corrected_total"].append(g.corrected.get(player))
            p_rows["won_claimed"].append(player in won_claimed)
            p_rows["won_corrected"].append(player in won_corrected)
    g_rows["first_ts"] = timestamps(g_rows["first_ts"])
    g_rows["last_ts"] = timestamps(g_rows["last_ts"])
    return _table(tables.GAMES, g_rows), _table(tables.GAME_PLAYERS, p_rows)

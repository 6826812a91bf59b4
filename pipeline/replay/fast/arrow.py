"""Arrow events in, the derived Arrow tables out: the fast path as ingest uses it (audit's
first pass takes `event_columns` alone).

`replay_table(events, default_rules)` gives exactly what the reference engine gives for
the same events (same rows, same order, same schemas of pipeline.dataset.tables): clean games by
the kernel, every other game by `Replayer`, rows merged in the order the reference would
have emitted them (each row is tagged with the input position of the event that emitted
it; end-of-input rows come after every event, in the games' start order).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset import tables
from pipeline.model import Event
from pipeline.replay.engine import Replayer
from pipeline.replay.fast import kernel as K
from pipeline.replay.fast.runner import EventColumns, FastReplay, RowBlocks
from pipeline.replay.fast.scoring import dice_keys
from pipeline.rules import Ruleset

TYPE_NAMES = pa.array(sorted(K.TYPE_CODES, key=K.TYPE_CODES.__getitem__))
DERIVED = ("turns", "rolls", "decisions", "games", "game_players", "findings")


def event_columns(events: pa.Table, fast: FastReplay, default_rules: Ruleset, base: int = 0) -> EventColumns:
    """The kernel's integer columns of an EVENTS table, and its game_starts and game_ends."""
    st = fast.state
    code = pc.index_in(events.column("type"), value_set=TYPE_NAMES).fill_null(-1).to_numpy().astype(np.int64)
    key, ndice = dice_keys(events.column("dice"))
    total = events.column("total")
    turn_points = events.column("turn_points")
    points = events.column("points")
    running = np.zeros(len(code), np.int64)
    if turn_points.null_count < len(code):  # keeps logged with the turn's running total
        running = turn_points.is_valid().to_numpy(zero_copy_only=False).astype(np.int64)
        running[code != K.KEEP] = 0
        points = pc.if_else(pa.array(running != 0), turn_points, points)
    reason = events.column("reason")
    abandoned = np.zeros(len(code), np.int64)
    if reason.null_count < len(code):
        abandoned = pc.fill_null(pc.equal(reason, "abandoned"), False).to_numpy(zero_copy_only=False).astype(np.int64)
    cols = EventColumns(
        slot=st.slots(events.column("game_id").combine_chunks()),
        code=code,
        seq=events.column("seq").to_numpy().astype(np.int64),
        name=st.names(events.column("player").combine_chunks()),
        key=key,
        ndice=ndice,
        points=points.fill_null(0).to_numpy().astype(np.int64),
        total=total.fill_null(0).to_numpy().astype(np.int64),
        has_total=total.is_valid().to_numpy(zero_copy_only=False).astype(np.int64),
        running=running,
        abandoned=abandoned,
        base=base,
    )
    rules_cache: dict[str | None, Ruleset] = {}
    for i in np.flatnonzero(code == K.GAME_START):
        raw = events.column("rules")[int(i)].as_py()
        rules = rules_cache.get(raw)
        if rules is None:
            rules = rules_cache[raw] = default_rules if raw is None else Ruleset.from_value(json.loads(raw))
        cols.starts.append((base + int(i), int(cols.slot[i]), tuple(events.column("players")[int(i)].as_py()), rules))
    for i in np.flatnonzero(code == K.GAME_END):
        winner = events.column("winner")[int(i)].as_py()
        if winner is not None:
            winner = winner[0] if len(winner) == 1 else tuple(winner)
        scores = events.column("scores")[int(i)].as_py()
        cols.ends.append(
            (
                base + int(i),
                int(cols.slot[i]),
                winner,
                None if scores is None else json.loads(scores),
                reason[int(i)].as_py(),
            )
        )
    return cols


def replay_table(
    events: pa.Table,
    default_rules: Ruleset,
    *,
    jit: bool = True,
    to_events: Callable[[pa.Table], Iterable[Event]] | None = None,
    rejected_starts: dict[str, tuple[str, int, str]] | None = None,
) -> dict[str, pa.Table]:
    """One Arrow table per derived table, as the reference Replayer would give them.

    `events` are in replay order; `to_events` turns rows back into the reader's Events for
    the reference (default: pipeline.replay.partition.events_from_table)."""
    fast = FastReplay(default_rules, records=True, jit=jit)
    n = events.num_rows
    cols = event_columns(events, fast, default_rules)
    rows = fast.feed(cols)
    clean = fast.clean()
    st = fast.state
    first_ts, last_ts = _ts_bounds(events, cols.slot, st.n_games)
    results = [(fast.order(s), fast.result(s, first_ts[s], last_ts[s])) for s in np.flatnonzero(clean).tolist()]
    assert rows is not None  # FastReplay(records=True) returns its rows
    out = _fast_tables(events, cols.key, rows, clean)
    suspect_rows = np.flatnonzero(~clean[cols.slot])
    ref = _reference_tables(events, suspect_rows, default_rules, n, fast, to_events, rejected_starts)
    results += ref.pop("results")
    results.sort(key=lambda r: r[0])
    from pipeline.dataset import batches

    games, players = batches.games_tables([r for _, r in results])
    merged = {name: _merge(out[name], ref[name]) for name in ("turns", "rolls", "decisions")}
    merged["findings"] = ref["findings"][0]
    merged["games"] = games
    merged["game_players"] = players
    return merged


def _ts_bounds(events: pa.Table, slot: np.ndarray, n_games: int) -> tuple[list[Any], list[Any]]:
    """Per slot: the first and the last non-null ts of its events (GameResult.first_ts/last_ts)."""
    ts = events.column("ts")
    valid = np.flatnonzero(ts.is_valid().to_numpy(zero_copy_only=False))
    first: list[Any] = [None] * n_games
    last: list[Any] = [None] * n_games
    if len(valid):
        slots = slot[valid]
        _, first_at = np.unique(slots, return_index=True)
        _, last_at = np.unique(slots[::-1], return_index=True)
        last_at = len(slots) - 1 - last_at
        # as text, the way the reference's events carry ts (games_tables parses it back)
        values = [v.isoformat() for v in ts.take(pa.array(valid[np.concatenate([first_at, last_at])])).to_pylist()]
        for k, i in enumerate(first_at):
            first[slots[i]] = values[k]
        for k, i in enumerate(last_at):
            last[slots[i]] = values[len(first_at) + k]
    return first, last


def _take(column: pa.ChunkedArray, positions: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    index = pa.array(positions, pa.int64(), mask=null)
    return column.take(index).combine_chunks() if isinstance(column, pa.ChunkedArray) else column.take(index)


def _ints(values: np.ndarray, typ: pa.DataType, null: np.ndarray | None = None) -> pa.Array:
    return pa.array(values, pa.int64(), mask=null).cast(typ)


def _fast_tables(
    events: pa.Table, key: np.ndarray, rows: RowBlocks, clean: np.ndarray
) -> dict[str, tuple[pa.Table, np.ndarray]]:
    """The kernel's rows of clean games as Arrow tables, with each row's emission position
    (`key`: each event's dice key, the kernel's input, taken for the rolls' dice keys)."""
    col = events.column
    out: dict[str, tuple[pa.Table, np.ndarray]] = {}

    t = rows.turns[clean[rows.turns[:, K.TU_GAME]]]
    start, end = t[:, K.TU_START_POS], t[:, K.TU_END_POS]
    open_turn = t[:, K.TU_OUTCOME] == K.OUTCOME_OPEN  # forfeited at an abandoned game_end
    out["turns"] = (
        pa.Table.from_arrays(
            [
                _take(col("game_id"), start),
                _take(col("player"), start),
                _ints(t[:, K.TU_TURN], pa.int32()),
                _take(col("seq"), start),
                _take(col("seq"), np.where(open_turn, 0, end), open_turn),
                _ints(t[:, K.TU_ROLLS], pa.int32()),
                _ints(t[:, K.TU_HOT], pa.int32()),
                pa.array(np.array(["bank", "farkle", "open"], dtype=object)[t[:, K.TU_OUTCOME]], pa.string()),
                pa.array(np.zeros(len(t), bool), pa.bool_()),  # end_implied: a lost turn end makes the game suspect
                _ints(t[:, K.TU_CLAIMED], pa.int64()),
                _ints(t[:, K.TU_CORRECTED], pa.int64()),
                _ints(t[:, K.TU_DICE_LEFT], pa.int8(), t[:, K.TU_DICE_LEFT] < 0),
                _ints(t[:, K.TU_CLAIMED_TOTAL], pa.int64(), open_turn),
                _ints(t[:, K.TU_CORRECTED_TOTAL], pa.int64()),
                _take(col("ts"), start),
            ],
            schema=tables.TURNS,
        ),
        t[:, K.TU_EMIT],
    )

    r = rows.rolls[clean[rows.rolls[:, K.RO_GAME]]]
    pos, keep = r[:, K.RO_POS], r[:, K.RO_KEEP_POS]
    no_keep = keep < 0
    dice = _take(col("dice"), pos)
    out["rolls"] = (
        pa.Table.from_arrays(
            [
                _take(col("game_id"), pos),
                _take(col("seq"), pos),
                _take(col("player"), pos),
                _ints(r[:, K.RO_TURN], pa.int32()),
                _ints(r[:, K.RO_ROLLNO], pa.int32()),
                dice,
                pc.list_value_length(dice).cast(pa.int8()),
                pa.array(r[:, K.RO_SCORED] != 0, pa.bool_()),
                _ints(r[:, K.RO_BEST], pa.int64()),
                _take(col("dice"), np.where(no_keep, 0, keep), no_keep),
                _ints(r[:, K.RO_KEPT_CLAIMED], pa.int64(), no_keep),
                _ints(r[:, K.RO_KEPT_VALUE], pa.int64(), no_keep),
                _take(col("ts"), pos),
                _ints(r[:, K.RO_POINTS_BEFORE], pa.int64()),
                pa.array(r[:, K.RO_OPENED] != 0, pa.bool_()),
                _take(col("turn_points"), np.where(no_keep, 0, keep), no_keep),
                _ints(r[:, K.RO_START_TOTAL], pa.int64()),
                _ints(r[:, K.RO_OTHER_TOTAL], pa.int64(), r[:, K.RO_OTHER_TOTAL] == K.NO_TOTAL),
                _ints(key[pos], pa.int64()),
                _ints(key[np.where(no_keep, 0, keep)], pa.int64(), no_keep),
            ],
            schema=tables.ROLLS,
        ),
        r[:, K.RO_EMIT],
    )

    d = rows.decisions[clean[rows.decisions[:, K.DE_GAME]]]
    pos = d[:, K.DE_POS]
    from_pos, from_keep = d[:, K.DE_FROM_POS], d[:, K.DE_FROM_KEEP_POS]
    no_roll, no_keep = from_pos < 0, from_keep < 0
    out["decisions"] = (
        pa.Table.from_arrays(
            [
                _take(col("game_id"), pos),
                _take(col("seq"), pos),
                _take(col("player"), pos),
                _ints(d[:, K.DE_TURN], pa.int32()),
                _ints(d[:, K.DE_LEFT], pa.int8()),
                _ints(d[:, K.DE_TURN_POINTS], pa.int64()),
                _ints(d[:, K.DE_BANKED], pa.int64()),
                _ints(d[:, K.DE_OPP], pa.int64()),
                pa.array(d[:, K.DE_OPENED] != 0, pa.bool_()),
                pa.array(np.array(["bank", "roll"], dtype=object)[d[:, K.DE_CHOICE]], pa.string()),
                pa.array(d[:, K.DE_FARKLED] == 1, pa.bool_(), mask=d[:, K.DE_FARKLED] < 0),
                _take(col("ts"), pos),
                _ints(d[:, K.DE_CORR], pa.int64()),
                _ints(d[:, K.DE_START_TOTAL], pa.int64()),
                _ints(d[:, K.DE_OTHER_TOTAL], pa.int64(), d[:, K.DE_OTHER_TOTAL] == K.NO_TOTAL),
                _ints(key[np.where(no_roll, 0, from_pos)], pa.int64(), no_roll),
                _ints(key[np.where(no_keep, 0, from_keep)], pa.int64(), no_keep),
                _ints(d[:, K.DE_FROM_POINTS], pa.int64(), no_roll),
            ],
            schema=tables.DECISIONS,
        ),
        d[:, K.DE_EMIT],
    )
    return out


def _reference_tables(
    events: pa.Table,
    positions: np.ndarray,
    default_rules: Ruleset,
    n: int,
    fast: FastReplay,
    to_events,
    rejected_starts: dict[str, tuple[str, int, str]] | None = None,
) -> dict[str, Any]:
    """Replay the rows at `positions` (every event of the suspect games) with the reference
    engine, tagging each output row with the position of the event that emitted it."""
    from pipeline.dataset import batches

    if to_events is None:
        from pipeline.replay.partition import events_from_table as to_events

    replayer = Replayer(default_rules)
    for game_id, (file, line, reason) in (rejected_starts or {}).items():
        replayer.note_rejected_start(game_id, file, line, reason)
    out = replayer.out
    emitted: dict[str, list[int]] = {"turns": [], "rolls": [], "decisions": [], "findings": []}
    subset = events.take(pa.array(positions, pa.int64())) if len(positions) else events.slice(0, 0)
    for pos, event in zip(positions.tolist(), to_events(subset)):
        replayer.feed(event)
        for name, tagged in emitted.items():
            tagged.extend([pos] * (len(getattr(out, name)) - len(tagged)))
    before = {name: len(tagged) for name, tagged in emitted.items()}
    replayer.finish()
    # end-of-input rows: after every event, in the games' start order (stable within a game)
    orders = {fast.state.game_ids[s]: fast.order(s) for s in range(fast.state.n_games)}
    for name, tagged in emitted.items():
        for record in getattr(out, name)[before[name] :]:
            tagged.append(n + orders[record.game_id])
    result = replayer.drain()
    return {
        "turns": (batches.turns_table(result.turns), np.array(emitted["turns"], np.int64)),
        "rolls": (batches.rolls_table(result.rolls), np.array(emitted["rolls"], np.int64)),
        "decisions": (batches.decisions_table(result.decisions), np.array(emitted["decisions"], np.int64)),
        "findings": (batches.findings_table(result.findings), np.array(emitted["findings"], np.int64)),
        "results": [(orders[g.game_id], g) for g in result.games],
    }


def _merge(a: tuple[pa.Table, np.ndarray], b: tuple[pa.Table, np.ndarray]) -> pa.Table:
    """Rows of both, in emission order (no two rows of one table share a position)."""
    (ta, ea), (tb, eb) = a, b
    if tb.num_rows == 0:
        return ta
    if ta.num_rows == 0:
        return tb
    order = np.argsort(np.concatenate([ea, eb]), kind="stable")
    return pa.concat_tables([ta, tb]).take(pa.array(order))

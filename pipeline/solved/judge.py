"""Every choice of the two-player games judged by the winning chance it costs (a Python model).

The state of a choice is the ruleset, both banked totals at the turn's start
(sql/int_race_turns.sql), the turn points and the dice; a keep is worth the mover's
winning chance after it (`pipeline.strategy.race`: win + half a tie under best play by
both, final round included), the best keep the largest over the roll's legal keeps; a bank
or roll is worth banking's or rolling's chance. The loss is best - made, in percentage
points. Every pair of totals' turn is solved once per ruleset and kept in the cache
(`pipeline.solved.tables.turn_rolls`: rolling's chance at every turn-points level, float32), and each
choice is valued from it (`race_kernel.judge_from_tables`, choices in parallel).

A choice is judged when its single-turn state is (int_choice_values: a legal keep on the
grid, a bank-or-roll that follows it) and the two-player one is too: both totals on the
grid and >= 0, the mover's below the target, the mover opened exactly when their total is
above 0 (without a penalty that is the rules), and the ruleset solved (`race_tables`:
refused rulesets are left not judged, their reason in `why`).
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from pipeline.rules import Ruleset, RulesetError
from pipeline.rules.play import key_counts
from pipeline.rules.scoring import counts_to_dice
from pipeline.rules.table import score_table, sub_keys
from pipeline.strategy import race as race_model

#: accuracy of a choice = ACCURACY_A * exp(-ACCURACY_K * loss in pp) - ACCURACY_C, in [0, 100]:
#: lichess's curve with the loss scaled by ten (docs/stats.md; sql/macros.sql race_accuracy).
ACCURACY_A, ACCURACY_K, ACCURACY_C = 103.1668, 0.4354, 3.1669
INPUT = "int_race_judge_input"
RULESETS = "int_race_rulesets"

SCHEMA = pa.schema(
    [
        ("game_no", pa.int64()),
        ("seq", pa.int64()),
        ("is_keep", pa.bool_()),
        ("race_judged", pa.bool_()),
        ("chance_best", pa.float64()),
        ("chance_made", pa.float64()),
        ("loss_pp", pa.float64()),
        ("best_key", pa.int64()),  # keeps: the best keep's dice key; bank-or-roll: 1 roll, 0 bank
        ("why", pa.string()),
    ]
)
#: Why a choice is not judged by winning chance (the `why` column's dictionary; None: judged).
WHY = (
    None,
    "the choice is not judged against the single turn either",
    "a banked total off the grid or below 0",
    "the mover's total is already at the target",
    "opened does not match the banked total",
    "the ruleset cannot be read",
)
FIRST_REFUSAL = len(WHY)  # a ruleset the two-player solver refuses: its own message


def race_choices(inputs: dict[str, pa.Table]) -> pa.Table:
    table = inputs[INPUT]
    n = table.num_rows
    col = {name: _numpy(table.column(name)) for name in table.column_names}
    inputs.pop(INPUT, None)  # the columns are copied out: let the Arrow table go (the caller's
    del table  # dict is made for this call)
    judged = np.zeros(n, dtype=np.bool_)
    best = np.full(n, np.nan)
    made = np.full(n, np.nan)
    best_key = np.zeros(n, dtype=np.int64)
    why = np.zeros(n, dtype=np.int8)
    messages = list(WHY)
    known = inputs[RULESETS]
    rulesets = dict(zip(known.column("ruleset_id").to_pylist(), known.column("ruleset").to_pylist()))
    ids = col["ruleset_id"] if n else np.zeros(0, dtype=np.int64)
    for rid in np.unique(ids):
        rows = np.nonzero(ids == rid)[0]
        reason = _judge_ruleset(rulesets.get(int(rid)), rows, col, judged, best, made, best_key, why)
        if reason is not None:
            why[rows] = len(messages)
            messages.append(reason)
    loss = (best - made) * 100.0
    keep = col["is_keep"] if n else np.zeros(0, dtype=np.bool_)
    codes = _arrow(why, pa.int8(), valid=why != 0)
    names = [("" if m is None else m).encode() for m in messages]
    offsets = np.cumsum([0] + [len(b) for b in names]).astype(np.int32)
    dictionary = pa.Array.from_buffers(
        pa.string(), len(names), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(names))]
    )
    columns = [
        _arrow(col["game_no"] if n else np.zeros(0, dtype=np.int64), pa.int64()),
        _arrow(col["seq"] if n else np.zeros(0, dtype=np.int64), pa.int64()),
        _arrow(keep, pa.bool_()),
        _arrow(judged, pa.bool_()),
        _arrow(best, pa.float64(), valid=judged),
        _arrow(made, pa.float64(), valid=judged),
        _arrow(loss, pa.float64(), valid=judged),
        _arrow(best_key, pa.int64(), valid=judged),
        dictionary.take(codes),  # plain strings: every engine reads them
    ]
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def _arrow(values: np.ndarray, kind: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """A numpy column as Arrow through its buffers: pa.array() on numpy imports pandas."""
    mask = None if valid is None else pa.py_buffer(np.packbits(valid.astype(np.bool_), bitorder="little"))
    nulls = 0 if valid is None else int(len(valid) - np.count_nonzero(valid))
    if pa.types.is_boolean(kind):
        data = pa.py_buffer(np.packbits(values.astype(np.bool_), bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values, dtype=kind.to_pandas_dtype()))
    return pa.Array.from_buffers(kind, len(values), [mask, data], null_count=nulls)


def _numpy(column: pa.ChunkedArray) -> np.ndarray:
    """One column as a numpy array (nulls as 0 or False), without pyarrow's pandas path."""
    import pyarrow.compute as pc

    boolean = pa.types.is_boolean(column.type)
    if column.num_chunks == 0:
        return np.zeros(0, dtype=np.bool_ if boolean else np.int64)
    array = column.chunk(0) if column.num_chunks == 1 else pa.concat_arrays(column.chunks)
    if array.null_count:
        array = array.fill_null(False if boolean else 0)
    # a view of the data buffer: pyarrow's to_numpy imports pandas (a large share of a run)
    wide = pc.cast(array, pa.uint8() if boolean else pa.int64())
    dtype = np.uint8 if boolean else np.int64
    data = np.frombuffer(wide.buffers()[1], dtype=dtype, count=len(wide), offset=wide.offset * np.dtype(dtype).itemsize)
    return data.view(np.bool_) if boolean else data


def _judge_ruleset(text, rows, col, judged, best, made, best_key, why) -> str | None:
    """Judge the rows of one ruleset in place; the solver's refusal, if it refuses."""
    try:
        rules = Ruleset.from_value(json.loads(text))
    except (TypeError, ValueError, RulesetError):
        why[rows] = WHY.index("the ruleset cannot be read")
        return None
    reason = race_model.refusal(rules)
    if reason is not None:
        return reason
    from pipeline.solved.tables import race

    solved = race(rules)
    g, k_levels = solved.granularity, solved.n_levels
    mover = col["mover_total"][rows].astype(np.int64)
    other = col["other_total"][rows].astype(np.int64)
    points = col["points"][rows].astype(np.int64)
    ok = col["judged"][rows].astype(np.bool_)
    why_rows = np.zeros(len(rows), dtype=np.int8)
    why_rows[~ok] = 1
    on_grid = (mover >= 0) & (other >= 0) & (mover % g == 0) & (other % g == 0)
    why_rows[ok & ~on_grid] = 2
    ok &= on_grid
    past = ok & (mover // g >= k_levels)
    why_rows[past] = 3
    ok &= ~past
    if rules.opening > 0:
        mismatch = ok & ((mover > 0) != col["opened"][rows].astype(np.bool_))
        why_rows[mismatch] = 4
        ok &= ~mismatch
    why[rows] = why_rows
    idx = rows[ok]
    if not len(idx):
        return None
    is_keep = col["is_keep"][idx].astype(np.bool_)
    roll_keys = col["roll_key"][idx]
    kept_keys = col["kept_key"][idx]
    dice = col["dice"][idx].astype(np.int64)
    options = _keep_options(rules, g, roll_keys[is_keep], kept_keys[is_keep])
    roll_idx = np.zeros(len(idx), dtype=np.int64)
    made_dv = np.zeros(len(idx), dtype=np.int64)
    made_next = np.zeros(len(idx), dtype=np.int64)
    roll_idx[is_keep], made_dv[is_keep], made_next[is_keep] = options.roll_idx, options.made_dv, options.made_next
    out_made = np.zeros(len(idx))
    out_best = np.zeros(len(idx))
    out_option = np.zeros(len(idx), dtype=np.int64)
    from pipeline.solved.tables import turn_rolls

    starts, rolls = turn_rolls(rules)
    m, ft = solved.moves, solved.final
    race_model.kernel()["judge_from_tables"](
        mover[ok] // g, other[ok] // g, np.where(is_keep, 0, 1).astype(np.int64), points[ok] // g, dice,
        made_dv, made_next, col["rolled"][idx].astype(np.int64), roll_idx,
        options.lo, options.dv, options.next, starts, rolls, k_levels, solved.w, ft.catch_up, ft.d_cap, ft.bank_ok,
        ft.y, ft.z, ft.win_level, ft.tie_ok, m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle,
        out_made, out_best, out_option,
    )  # fmt: skip
    judged[idx] = True
    made[idx] = out_made
    best[idx] = out_best
    best_key[idx] = np.where(is_keep, options.key[np.where(is_keep, out_option, 0)], out_option)
    return None


class _Options:
    """The legal keeps of each roll met, as CSR arrays (lo, dv, next, key: fewer dice first,
    then the lower faces), and for each keep made its roll's index, value and dice next."""

    def __init__(self, lo, dv, nxt, key, roll_idx, made_dv, made_next):
        self.lo, self.dv, self.next, self.key = lo, dv, nxt, key
        self.roll_idx, self.made_dv, self.made_next = roll_idx, made_dv, made_next


def _keep_options(rules: Ruleset, g: int, roll_keys: np.ndarray, kept_keys: np.ndarray) -> _Options:
    values = score_table(rules).value
    unique_rolls, roll_idx = np.unique(roll_keys, return_inverse=True)
    lo, dv, nxt, key = [0], [], [], []
    for rk in unique_rolls.tolist():
        n_roll = sum(key_counts(rk))
        found = []
        for sub in sub_keys()[rk]:
            v = values[sub]
            if v is None:
                continue
            kept = sum(key_counts(sub))
            found.append((kept, sub, v // g, 6 if kept == n_roll else n_roll - kept))
        for _, sub, step, left in sorted(found):
            dv.append(step)
            nxt.append(left)
            key.append(sub)
        lo.append(len(dv))
    # one key per (roll, keep): dice keys are below 10**7
    pair_keys = roll_keys.astype(np.int64) * 10_000_000 + kept_keys.astype(np.int64)
    unique_made, made_idx = np.unique(pair_keys, return_inverse=True)
    made_dv = np.zeros(len(unique_made), dtype=np.int64)
    made_next = np.zeros(len(unique_made), dtype=np.int64)
    for i, both in enumerate(unique_made.tolist()):
        rk, kk = divmod(both, 10_000_000)
        n_roll, kept = sum(key_counts(rk)), sum(key_counts(kk))
        made_dv[i] = (values[kk] or 0) // g
        made_next[i] = 6 if kept == n_roll else n_roll - kept
    made_idx = np.asarray(made_idx).reshape(-1)
    return _Options(
        np.array(lo, dtype=np.int64),
        np.array(dv, dtype=np.int64),
        np.array(nxt, dtype=np.int64),
        np.array(key, dtype=np.int64),
        np.asarray(roll_idx).reshape(-1).astype(np.int64),
        made_dv[made_idx],
        made_next[made_idx],
    )


def dice_text(key: int) -> str:
    return " ".join(map(str, counts_to_dice(key_counts(key))))


def accuracy(loss_pp: float) -> float:
    """The accuracy of one choice (percent) from its loss in percentage points."""
    import math

    return min(100.0, max(0.0, ACCURACY_A * math.exp(-ACCURACY_K * loss_pp) - ACCURACY_C))

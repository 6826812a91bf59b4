"""Every choice of the two-player games judged by both yardsticks in one pass (a Python model).

Its input is every choice of the two-player games in scope with its single-turn judgement
(int_race_judge_input over int_choice_values_two_player), computed once and passed on whole:
fct_decision_quality_two_player reads their single-turn columns from this model's output,
fct_race_choices their winning-chance columns (the rows where `race`). The choices of the
other games never come here: SQL counts them (fct_decision_quality_other_games), so Python
holds only the two-player games' rows, as it did when they were judged apart.

The state of a two-player choice is the ruleset, both corrected banked totals at the turn's
start (`start_total`, `other_start_total`: written into rolls and decisions by the replay as
the turn opens, dataset version 4; sql/int_race_turns.sql derives the same from the turns
table, and a test holds them equal), the turn points and the dice; a keep is worth the mover's
winning chance after it (`pipeline.strategy.race`: win + half a tie under best play by
both, final round included), the best keep the largest over the roll's legal keeps; a bank
or roll is worth banking's or rolling's chance. The loss is best - made, in percentage
points. Every pair of totals' turn is solved once per ruleset and kept in the cache
(`pipeline.solved.tables.turn_rolls`: rolling's chance at every turn-points level, float32),
and each choice is valued from it by one compiled loop (`race_kernel.judge_choices`,
choices in parallel) that reads the input's columns where they lie: the choices come in
as Arrow record batches of fixed-width numbers and go out as the same batches with the
judgement added, so nothing is copied row by row and no row is joined back.

A choice is in the race (`race`) when it has the other's total (a game of two players, a
choice of one of them); it is judged when its single-turn state is
(int_choice_values: a legal keep on the grid, a bank-or-roll that follows it) and the
two-player one is too: both totals on the grid and >= 0, the mover's below the target, the
mover opened exactly when their total is above 0 (without a penalty that is the rules), and
the ruleset solved (`race_tables`: refused rulesets are left not judged, their reason in
`why`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import numpy as np
import pyarrow as pa

from pipeline.rules import Ruleset, RulesetError
from pipeline.rules.play import key_counts
from pipeline.rules.scoring import counts_to_dice
from pipeline.rules.table import counts_key, score_table, sub_keys
from pipeline.strategy import race as race_model
from pipeline.strategy.solver import multisets

#: accuracy of a choice = ACCURACY_A * exp(-ACCURACY_K * loss in pp) - ACCURACY_C, in [0, 100]:
#: lichess's curve with the loss scaled by ten (docs/stats.md; sql/macros.sql race_accuracy).
ACCURACY_A, ACCURACY_K, ACCURACY_C = 103.1668, 0.4354, 3.1669
INPUT = "int_race_judge_input"
RULESETS = "int_race_rulesets"

#: The input's columns the judge reads (sql/int_race_judge_input.sql), with the numpy type
#: each is read as: DuckDB gives exactly these, so they are read in place.
NUMBERS = {
    "ruleset_id": np.int32,
    "points": np.int64,
    "dice": np.int32,
    "roll_key": np.int64,
    "kept_key": np.int64,
    "flags": np.int8,
}
#: flags: judged against the single turn, opened, a keep (else a bank-or-roll), rolled
JUDGED, OPENED, KEEP, ROLLED = 1, 2, 4, 8
#: The input's columns only the judge reads; it passes every other one on as it is.
JUDGE_ONLY = ("ruleset_id", "flags", "start_total", "other_start_total")
ADDED = pa.schema(
    [
        ("race", pa.bool_()),  # a choice of a two-player game's turn: the rows of fct_race_choices
        ("mover_total", pa.int64()),
        ("other_total", pa.int64()),
        ("race_judged", pa.bool_()),
        ("chance_best", pa.float64()),
        ("chance_made", pa.float64()),
        ("loss_pp", pa.float64()),
        ("best_key", pa.int64()),  # keeps: the best keep's dice key; bank-or-roll: 1 roll, 0 bank
        ("why", pa.string()),
    ]
)
UNREADABLE = "the ruleset cannot be read"
NOT_IN_RACE = "not a turn of a two-player game"
#: Why a choice is not judged by winning chance (the `why` column's dictionary; None: judged).
WHY = (
    None,
    "the choice is not judged against the single turn either",
    "a banked total off the grid or below 0",
    "the mover's total is already at the target",
    "opened does not match the banked total",
    UNREADABLE,
    NOT_IN_RACE,
)
NULL = np.iinfo(np.int64).min  # a null total where the judge reads int64
NO_RULESET = np.iinfo(np.int32).min  # the ruleset read for a choice outside the race: no judge runs


def judged_choices(inputs: dict[str, pa.Table | pa.RecordBatchReader]) -> pa.Table:
    """int_choices_judged: every choice of the input (its columns but JUDGE_ONLY) with its
    judgement by winning chance (ADDED), null where it is not a turn of int_race_turns (`race`)."""
    known = inputs[RULESETS]
    if isinstance(known, pa.RecordBatchReader):
        known = known.read_all()
    rulesets = dict(zip(known.column("ruleset_id").to_pylist(), known.column("ruleset").to_pylist()))
    source = inputs.pop(INPUT)  # the caller's dict is made for this call: let the input go with it
    batches: Iterable[pa.RecordBatch] = source.to_batches() if isinstance(source, pa.Table) else source
    judges: dict[int, _Judge | int] = {}
    messages = list(WHY)
    out = []
    schema = None
    for batch in batches:
        judged = _judge_batch(batch, rulesets, judges, messages)
        schema = judged.schema
        out.append(judged)
    if schema is None:
        schema = pa.schema([field for field in source.schema if field.name not in JUDGE_ONLY] + list(ADDED))
    return pa.Table.from_batches(out, schema=schema)


def _judge_batch(batch: pa.RecordBatch, rulesets: dict, judges: dict, messages: list) -> pa.RecordBatch:
    # the totals the replay stored as the choice's turn opened: the other's is null outside
    # a game of two players (or for a name not one of its two): not a two-player state
    stored_other = _filled(batch.column("other_start_total"))
    found = stored_other != NULL
    n = batch.num_rows
    col = {name: _numbers(batch.column(name), dtype) for name, dtype in NUMBERS.items()}
    everywhere = found.all()
    mover = _filled(batch.column("start_total"))[found]
    other = stored_other[found]
    if not everywhere:  # the others: no judge runs (no ruleset), no totals
        col["ruleset_id"] = np.where(found, col["ruleset_id"], NO_RULESET).astype(np.int32)
        mover, other = _spread(mover, found), _spread(other, found)
    col["mover_total"], col["other_total"] = mover, other
    judged = np.zeros(n, dtype=np.bool_)
    made = np.zeros(n)
    best = np.zeros(n)
    best_key = np.zeros(n, dtype=np.int64)
    why = np.zeros(n, dtype=np.int8)
    if not everywhere:
        why[~found] = _code_or_judge(NOT_IN_RACE, messages)
    rids = col["ruleset_id"][found] if not everywhere else col["ruleset_id"]
    present = [int(rids[0])] if len(rids) and (rids == rids[0]).all() else [int(r) for r in np.unique(rids)]
    for rid in present:
        if rid not in judges:
            judges[rid] = _code_or_judge(judge_for(rulesets.get(rid)), messages)
        judge = judges[rid]
        if isinstance(judge, int):  # a code of `messages`: not judged
            why[col["ruleset_id"] == rid] = judge
            continue
        judge.run(rid, col, judged, made, best, best_key, why)
    loss = (best - made) * 100.0
    names = [("" if m is None else m).encode() for m in messages]
    offsets = np.cumsum([0] + [len(b) for b in names]).astype(np.int32)
    dictionary = pa.Array.from_buffers(
        pa.string(), len(names), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(names))]
    )
    passed = [name for name in batch.schema.names if name not in JUDGE_ONLY]
    arrays = [batch.column(name) for name in passed] + [
        _arrow(found, pa.bool_()),
        _arrow(col["mover_total"], pa.int64(), valid=None if everywhere else found),
        _arrow(col["other_total"], pa.int64(), valid=None if everywhere else found),
        _arrow(judged, pa.bool_()),
        _arrow(best, pa.float64(), valid=judged),
        _arrow(made, pa.float64(), valid=judged),
        _arrow(loss, pa.float64(), valid=judged),
        _arrow(best_key, pa.int64(), valid=judged),
        dictionary.take(_arrow(why, pa.int8(), valid=why != 0)),  # plain strings: every engine reads them
    ]
    fields = [batch.schema.field(name) for name in passed] + list(ADDED)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _spread(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """`values` (one per True of `where`) at their rows, 0 elsewhere."""
    out = np.zeros(len(where), dtype=values.dtype)
    out[where] = values
    return out


def _numbers(array: pa.Array, dtype) -> np.ndarray:
    """An Arrow column of numbers as numpy, in place when it is of `dtype` (nulls read as
    whatever lies under them: the judge reads a column only where the choice's state has it,
    and those are the columns' non-null rows)."""
    kind = np.dtype(dtype)
    if pa.types.is_integer(array.type) and array.type.bit_width == 8 * kind.itemsize and array.buffers()[1] is not None:
        signed = pa.types.is_signed_integer(array.type)
        view = np.frombuffer(
            array.buffers()[1], dtype=kind if signed else kind.str.replace("i", "u"), count=len(array),
            offset=array.offset * kind.itemsize,
        )  # fmt: skip
        return view.view(kind)
    import pyarrow.compute as pc  # another engine's types (Spark): a copy

    filled = pc.cast(array.fill_null(0) if array.null_count else array, pa.from_numpy_dtype(kind))
    return np.frombuffer(filled.buffers()[1], dtype=kind, count=len(filled), offset=filled.offset * kind.itemsize)


def _filled(array: pa.Array) -> np.ndarray:
    """An integer column as int64, NULL where null (a stored total: no two-player state)."""
    return _int64(array, NULL)


def _int64(array: pa.Array, null: int) -> np.ndarray:
    """An integer column as int64 through its buffer (pyarrow's to_numpy imports pandas)."""
    import pyarrow.compute as pc

    wide = pc.cast(array, pa.int64())
    values = np.frombuffer(wide.buffers()[1], dtype=np.int64, count=len(wide), offset=wide.offset * 8).copy()
    if wide.null_count:  # fill_null(a Python int) imports pandas too
        bits = np.unpackbits(np.frombuffer(wide.buffers()[0], dtype=np.uint8), bitorder="little")
        values[bits[wide.offset : wide.offset + len(wide)] == 0] = null
    return values


def _arrow(values: np.ndarray, kind: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """A numpy column as Arrow through its buffers: pa.array() on numpy imports pandas."""
    mask = None if valid is None else pa.py_buffer(np.packbits(valid.astype(np.bool_), bitorder="little"))
    nulls = 0 if valid is None else int(len(valid) - np.count_nonzero(valid))
    if pa.types.is_boolean(kind):
        data = pa.py_buffer(np.packbits(values.astype(np.bool_), bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values, dtype=kind.to_pandas_dtype()))
    return pa.Array.from_buffers(kind, len(values), [mask, data], null_count=nulls)


@lru_cache(maxsize=8)
def judge_for(text) -> "_Judge | str":
    """The judge of one ruleset (its tables loaded, its compiled loop ready), or why its
    choices are not judged; kept for the process, so that `preload` can make it early."""
    try:
        rules = Ruleset.from_value(json.loads(text))
    except (TypeError, ValueError, RulesetError):
        return UNREADABLE
    reason = race_model.refusal(rules)
    if reason is not None:
        return reason
    judge = _Judge(rules)
    judge.warm()
    return judge


def _code_or_judge(found: "_Judge | str", messages: list) -> "_Judge | int":
    if not isinstance(found, str):
        return found
    if found not in messages:
        messages.append(found)
    return messages.index(found)


#: How long compile_apart's child may take (it compiles in 15 to 45 s on two cores) before
#: it is killed and the judge compiles in this process instead.
CHILD_COMPILE_SECONDS = 600


def compile_apart() -> None:
    """On the first judging after an install (numba's cache holds no judge: `farkle-logs
    warm` was not run), compile the judge in a child process, before DuckDB computes the
    judge's input, and let this process load the result. Compiling in place kept about
    230 MB of the compiler's memory in the process for the rest of the run, on top of
    DuckDB's and the judging's: over 1 GiB at the peak on a 3 M-event dataset, where a run
    with the judge compiled stays near 0.9 GiB. The child's memory goes with it, and
    nothing else runs meanwhile. It is said as a compile (numba's "numba:compile" event,
    which `pipeline.ingest.warm.first_compile` listens to): the wait has a name. If the
    child fails or hangs, nothing is lost: the judge then compiles in place, as before."""
    if race_model.judge_compiled():
        return
    import subprocess
    import sys

    from numba.core import event

    with event.trigger_event("numba:compile", data={"dispatcher": None, "args": (), "return_type": None}):
        try:
            subprocess.run(
                [sys.executable, "-m", "pipeline.solved.judge"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
                timeout=CHILD_COMPILE_SECONDS,
            )
        except (OSError, subprocess.SubprocessError):  # could not start, or hung: killed, compiled here
            pass


def preload(rulesets: pa.Table) -> None:
    """Make the judges of these rulesets (int_race_rulesets: those of the two-player games;
    their tables read, the compiled loop loaded from numba's cache): mostly interpreter work,
    which a thread does while DuckDB computes the judge's input, so that the judging itself
    waits for none of it. No two-player game, nothing loaded."""
    for text in rulesets.column("ruleset").to_pylist():
        judge_for(text)


@dataclass(frozen=True)
class KeepIndex:
    """Every legal keep of every roll of 1 to 6 dice, by dice key, for the compiled judge:
    roll_index[roll key] -> r, the roll's keeps lo[r] to lo[r + 1] - 1 (fewer dice first, then
    the lower dice key; their value in grid levels `dv`, dice to roll next `next`, dice key
    `key`); value[dice key] the points of a scoring keep, dice[dice key] its dice count."""

    roll_index: np.ndarray
    lo: np.ndarray
    dv: np.ndarray
    next: np.ndarray
    key: np.ndarray
    value: np.ndarray
    dice: np.ndarray


@lru_cache(maxsize=8)
def keep_index(rules: Ruleset, g: int) -> KeepIndex:
    values = score_table(rules).value
    roll_keys = [counts_key(counts) for n in range(1, 7) for counts in multisets(n)]
    size = max(roll_keys) + 1
    roll_index = np.zeros(size, dtype=np.int64)
    value = np.zeros(size, dtype=np.int64)
    dice = np.zeros(size, dtype=np.int64)
    lo, dv, nxt, key = [0], [], [], []
    for r, rk in enumerate(roll_keys):
        roll_index[rk] = r
        n_roll = sum(key_counts(rk))
        dice[rk] = n_roll
        value[rk] = values[rk] or 0
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
    as_array = lambda xs: np.array(xs, dtype=np.int64)  # noqa: E731
    return KeepIndex(roll_index, as_array(lo), as_array(dv), as_array(nxt), as_array(key), value, dice)


class _Judge:
    """One solvable ruleset: its solved race, stored roll values and keep index, loaded once."""

    def __init__(self, rules: Ruleset):
        from pipeline.solved.tables import race, turn_rolls

        self.rules = rules
        self.solved = race(rules)
        self.keeps = keep_index(rules, self.solved.granularity)
        self.starts, self.rolls = turn_rolls(rules)

    def warm(self) -> None:
        """Load the compiled loop and the final turn's tables by judging no choice."""
        i8, i4, i1, f8 = (np.zeros(0, dtype=t) for t in (np.int64, np.int32, np.int8, np.float64))
        col = {name: np.frombuffer(b"", dtype=dtype) for name, dtype in NUMBERS.items()}  # read-only, as read in place
        col["mover_total"], col["other_total"] = i8, i8.copy()
        self.run(0, col, np.zeros(0, dtype=np.bool_), f8, f8.copy(), i8.copy(), i1.copy())

    def run(self, rid, col, judged, made, best, best_key, why) -> None:
        s, k, m, ft = self.solved, self.keeps, self.solved.moves, self.solved.final
        race_model.kernel()["judge_choices"](
            col["ruleset_id"], rid, col["mover_total"], col["other_total"], col["points"], col["dice"],
            col["roll_key"], col["kept_key"], col["flags"], s.granularity, s.n_levels, self.rules.opening > 0,
            k.roll_index, k.lo, k.dv, k.next, k.key, k.value, k.dice,
            self.starts, self.rolls, s.w, ft.catch_up, ft.d_cap, ft.bank_ok, ft.y, ft.z, ft.win_level, ft.tie_ok,
            m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, judged, made, best, best_key, why,
        )  # fmt: skip


def dice_text(key: int) -> str:
    return " ".join(map(str, counts_to_dice(key_counts(key))))


def accuracy(loss_pp: float) -> float:
    """The accuracy of one choice (percent) from its loss in percentage points."""
    import math

    return min(100.0, max(0.0, ACCURACY_A * math.exp(-ACCURACY_K * loss_pp) - ACCURACY_C))


if __name__ == "__main__":  # compile_apart's child: the judge of `standard` made, so compiled and cached
    judge_for(Ruleset.builtin("standard").to_json())

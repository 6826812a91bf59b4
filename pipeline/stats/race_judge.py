"""Every choice of the two-player games judged by the winning chance it costs (a Python model).

The state of a choice is the ruleset, both banked totals at the turn's start
(sql/int_race_turns.sql), the turn points and the dice; a keep is worth the mover's
winning chance after it (`pipeline.strategy.race`: win + half a tie under best play by
both, final round included), the best keep the largest over the roll's legal keeps; a bank
or roll is worth banking's or rolling's chance. The loss is best - made, in percentage
points. Each pair of totals' turn is solved once for all its choices, pairs in parallel
(`race_kernel.judge_choices`).

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

INPUT = "int_race_choice_states"
#: accuracy of a choice = ACCURACY_A * exp(-ACCURACY_K * loss in pp) - ACCURACY_C, in [0, 100]:
#: lichess's curve with the loss scaled by ten (docs/stats.md).
ACCURACY_A, ACCURACY_K, ACCURACY_C = 103.1668, 0.4354, 3.1669

SCHEMA = pa.schema(
    [
        ("game_no", pa.int64()),
        ("seq", pa.int64()),
        ("kind", pa.string()),
        ("race_judged", pa.bool_()),
        ("chance_best", pa.float64()),
        ("chance_made", pa.float64()),
        ("loss_pp", pa.float64()),
        ("race_best", pa.string()),
        ("why", pa.string()),
    ]
)


def dice_text(key: int) -> str:
    return " ".join(map(str, counts_to_dice(key_counts(key))))


def race_choices(inputs: dict[str, pa.Table]) -> pa.Table:
    table = inputs[INPUT]
    columns = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
    n = table.num_rows
    judged = np.zeros(n, dtype=np.bool_)
    best = np.full(n, np.nan)
    made = np.full(n, np.nan)
    best_text = np.full(n, None, dtype=object)
    why = np.full(n, None, dtype=object)
    rulesets = columns["ruleset"] if n else np.array([], dtype=object)
    for text in sorted({t for t in rulesets if t is not None}):
        rows = np.nonzero(rulesets == text)[0]
        _judge_ruleset(text, rows, columns, judged, best, made, best_text, why)
    loss = np.where(judged, (best - made) * 100.0, np.nan)
    return pa.table(
        {
            "game_no": pa.array(columns["game_no"] if n else [], pa.int64()),
            "seq": pa.array(columns["seq"] if n else [], pa.int64()),
            "kind": pa.array(columns["kind"] if n else [], pa.string()),
            "race_judged": pa.array(judged, pa.bool_()),
            "chance_best": pa.array(np.where(judged, best, np.nan), pa.float64(), mask=~judged),
            "chance_made": pa.array(np.where(judged, made, np.nan), pa.float64(), mask=~judged),
            "loss_pp": pa.array(loss, pa.float64(), mask=~judged),
            "race_best": pa.array(best_text.tolist(), pa.string()),
            "why": pa.array(why.tolist(), pa.string()),
        },
        schema=SCHEMA,
    )


def _judge_ruleset(text, rows, columns, judged, best, made, best_text, why) -> None:
    try:
        rules = Ruleset.from_value(json.loads(text))
    except (ValueError, RulesetError):
        why[rows] = "the ruleset cannot be read"
        return
    reason = race_model.refusal(rules)
    if reason is not None:
        why[rows] = reason
        return
    from pipeline.stats.race_tables import race

    solved = race(rules)
    g, k_levels = solved.granularity, solved.n_levels
    mover = columns["mover_total"][rows].astype(np.int64)
    other = columns["other_total"][rows].astype(np.int64)
    points = columns["points"][rows].astype(np.int64)
    opened = columns["opened"][rows]
    ok = columns["judged"][rows].astype(np.bool_)
    why_rows = np.full(len(rows), None, dtype=object)
    why_rows[~ok] = "the choice is not judged against the single turn either"
    on_grid = (mover >= 0) & (other >= 0) & (mover % g == 0) & (other % g == 0)
    bad = ok & ~on_grid
    why_rows[bad] = "a banked total off the grid or below 0"
    ok &= on_grid
    past = ok & (mover // g >= k_levels)
    why_rows[past] = "the mover's total is already at the target"
    ok &= ~past
    if rules.opening > 0:
        mismatch = ok & ((mover > 0) != opened.astype(np.bool_))
        why_rows[mismatch] = "opened does not match the banked total"
        ok &= ~mismatch
    why[rows] = why_rows
    idx = rows[ok]
    if not len(idx):
        return
    kinds = columns["kind"][idx]
    is_keep = kinds == "keep"
    roll_keys = columns["roll_key"][idx]
    kept_keys = columns["kept_key"][idx]
    choice = columns["choice"][idx]
    dice = columns["dice"][idx].astype(np.int64)
    values = score_table(rules).value
    # the legal keeps of each roll, as CSR arrays
    roll_index: dict[int, int] = {}
    kopt_lo, kopt_dv, kopt_next, kopt_key = [0], [], [], []
    roll_idx = np.zeros(len(idx), dtype=np.int64)
    made_dv = np.zeros(len(idx), dtype=np.int64)
    made_next = np.zeros(len(idx), dtype=np.int64)
    for i in np.nonzero(is_keep)[0]:
        rk = int(roll_keys[i])
        r = roll_index.get(rk)
        if r is None:
            r = roll_index[rk] = len(roll_index)
            n_roll = sum(key_counts(rk))
            options = []
            for sub in sub_keys()[rk]:
                v = values[sub]
                if v is None:
                    continue
                kept = sum(key_counts(sub))
                options.append((kept, sub, v // g, 6 if kept == n_roll else n_roll - kept))
            for _, sub, dv, nxt in sorted(options):  # fewer dice first, then the lower faces
                kopt_dv.append(dv)
                kopt_next.append(nxt)
                kopt_key.append(sub)
            kopt_lo.append(len(kopt_dv))
        roll_idx[i] = r
        kk = int(kept_keys[i])
        n_roll = sum(key_counts(rk))
        kept = sum(key_counts(kk))
        made_dv[i] = (values[kk] or 0) // g
        made_next[i] = 6 if kept == n_roll else n_roll - kept
    a = mover[ok] // g
    b = other[ok] // g
    order = np.lexsort((b, a))
    pair_key = a[order] * (1 << 32) + b[order]
    starts = np.nonzero(np.r_[True, pair_key[1:] != pair_key[:-1]])[0]
    pair_lo = np.r_[starts, len(order)].astype(np.int64)
    out_made = np.zeros(len(idx))
    out_best = np.zeros(len(idx))
    out_option = np.zeros(len(idx), dtype=np.int64)
    m, ft = solved.moves, solved.final
    race_model.kernel()["judge_choices"](
        a[order][starts], b[order][starts], pair_lo,
        np.where(is_keep, 0, 1)[order].astype(np.int64), (points[ok] // g)[order], dice[order],
        made_dv[order], made_next[order], (choice[order] == "roll").astype(np.int64), roll_idx[order],
        np.array(kopt_lo, dtype=np.int64), np.array(kopt_dv, dtype=np.int64), np.array(kopt_next, dtype=np.int64),
        k_levels, solved.w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor, ft.y, ft.z, ft.win_level, ft.tie_ok,
        m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv, out_made, out_best, out_option,
    )  # fmt: skip
    target = idx[order]
    judged[target] = True
    made[target] = out_made
    best[target] = out_best
    keys = np.array(kopt_key, dtype=np.int64)
    keep_sorted = is_keep[order]
    texts = np.empty(len(order), dtype=object)
    texts[~keep_sorted] = np.where(out_option[~keep_sorted] == 1, "roll", "bank")
    texts[keep_sorted] = [dice_text(int(keys[j])) for j in out_option[keep_sorted]]
    best_text[target] = texts


def accuracy(loss_pp: float) -> float:
    """The accuracy of one choice (percent) from its loss in percentage points."""
    import math

    return min(100.0, max(0.0, ACCURACY_A * math.exp(-ACCURACY_K * loss_pp) - ACCURACY_C))

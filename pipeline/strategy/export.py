"""The solved (points, dice_left, opened) table as Arrow, so SQL can join decisions to it."""

from __future__ import annotations

import json

import pyarrow as pa

from pipeline.strategy.solver import BANK, MODEL_NOTE, ROLL, TOL, Policy

SCHEMA = pa.schema(
    [
        ("points", pa.int64()),
        ("dice_left", pa.int8()),
        ("opened", pa.bool_()),
        ("bank_value", pa.float64()),
        ("roll_value", pa.float64()),
        ("value", pa.float64()),
        ("best_action", pa.string()),
    ]
)


def policy_table(policy: Policy) -> pa.Table:
    """One row per state below the cap: points on the grid from 0, dice_left 1..6, opened
    false/true. From the cap up banking is best whenever a roll can farkle (see the solver);
    the schema metadata carries the model note, the ruleset, the cap, the grid and the
    headline figures."""
    columns: dict[str, list] = {name: [] for name in SCHEMA.names}
    for opened in (False, True):
        points, bank, roll = policy.states(opened)
        for n in range(1, 7):
            for p, b, rolls in zip(points, bank, roll):
                r = rolls[n - 1]
                columns["points"].append(p)
                columns["dice_left"].append(n)
                columns["opened"].append(opened)
                columns["bank_value"].append(b)
                columns["roll_value"].append(r)
                columns["value"].append(max(b, r))
                columns["best_action"].append(ROLL if r > b + TOL else BANK)
    metadata = {
        "model": MODEL_NOTE,
        "rules": policy.rules.to_json(),
        "cap": str(policy.cap),
        "granularity": str(policy.granularity),
        "headline": json.dumps(policy.headline()),
    }
    return pa.Table.from_pydict(columns, schema=SCHEMA.with_metadata(metadata))

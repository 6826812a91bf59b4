"""Comparing what the two engines give: same rows, floats within a tolerance."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pyarrow as pa

REL = 1e-9  # sums of doubles in another order differ in the last bits
ABS = 1e-9


def same_value(a: Any, b: Any) -> bool:
    if (a is None and b == []) or (a == [] and b is None):
        # An aggregated list of no rows: DuckDB's `list(...) filter (where ...)` gives NULL,
        # Spark's collect_list an empty array. Only the fct_decision_quality facts' blunder_rows have one,
        # and rpt_blunders reads it only where blunders > 0, so every report is the same.
        return True
    if isinstance(a, (float, Decimal)) or isinstance(b, (float, Decimal)):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=REL, abs_tol=ABS)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        if a and all(isinstance(x, dict) for x in list(a) + list(b)):
            # a list of structs aggregated by the query (blunder_rows): neither engine
            # promises its order, so it is compared as a multiset
            a, b = sorted(a, key=lambda r: _key(r)), sorted(b, key=lambda r: _key(r))
        return all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def _key(row: dict) -> tuple:
    return tuple((v is None, repr(round(v, 6)) if isinstance(v, float) else repr(v)) for v in row.values())


def assert_same_rows(left: pa.Table, right: pa.Table, *, ordered: bool, what: str = "") -> None:
    """Row for row equal (columns by name); `ordered=False` compares as multisets."""
    assert left.column_names == right.column_names, f"{what}: columns differ"
    a, b = left.to_pylist(), right.to_pylist()
    assert len(a) == len(b), f"{what}: {len(a)} rows against {len(b)}"
    if not ordered:
        a, b = sorted(a, key=_key), sorted(b, key=_key)
    for i, (x, y) in enumerate(zip(a, b)):
        diff = {k: (x[k], y[k]) for k in x if not same_value(x[k], y[k])}
        assert not diff, f"{what}: row {i} differs: {diff}"

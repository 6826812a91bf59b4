"""The per-ruleset lookup table of every keep of one to six dice.

Replay scores millions of keeps and rolls; searching splits for each would dominate the
run. There are only 923 non-empty multisets of up to six dice, so each ruleset's answers
are computed once and looked up by the dice key (`pipeline.rules.play`: one decimal digit
per face count), which needs no sorting and joins fast in SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Iterable, cast

from pipeline.rules import play
from pipeline.rules.play import counts_key
from pipeline.rules.ruleset import Ruleset
from pipeline.rules.scoring import (
    Counts,
    best_keep_counts,
    best_split_counts,
    counts_to_dice,
    dice_counts,
    format_breakdown,
)


def dice_key(dice: Iterable[int]) -> int:
    """The dice key (`pipeline.rules.play`) of dice checked first: one weight per die, no counts built."""
    dice = tuple(dice)
    if not all(type(d) is int and 1 <= d <= 6 for d in dice):
        dice_counts(dice)  # raises with the offending die named
    return play.dice_key(dice)


@dataclass(frozen=True)
class TableRow:
    key: int
    dice: str  # sorted faces, e.g. "11155": readable and still a valid key
    n_dice: int
    value: int | None  # score when every die must be used (None: some die scores nothing)
    all_score: bool
    breakdown: str | None
    best_value: int  # best keep of these dice taken as a roll (0: the roll is a farkle)
    best_keep: str | None
    is_farkle: bool


class ScoreTable:
    """Lookups by integer key; `rows` for SQL/polars joins."""

    def __init__(self, rules: Ruleset):
        self.rules = rules
        self.rows: list[TableRow] = []
        self.value: dict[int, int | None] = {}
        self.best: dict[int, int] = {}
        self.farkle: dict[int, bool] = {}
        for n in range(1, 7):
            for counts in _multisets(n):
                row = _row(counts, rules)
                self.rows.append(row)
                self.value[row.key] = row.value
                self.best[row.key] = row.best_value
                self.farkle[row.key] = row.is_farkle

    def __len__(self) -> int:
        return len(self.rows)

    def to_arrow(self):
        import pyarrow as pa

        columns = {name: [getattr(r, name) for r in self.rows] for name in TableRow.__dataclass_fields__}
        schema = pa.schema(
            [
                ("key", pa.int32()),
                ("dice", pa.string()),
                ("n_dice", pa.int8()),
                ("value", pa.int32()),
                ("all_score", pa.bool_()),
                ("breakdown", pa.string()),
                ("best_value", pa.int32()),
                ("best_keep", pa.string()),
                ("is_farkle", pa.bool_()),
            ]
        )
        return pa.Table.from_pydict(columns, schema=schema)

    def to_polars(self):
        import polars as pl

        return pl.from_arrow(self.to_arrow())


def _multisets(n: int) -> Iterable[Counts]:
    """The face counts (c1..c6) of every multiset of n dice, in increasing order of the
    tuple: the order of `product(range(n + 1), repeat=6)` filtered by sum, without its
    (n + 1) ** 6 candidates (117,649 for six dice: most of a table's build time)."""
    return cast("list[Counts]", _compositions(n, 6))


def _compositions(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(n,)]
    return [(c,) + rest for c in range(n + 1) for rest in _compositions(n - c, parts - 1)]


def _row(counts: Counts, rules: Ruleset) -> TableRow:
    found = best_split_counts(counts, rules)
    best = best_keep_counts(counts, rules)
    return TableRow(
        key=counts_key(counts),
        dice="".join(map(str, counts_to_dice(counts))),
        n_dice=sum(counts),
        value=None if found is None else found[0],
        all_score=found is not None,
        breakdown=None if found is None else format_breakdown(found[1]),
        best_value=0 if best is None else best[1],
        best_keep=None if best is None else "".join(map(str, counts_to_dice(best[0]))),
        is_farkle=best is None,
    )


def _sub_keys() -> dict[int, frozenset[int]]:
    """For every multiset of up to six dice, the keys of its non-empty sub-multisets:
    "were these kept dice in that roll?" becomes one set lookup."""
    out: dict[int, frozenset[int]] = {}
    for n in range(1, 7):
        for counts in _multisets(n):
            subs = product(*(range(c + 1) for c in counts))
            out[counts_key(counts)] = frozenset(counts_key(s) for s in subs if any(s))
    return out


@lru_cache(maxsize=1)
def sub_keys() -> dict[int, frozenset[int]]:
    """The sub-multiset keys, built on first use, not at import: commands that never
    replay, such as `score` or `--help`, do not pay for them."""
    return _sub_keys()


@lru_cache(maxsize=32)
def score_table(rules: Ruleset) -> ScoreTable:
    """The table of a ruleset, built once per process."""
    return ScoreTable(rules)

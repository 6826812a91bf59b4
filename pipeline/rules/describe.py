"""Human-readable summaries of a ruleset: its scoring table and odds, for `rules show`."""

from __future__ import annotations

from fractions import Fraction

from pipeline.rules.odds import farkle_probability
from pipeline.rules.ruleset import Ruleset

_SIZE = {4: "four", 5: "five", 6: "six"}


def scoring_rows(rules: Ruleset) -> list[tuple[str, int | None]]:
    """(combination, points) rows; None where the ruleset does not score the combination
    (null, or worth 0: rules.md makes a 0-point combination no combination)."""
    return [(name, points or None) for name, points in _rows(rules)]


def _rows(rules: Ruleset) -> list[tuple[str, int | None]]:
    rows: list[tuple[str, int | None]] = [
        ("single 1", rules.single_one),
        ("single 5", rules.single_five),
    ]
    rows += [(f"three {face}s", rules.triple_value(face)) for face in range(1, 7)]
    for n in (4, 5, 6):
        values = {face: rules.kind_value(face, n) for face in range(1, 7)}
        if len(set(values.values())) == 1:
            rows.append((f"{_SIZE[n]} of a kind (any face)", values[1]))
        else:
            rows += [(f"{_SIZE[n]} {face}s", v) for face, v in values.items()]
    rows.append(("straight 1-2-3-4-5-6", rules.straight))
    for faces, value in rules.partial_straights or ():
        rows.append((f"partial straight {'-'.join(faces)}", value))
    rows += [
        ("three pairs", rules.three_pairs),
        ("four of a kind + a pair", rules.four_kind_plus_pair),
        ("two triplets", rules.two_triplets),
    ]
    return rows


def game_end_text(rules: Ruleset) -> str:
    """When a game under `rules` is over, in words (rules.md: `target` and `rounds`)."""
    target = rules.target
    final = f"the end of the final round that a banked total of {target:,} starts" if target is not None else ""
    if rules.rounds is None:
        return f"at {final} (every other player gets one more turn)"
    rounds = f"after {rules.rounds:,} round{'s' if rules.rounds != 1 else ''} (every player has played {rules.rounds:,} turn{'s' if rules.rounds != 1 else ''})"
    if target is None:
        return f"{rounds}; no target"
    return f"{rounds}, or at {final}, whichever comes first"


def odds_rows(rules: Ruleset) -> list[tuple[int, Fraction]]:
    return [(n, farkle_probability(n, rules)) for n in range(6, 0, -1)]

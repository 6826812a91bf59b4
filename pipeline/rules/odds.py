"""Exact farkle odds, by enumerating every one of the 6^n ordered rolls."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product

from pipeline.rules.ruleset import Ruleset
from pipeline.rules.table import counts_key, score_table


@lru_cache(maxsize=256)
def farkle_probability(n: int, rules: Ruleset) -> Fraction:
    """P(a roll of n dice scores nothing) under `rules`, exact."""
    if not 1 <= n <= 6:
        raise ValueError(f"a roll has 1 to 6 dice, got {n}")
    farkle = score_table(rules).farkle
    busts = 0
    for roll in product(range(1, 7), repeat=n):
        counts = [0] * 6
        for die in roll:
            counts[die - 1] += 1
        busts += farkle[counts_key(counts)]
    return Fraction(busts, 6**n)

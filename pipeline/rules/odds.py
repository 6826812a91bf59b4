"""Exact farkle odds: every roll of n dice counted once per face multiset, weighted by the
number of ordered rolls showing it (n! / the product of the counts' factorials), which sums
to the same 6^n ordered rolls as enumerating them one by one, in 462 steps instead of 46,656."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial, prod

from pipeline.rules.ruleset import Ruleset
from pipeline.rules.table import counts_key, score_table


@lru_cache(maxsize=256)
def farkle_probability(n: int, rules: Ruleset) -> Fraction:
    """P(a roll of n dice scores nothing) under `rules`, exact."""
    if not 1 <= n <= 6:
        raise ValueError(f"a roll has 1 to 6 dice, got {n}")
    farkle = score_table(rules).farkle
    busts = 0
    for faces in combinations_with_replacement(range(6), n):
        counts = [0] * 6
        for face in faces:
            counts[face] += 1
        if farkle[counts_key(counts)]:
            busts += factorial(n) // prod(factorial(c) for c in counts)
    return Fraction(busts, 6**n)

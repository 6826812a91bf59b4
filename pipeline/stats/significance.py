"""Exact significance tests for the bust rates and the dice faces, and the correction for
testing many players at once.

The SQL counts; these functions turn counts into p-values, as the Python models
`bust_rate_tests` and `dice_fairness_tests` (pipeline.stats.runner.PYTHON_MODELS) that
rpt_bust_rate_by_dice_left and rpt_dice_fairness join, so DuckDB and Spark give the same
rows. A normal or chi-square approximation is wrong exactly where a referee needs it right:
on a few rolls of one player (2 farkles in 4 six-dice rolls is p = 0.003 exactly and
p = 2e-10 by the normal curve).

- Bust rates: the farkles of a row are a sum of binomials, one per ruleset its rolls were
  played under (each with its exact odds). Its exact distribution (a convolution of the
  binomials; one binomial when one ruleset was played) gives the two-sided p-value by
  scipy.stats.binomtest's own rule: the probability of every count at most as likely as the
  one observed (the "minlike" rule R's binom.test uses too). tests/test_stats_significance.py
  holds it to binomtest.
- Dice faces: Pearson's chi-square statistic against fair dice, with its exact distribution
  over the multinomial when a row has at most EXACT_DICE dice (expected count per face up to
  about 17, where the chi-square curve is still off in the tail), else the chi-square tail
  with 5 degrees of freedom.
- Many players: Holm's step-down correction within each scope (the player rows of a table
  are one family, the overall rows another); a row is flagged when its adjusted p-value is
  below ALPHA. Holm bounds the chance that *any* fair player is flagged by ALPHA, whatever
  the dependence between the tests; a flag here accuses a person, so that is the error to
  bound, rather than the share of false flags among the flags (Benjamini-Hochberg).

The arithmetic is numpy and the standard library's log-gamma and erfc: scipy would cost
every `stats` run a fifth of a second of CPU to import scipy.special, and a second for
scipy.stats, for two functions. scipy is the tests' reference instead (a test dependency):
tests/test_stats_significance.py holds every p-value here to scipy.stats' binomtest, binom
and chisquare.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa

from pipeline.stats.odds import rows_table

ALPHA = 0.05  # a row is flagged when its Holm-adjusted p-value is below this
EXACT_DICE = 100  # dice fairness: the exact distribution up to this many dice in a row
P_FLOOR = 1e-4  # p-values below it print as "<0.0001"
# binomtest's tolerance: counts whose probability is within this factor of the observed
# count's are "as likely" (floating-point ties)
RELATIVE_TIE = 1 + 1e-7
# convolutions of up to this many multiply-adds run directly, bigger ones by FFT
DIRECT_CONVOLVE = 20_000_000
WINDOW_SDS = 40  # a binomial's distribution is held over its mean ± this many standard deviations

_TESTED = [("p_value", pa.float64()), ("p_adjusted", pa.float64()), ("test", pa.string())]
BUST_TEST_SCHEMA = pa.schema([("scope", pa.string()), ("player", pa.string()), ("dice", pa.int32()), *_TESTED])
DICE_TEST_SCHEMA = pa.schema([("scope", pa.string()), ("player", pa.string()), *_TESTED])
BUST_TEST_COLUMNS = tuple(BUST_TEST_SCHEMA.names)
DICE_TEST_COLUMNS = tuple(DICE_TEST_SCHEMA.names)


def format_p(p: float | None, missing: str = "-") -> str:
    """A p-value the one way every output prints it: two significant digits, never an
    exponent ("0.0031", "0.41", "1"), and "<0.0001" below that."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return missing
    if p < P_FLOOR:
        return f"<{P_FLOOR:.4f}"
    return f"{p:.2g}"


# --------------------------------------------------------------------------- bust rates
def binomial_window(n: int, p: float) -> tuple[int, np.ndarray]:
    """(lo, pmf): P(X = x) for x = lo, lo + 1, ... over the counts that carry the mass of
    X ~ Binomial(n, p): the mean ± 40 standard deviations and 10 more (Bernstein's inequality
    puts less than 1e-40 beyond), so a row of millions of rolls costs a few thousand values.
    In logs, so no n overflows: log-gamma for the first count, then the ratio of neighbours,
    P(x + 1) / P(x) = (n - x) / (x + 1) * p / (1 - p), summed up (relative error ~1e-12)."""
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    lo = max(0, math.floor(mean - WINDOW_SDS * sd - 10))
    hi = min(n, math.ceil(mean + WINDOW_SDS * sd + 10))
    if p <= 0.0 or p >= 1.0:  # a certain outcome: all the mass on 0 or on n
        return (n, np.ones(1)) if p >= 1.0 else (0, np.ones(1))
    first = math.lgamma(n + 1) - math.lgamma(lo + 1) - math.lgamma(n - lo + 1) + lo * math.log(p)
    first += (n - lo) * math.log1p(-p)
    x = np.arange(lo, hi, dtype=np.float64)
    steps = np.log(n - x) - np.log(x + 1) + (math.log(p) - math.log1p(-p))
    log_pmf = np.concatenate(([first], first + np.cumsum(steps)))
    return lo, np.exp(log_pmf)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) * len(b) <= DIRECT_CONVOLVE:
        return np.convolve(a, b)
    size = len(a) + len(b) - 1
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)
    return np.clip(out, 0.0, None)


def count_distribution(parts: Sequence[tuple[int, float]]) -> tuple[int, np.ndarray]:
    """(lo, pmf) of a sum of independent binomials, one (trials, probability) each: the
    convolution of their windows (binomial_window)."""
    lo, pmf = 0, np.ones(1)
    for n, p in parts:
        if n > 0:
            part_lo, part = binomial_window(n, p)
            lo, pmf = lo + part_lo, _convolve(pmf, part)
    return lo, pmf


def count_p_value(k: int, parts: Sequence[tuple[int, float]]) -> float:
    """Two-sided exact p-value of observing k successes: the total probability of the counts
    no more likely than k (binomtest's rule; 1 when k is the expected count). A k beyond
    the window is less likely than anything in it: its p-value is the window's mass at most
    as likely, below 1e-40 (it prints as "<0.0001" all the same)."""
    mean = sum(n * p for n, p in parts)
    if k == mean:
        return 1.0
    lo, pmf = count_distribution(parts)
    if lo <= k < lo + len(pmf):
        observed = pmf[k - lo]
        return float(min(1.0, pmf[pmf <= observed * RELATIVE_TIE].sum()))
    return 0.0


# --------------------------------------------------------------------------- dice faces
@cache
def _square_sum_weights(n_max: int) -> np.ndarray:
    """W[k, s] = the sum, over the ways to split k dice among 6 faces with counts c_1..c_6
    and sum of squares s, of 1 / (c_1! ... c_6!). The chance of those splits with fair dice
    is W[k, s] * k! / 6^k, so one table serves every row of up to n_max dice."""
    size = n_max * n_max + 1
    weights = np.zeros((n_max + 1, size))
    weights[0, 0] = 1.0
    inverse_factorial = [1 / math.factorial(c) for c in range(n_max + 1)]
    for _face in range(6):
        grown = np.zeros_like(weights)
        for c in range(n_max + 1):
            grown[c:, c * c :] += inverse_factorial[c] * weights[: n_max + 1 - c, : size - c * c]
        weights = grown
    return weights


def chi2_statistic(counts: Sequence[int]) -> float | None:
    n = sum(counts)
    if n == 0:
        return None
    expected = n / 6
    return sum((c - expected) ** 2 for c in counts) / expected


def faces_p_value(counts: Sequence[int], exact_up_to: int = EXACT_DICE) -> tuple[float | None, str | None]:
    """(p-value, test) of fair dice given the six face counts: the chance that fair dice give
    a chi-square statistic at least this large. `exact` sums the multinomial's probabilities
    of every split at least as uneven (sum of squared counts at least as large); above
    `exact_up_to` dice the chi-square curve with 5 degrees of freedom (`chi2`)."""
    n = sum(counts)
    if n == 0:
        return None, None
    if n <= exact_up_to:
        squares = sum(c * c for c in counts)
        row = _square_sum_weights(_table_size(n, exact_up_to))[n]
        scale = math.exp(math.lgamma(n + 1) - n * math.log(6))
        tail = float(row[squares:].sum() * scale)
        return min(1.0, tail), "exact"
    statistic = chi2_statistic(counts)
    assert statistic is not None  # n > 0
    return chi2_tail_5df(statistic), "chi2"


def chi2_tail_5df(x: float) -> float:
    """P(X >= x) for X chi-square with 5 degrees of freedom, in closed form (odd degrees):
    erfc(sqrt(x/2)) + sqrt(2/pi) * exp(-x/2) * (sqrt(x) + x^(3/2)/3)."""
    if x <= 0:
        return 1.0
    return min(
        1.0, math.erfc(math.sqrt(x / 2)) + math.sqrt(2 / math.pi) * math.exp(-x / 2) * (math.sqrt(x) + x**1.5 / 3)
    )


def _table_size(n: int, exact_up_to: int) -> int:
    """One table for every row: the smallest of a few sizes that holds n, so rows of
    different sizes share the cached table instead of each building its own."""
    for size in (20, 50, exact_up_to):
        if n <= size <= exact_up_to:
            return size
    return exact_up_to


# --------------------------------------------------------------------------- many players
def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted as a test):
    the i-th smallest of m becomes max over j <= i of min(1, (m - j + 1) p_(j))."""
    order = sorted((i for i, p in enumerate(p_values) if p is not None), key=lambda i: (p_values[i], i))
    m = len(order)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        p = p_values[i]
        assert p is not None
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def _adjust_by_scope(rows: list[dict[str, Any]]) -> None:
    for scope in ("overall", "player"):
        mine = [r for r in rows if r["scope"] == scope]
        for row, adjusted in zip(mine, holm([r["p_value"] for r in mine])):
            row["p_adjusted"] = adjusted


# --------------------------------------------------------------------------- python models
def _column(table: pa.Table, name: str) -> list:
    return table.column(name).to_pylist()


def bust_rate_tests(inputs: dict[str, pa.Table]) -> pa.Table:
    """Per (scope, player, dice) of fct_roll_counts: the exact p-value of the farkle count
    against the rulesets' odds, Holm-adjusted within its scope. `test` is `binomial` (one
    ruleset) or `poisson_binomial` (rolls under several rulesets: a sum of binomials); no
    p-value when a ruleset's odds are unknown. Reads values only, so any engine's types do."""
    counts = inputs["fct_roll_counts"]
    groups: dict[tuple[str, str | None, int], dict[float | None, list[int]]] = {}
    for player, dice, rolls, farkles, prob in zip(
        *(_column(counts, c) for c in ("player", "dice", "rolls", "farkles", "farkle_prob"))
    ):
        for key in (("overall", None, int(dice)), ("player", player, int(dice))):
            parts = groups.setdefault(key, {})
            tally = parts.setdefault(None if prob is None else float(prob), [0, 0])
            tally[0] += int(rolls)
            tally[1] += int(farkles)
    rows = []
    for (scope, player, dice), parts in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])):
        p_value, test = None, None
        if None not in parts:
            k = sum(farkles for _, farkles in parts.values())
            p_value = count_p_value(k, [(rolls, prob) for prob, (rolls, _) in sorted(parts.items())])  # type: ignore[misc]
            test = "binomial" if len(parts) == 1 else "poisson_binomial"
        rows.append({"scope": scope, "player": player, "dice": dice, "p_value": p_value, "test": test})
    _adjust_by_scope(rows)
    return rows_table([{c: r.get(c) for c in BUST_TEST_COLUMNS} for r in rows], BUST_TEST_SCHEMA)


def dice_fairness_tests(inputs: dict[str, pa.Table]) -> pa.Table:
    """Per scope and player of fct_dice_faces: the p-value of fair dice for the six face
    counts (`exact` or `chi2`, faces_p_value), Holm-adjusted within its scope."""
    faces = inputs["fct_dice_faces"]
    groups: dict[tuple[str, str | None], list[int]] = {}
    for player, face, n in zip(*(_column(faces, c) for c in ("player", "face", "n"))):
        if face is None or not 1 <= int(face) <= 6:
            continue
        for key in (("overall", None), ("player", player)):
            groups.setdefault(key, [0] * 6)[int(face) - 1] += int(n)
    rows = []
    for (scope, player), counts in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        p_value, test = faces_p_value(counts)
        rows.append({"scope": scope, "player": player, "p_value": p_value, "test": test})
    _adjust_by_scope(rows)
    return rows_table([{c: r.get(c) for c in DICE_TEST_COLUMNS} for r in rows], DICE_TEST_SCHEMA)


def flagged(p_adjusted: Iterable[float | None]) -> list[bool | None]:
    return [None if p is None else p < ALPHA for p in p_adjusted]

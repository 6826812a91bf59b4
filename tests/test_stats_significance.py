"""The p-values of the bust rates and dice faces: exact where counts are small, held to
scipy.stats' own results; Holm's correction; fair dice flagged at the stated rate, not more.

pipeline.stats.significance computes the tests with scipy.special and numpy (scipy.stats
would cost every `stats` run most of a second to import); scipy.stats is the reference here.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import binomtest, chisquare

from pipeline.rules import Ruleset, dice_key, farkle_probability, score_table
from pipeline.stats import Filters, compute
from pipeline.stats.fixtures import write_dataset
from pipeline.stats.significance import (
    ALPHA,
    bust_rate_tests,
    count_p_value,
    dice_fairness_tests,
    faces_p_value,
    format_p,
    holm,
)

STANDARD = Ruleset.builtin("standard")
P6 = float(farkle_probability(6, STANDARD))  # 5/216


# ---- bust rates: the exact binomial test ---------------------------------------------------
def test_two_farkles_in_four_six_dice_rolls_is_p_0_003_not_2e_10():
    got = count_p_value(2, [(4, P6)])
    assert got == pytest.approx(binomtest(2, 4, P6).pvalue, rel=1e-12)
    assert 0.002 < got < 0.004  # the normal approximation said 2.3e-10


@pytest.mark.parametrize(
    "n, p",
    [(1, 2 / 3), (4, P6), (10, 0.5), (37, 0.157), (250, 0.0772), (1_000, P6), (20_000, 0.2778), (2_000_000, 1 / 3)],
)
def test_binomial_p_values_equal_scipys_binomtest(n, p):
    rng = random.Random(n)
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    ks = {0, n, round(mean), min(n, round(mean + 1)), max(0, round(mean - 3 * sd)), min(n, round(mean + 4 * sd))}
    ks |= {rng.randint(0, n) for _ in range(6)}
    for k in sorted(ks):
        want = binomtest(k, n, p).pvalue
        got = count_p_value(k, [(n, p)])
        if want < 1e-40:  # beyond the window: below 1e-40 either way
            assert got < 1e-30, (n, k, p, got, want)
        else:
            assert got == pytest.approx(want, rel=1e-6, abs=1e-300), (n, k, p)


def exact_sum_of_binomials(parts):
    """The distribution of a sum of binomials in exact fractions, by direct convolution."""
    pmf = [Fraction(1)]
    for n, p in parts:
        p = Fraction(p)
        part = [math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)]
        pmf = [
            sum(pmf[i] * part[j - i] for i in range(len(pmf)) if 0 <= j - i < len(part)) for j in range(len(pmf) + n)
        ]
    return pmf


def test_rolls_under_several_rulesets_are_a_sum_of_binomials():
    parts = [(7, Fraction(5, 216)), (5, Fraction(5, 162)), (3, Fraction(1, 3))]
    pmf = exact_sum_of_binomials(parts)
    for k in range(len(pmf)):
        want = float(sum(q for q in pmf if q <= pmf[k]))
        got = count_p_value(k, [(n, float(p)) for n, p in parts])
        assert got == pytest.approx(min(1.0, want), rel=1e-9), k
    # two parts with the same odds are one binomial: binomtest again
    assert count_p_value(9, [(30, 0.2), (20, 0.2)]) == pytest.approx(binomtest(9, 50, 0.2).pvalue, rel=1e-9)
    # big parts take the FFT path and still agree with one binomial
    big = count_p_value(400_600, [(600_000, 1 / 3), (601_500, 1 / 3)])
    assert big == pytest.approx(binomtest(400_600, 1_201_500, 1 / 3).pvalue, rel=1e-6)


# ---- dice faces ------------------------------------------------------------------------------
def brute_force_faces_p(counts):
    n = sum(counts)
    observed = sum(c * c for c in counts)
    hits = 0
    for faces in itertools.product(range(6), repeat=n):
        split = [faces.count(f) for f in range(6)]
        hits += sum(c * c for c in split) >= observed
    return hits / 6**n


@pytest.mark.parametrize("counts", [[1, 0, 0, 0, 0, 0], [2, 1, 0, 0, 1, 0], [3, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 7]])
def test_few_dice_get_the_exact_multinomial_p_value(counts):
    p, test = faces_p_value(counts)
    assert test == "exact"
    assert p == pytest.approx(brute_force_faces_p(counts), rel=1e-9)


def test_many_dice_get_scipys_chi_square_p_value():
    counts = [330, 322, 351, 298, 340, 359]
    p, test = faces_p_value(counts)
    assert test == "chi2"
    assert p == pytest.approx(chisquare(counts).pvalue, rel=1e-9)
    # at the exact table's edge the two agree where the curve is good (p near 0.005)
    near = [30, 20, 10, 10, 15, 15]
    exact, _ = faces_p_value(near)
    assert exact == pytest.approx(chisquare(near).pvalue, rel=0.05)
    assert faces_p_value([0] * 6) == (None, None)


def test_twelve_dice_all_ones_is_not_p_zero():
    # the chi-square curve gives 1e-12; the exact chance is 6 * 6^-12 = 2.8e-9
    p, _ = faces_p_value([12, 0, 0, 0, 0, 0])
    assert p == pytest.approx(6 / 6**12, rel=1e-9)


# ---- Holm ------------------------------------------------------------------------------------
def test_holm_steps_down_and_keeps_the_order():
    # m = 4: 4 * 0.01, 3 * 0.02, max(prev, 2 * 0.04), 1 * 0.3
    assert holm([0.04, 0.01, 0.3, 0.02]) == pytest.approx([0.08, 0.04, 0.3, 0.06])
    assert holm([0.2, None, 0.3]) == [0.4, None, 0.4]  # None is not a test; monotone
    assert holm([0.5, 0.6, 0.9]) == [1.0, 1.0, 1.0]
    assert holm([]) == []


def holm_reject_brute(p_values, alpha):
    """Holm's procedure as stated: reject in increasing order while p_(i) <= alpha/(m-i+1)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = set()
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected.add(i)
    return rejected


def test_holm_adjusted_p_values_reject_what_holms_procedure_rejects():
    rng = random.Random(7)
    for _ in range(300):
        ps = [rng.random() ** rng.choice([1, 3, 6]) for _ in range(rng.randint(1, 30))]
        adjusted = holm(ps)
        for alpha in (0.01, 0.05, 0.2):
            assert {i for i, a in enumerate(adjusted) if a < alpha} <= holm_reject_brute(ps, alpha)
            assert holm_reject_brute(ps, alpha * 0.999) <= {i for i, a in enumerate(adjusted) if a < alpha}


# ---- fair dice are flagged at the stated rate, not more --------------------------------------
def fair_roll_counts(rng: np.random.Generator, players: int) -> pa.Table:
    """fct_roll_counts of fair dice: per player and dice count, from a few rolls to hundreds."""
    rows = []
    for i in range(players):
        for dice in range(1, 7):
            rolls = int(rng.integers(1, 400))
            p = float(farkle_probability(dice, STANDARD))
            rows.append(
                {
                    "player": f"p{i}",
                    "ruleset": "standard",
                    "dice": dice,
                    "rolls": rolls,
                    "farkles": int(rng.binomial(rolls, p)),
                    "farkle_prob": p,
                }
            )
    return pa.Table.from_pylist(rows)


def test_fair_dice_are_flagged_at_the_stated_rate_not_more():
    rng = np.random.default_rng(20261201)
    replicates, players = 400, 20
    any_flag = 0
    raw_rejections = tests = 0
    for _ in range(replicates):
        out = bust_rate_tests({"fct_roll_counts": fair_roll_counts(rng, players)}).to_pylist()
        mine = [r for r in out if r["scope"] == "player"]
        assert len(mine) == players * 6
        any_flag += any(r["p_adjusted"] < ALPHA for r in mine)
        raw_rejections += sum(r["p_value"] < ALPHA for r in mine)
        tests += len(mine)
    # each exact test rejects at most 5 % of fair rows (it is conservative: counts are whole)
    assert raw_rejections / tests <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / tests)
    # Holm: the chance that any of 120 fair rows is flagged is at most 5 % (three standard errors)
    assert any_flag / replicates <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / replicates)


def test_fair_faces_are_flagged_at_the_stated_rate_not_more():
    rng = np.random.default_rng(20261202)
    replicates, players = 300, 15
    any_flag = raw = tests = 0
    for _ in range(replicates):
        rows = []
        for i in range(players):
            n = int(rng.integers(3, 160))  # both the exact table and the chi-square curve
            for face, count in enumerate(rng.multinomial(n, [1 / 6] * 6), start=1):
                rows.append({"player": f"p{i}", "face": face, "n": int(count)})
        out = [r for r in dice_fairness_tests({"fct_dice_faces": pa.Table.from_pylist(rows)}).to_pylist()]
        mine = [r for r in out if r["scope"] == "player"]
        any_flag += any(r["p_adjusted"] < ALPHA for r in mine)
        raw += sum(r["p_value"] < ALPHA for r in mine)
        tests += len(mine)
    assert raw / tests <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / tests)
    assert any_flag / replicates <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / replicates)


# ---- through the SQL: stats rows -------------------------------------------------------------
def small_sample_dataset(root, players: int = 30, seed: int = 5):
    """Many players with a handful of rolls each, fair dice, and one player ('zed') who
    farkled 2 of 4 six-dice rolls: what the old normal approximation called loaded."""
    rng = random.Random(seed)
    farkle = score_table(STANDARD).farkle
    rolls = []
    for i in range(players):
        for n in range(1, 7):
            for _ in range(rng.randint(2, 8)):
                dice = [rng.randint(1, 6) for _ in range(n)]
                rolls.append(
                    dict(game_id="g0", player=f"p{i:02}", dice=dice, dice_count=n, scored=not farkle[dice_key(dice)])
                )
    for dice in ([2, 2, 3, 4, 6, 6], [2, 3, 3, 4, 4, 6], [1, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6, 6]):
        rolls.append(dict(game_id="g0", player="zed", dice=dice, dice_count=6, scored=not farkle[dice_key(dice)]))
    games = [dict(game_id="g0", ruleset=STANDARD.to_json(), ruleset_name="standard", complete=True)]
    return write_dataset(root, {"games": games, "rolls": rolls})


def test_stats_rows_carry_the_exact_test_and_holms_correction(tmp_path):
    t = compute(small_sample_dataset(tmp_path / "ds"), Filters(), ["bust", "dice"])
    bust = t["bust_rate_by_dice_left"].to_pylist()
    zed = next(r for r in bust if r["player"] == "zed" and r["dice"] == 6)
    assert (zed["rolls"], zed["farkles"]) == (4, 2)
    assert zed["p_value"] == pytest.approx(binomtest(2, 4, P6).pvalue, rel=1e-9)
    assert zed["test"] == "binomial"
    players = [r for r in bust if r["scope"] == "player"]
    assert zed["p_adjusted"] == pytest.approx(holm([r["p_value"] for r in players])[players.index(zed)])
    # one of 181 fair-or-not rows at p = 0.003 is no evidence: not flagged
    assert zed["off"] is False
    assert not any(r["off"] for r in bust)
    for row in bust:  # every row: the exact test of its counts
        want = binomtest(row["farkles"], row["rolls"], row["exact_rate"]).pvalue
        assert row["p_value"] == pytest.approx(want, rel=1e-6)
    faces = t["dice_fairness"].to_pylist()
    for row in faces:
        counts = [row[f"face_{f}"] for f in range(1, 7)]
        p, test = faces_p_value(counts)
        assert row["p_value"] == pytest.approx(p) and row["test"] == test
        assert row["off"] == (row["p_adjusted"] < ALPHA)


def test_p_values_print_one_way():
    assert [format_p(p) for p in (0.0031039, 0.046, 0.5, 1.0, 2.3e-10, 0.0001, None)] == [
        "0.0031",
        "0.046",
        "0.5",
        "1",
        "<0.0001",
        "0.0001",
        "-",
    ]

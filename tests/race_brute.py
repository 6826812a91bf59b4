"""An independent two-player solver for the tests: plain value iteration over every state.

Written another way than `pipeline.strategy.race` on purpose: no order of solving, no fixed
point per pair, no pruning of dominated keeps, no shared tables of the final turn, its own
reading of the bank floor and the final round from the ruleset's knobs (only the score of
a keep comes from the rules engine). Every state holds a value; sweeps update them all in
place with the Bellman equations until no value moves by more than `tol`. Turn points past
the target whose catch-up chance is below `cut` (this solver's own final-turn values) are
treated as banked, as rules.md allows. Sweeps run from the highest totals and turn points
down: any order converges to the same values, this one in fewer sweeps.

States (levels of the grid g; K totals below the target):
- start[a, b]: the mover, total a, starts a turn against b;
- turn[a, b, p, n]: after a keep, p levels in the turn, n dice to roll;
- fin[d, o, p, n]: the final turn of a player (opened o) behind by d levels, p in the turn.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from math import ceil, factorial

import numba
import numpy as np

from pipeline.rules.scoring import counts_to_dice
from pipeline.rules.table import score_table


def _rolls(rules, g):
    """Per n: every roll (face counts) of n dice with its probability and every legal keep
    (value in levels, dice left next): arrays for the compiled sweeps."""
    table = score_table(rules)
    roll_lo, probs, keep_lo, kv, kn = [0, 0], [], [0], [], []
    farkle = [0.0]
    for n in range(1, 7):
        bust = Fraction(0)
        for counts in product(range(n + 1), repeat=6):
            if sum(counts) != n:
                continue
            ways = factorial(n)
            for c in counts:
                ways //= factorial(c)
            p = Fraction(ways, 6**n)
            keeps = []
            for sub in product(*(range(c + 1) for c in counts)):
                k = sum(sub)
                if k == 0:
                    continue
                key = sum(c * 10 ** (6 - f) for f, c in enumerate(sub, start=1))
                v = table.value.get(key)
                if v:
                    keeps.append((v // g, 6 if k == n else n - k))
            if not keeps:
                bust += p
                continue
            probs.append(float(p))
            for v, nx in keeps:
                kv.append(v)
                kn.append(nx)
            keep_lo.append(len(kv))
        roll_lo.append(len(probs))
        farkle.append(float(bust))
    return (
        np.array(roll_lo),
        np.array(probs),
        np.array(keep_lo),
        np.array(kv),
        np.array(kn),
        np.array(farkle),
        max(kv),
    )


@numba.njit(cache=True)
def _roll(values, base, p, n, roll_lo, probs, keep_lo, kv, kn, p_hi, beyond):
    """Expected best next value of rolling n dice at p: values[base + (p', n')] for p' < p_hi,
    `beyond[p']` (banked) past it."""
    total = 0.0
    for r in range(roll_lo[n], roll_lo[n + 1]):
        best = 0.0
        for k in range(keep_lo[r], keep_lo[r + 1]):
            q = p + kv[k]
            v = values[base + q * 7 + kn[k]] if q < p_hi else beyond[q]
            if v > best:
                best = v
        total += probs[r] * best
    return total


@numba.njit(cache=True)
def _sweep_final(fin, r_max, small, floor_lv, roll_lo, probs, keep_lo, kv, kn, tol):
    """Value iteration of the final turn until it settles. With the lead d at or above the
    floor, a state is the levels still short of a tie, r = d - p (rows r + 1 of `fin`: row 0
    is r = -1, a win); banking at r = 0 ties. Leads below the floor (no tie can be banked,
    the win needs the floor) are `small[(d * 2 + o) * (F + 2) + p, n]`, F the higher floor."""
    f_top = floor_lv.max() + 2
    for _ in range(100000):
        change = 0.0
        for row in range(1, r_max + 1):
            r = row - 1
            for n in range(1, 7):
                total = 0.0
                for i in range(roll_lo[n], roll_lo[n + 1]):
                    best = 0.0
                    for k in range(keep_lo[i], keep_lo[i + 1]):
                        left = r - kv[k]
                        v = 1.0 if left < 0 else fin[left + 1, kn[k]]
                        if v > best:
                            best = v
                    total += probs[i] * best
                if r == 0 and total < 0.5:
                    total = 0.5
                if abs(total - fin[row, n]) > change:
                    change = abs(total - fin[row, n])
                fin[row, n] = total
        for d in range(1, f_top):
            for o in range(2):
                if d >= floor_lv[o]:
                    continue
                base = (d * 2 + o) * f_top
                for p in range(f_top - 1, -1, -1):
                    for n in range(1, 7):
                        if p >= floor_lv[o]:  # past the lead and the floor
                            v = 1.0
                        else:
                            v = 0.0
                            for i in range(roll_lo[n], roll_lo[n + 1]):
                                best = 0.0
                                for k in range(keep_lo[i], keep_lo[i + 1]):
                                    q = p + kv[k]
                                    x = 1.0 if q >= floor_lv[o] else small[base + q, kn[k]]
                                    if x > best:
                                        best = x
                                v += probs[i] * best
                        if abs(v - small[base + p, n]) > change:
                            change = abs(v - small[base + p, n])
                        small[base + p, n] = v
        if change < tol:
            return


@numba.njit(cache=True)
def _catch_up(fin, small, floor_lv, d, o):
    """The final turn's chance from its start, behind by d levels."""
    if d < floor_lv[o]:
        return small[(d * 2 + o) * (floor_lv.max() + 2), 6]
    return fin[d + 1, 6]


@numba.njit(cache=True)
def _sweep_game(start, turn, fin, small, k_lv, p_hi, d_max, floor_lv, farkle, roll_lo, probs, keep_lo, kv, kn, tol):
    beyond = np.zeros(p_hi + 64)
    for _ in range(100000):
        change = 0.0
        for a in range(k_lv - 1, -1, -1):  # any order converges; this one needs fewer sweeps
            for b in range(k_lv - 1, -1, -1):
                oa = 1 if a > 0 else 0
                ob = 1 if b > 0 else 0
                lost = 1.0 - start[b, a]  # the other moves at the same totals
                base = (a * k_lv + b) * p_hi * 7
                for q in range(p_hi + 64):  # what banking q levels is worth
                    if q < floor_lv[oa] or q == 0:
                        beyond[q] = lost
                    elif a + q < k_lv:
                        beyond[q] = 1.0 - start[b, a + q]
                    elif a + q - b >= d_max:
                        beyond[q] = 1.0
                    else:
                        beyond[q] = 1.0 - _catch_up(fin, small, floor_lv, a + q - b, ob)
                for p in range(p_hi - 1, -1, -1):
                    for n in range(1, 7):
                        v = farkle[n] * lost + _roll(turn, base, p, n, roll_lo, probs, keep_lo, kv, kn, p_hi, beyond)
                        if p > 0 and beyond[p] > v:
                            v = beyond[p]
                        i = base + p * 7 + n
                        if abs(v - turn[i]) > change:
                            change = abs(v - turn[i])
                        turn[i] = v
                s = turn[base + 6]
                if abs(s - start[a, b]) > change:
                    change = abs(s - start[a, b])
                start[a, b] = s
        if change < tol:
            return


def brute_force(rules, cut=1e-10, tol=1e-13):
    """start[a, b] for every pair of total levels below the target, by value iteration."""
    from math import gcd
    from functools import reduce

    table = score_table(rules)
    g = reduce(gcd, (v for v in table.value.values() if v), 0)
    roll_lo, probs, keep_lo, kv, kn, farkle, max_kv = _rolls(rules, g)
    floors = (max(rules.opening, rules.min_bank), rules.min_bank)  # not opened, opened
    floor_lv = np.array([ceil(f / g) for f in floors])
    # the final turn, for leads up to d_max: grown until the catch-up from d_max is below cut
    d_max = 64
    f_top = int(floor_lv.max()) + 2
    while True:
        fin = np.zeros((d_max + 2, 7))
        small = np.zeros((f_top * 2 * f_top, 7))
        _sweep_final(fin, d_max + 1, small, floor_lv, roll_lo, probs, keep_lo, kv, kn, tol)
        if d_max > f_top and fin[d_max + 1, 6] < cut:
            break
        d_max += 64
    k_lv = ceil(rules.target / g)
    p_hi = k_lv + d_max + 1
    start = np.zeros((k_lv, k_lv))
    turn = np.zeros(k_lv * k_lv * p_hi * 7)
    _sweep_game(start, turn, fin, small, k_lv, p_hi, d_max, floor_lv, farkle, roll_lo, probs, keep_lo, kv, kn, tol)
    return start, g


__all__ = ["brute_force", "counts_to_dice"]

"""The compiled loops of the two-player solver (`pipeline.strategy.race` explains the model).

Plain Python in the subset numba compiles: arrays and numbers in and out, no objects.
`compiled()` returns them jitted; the module stays importable without numba so a reader can
follow the arithmetic, and the tests can run a function as it is.

Levels: every total and every turn-points figure is an integer multiple of the ruleset's
grid g (`Moves.granularity`), held as a level (points / g). The moves of a roll are flat
arrays: for n dice, rolls `roll_lo[n]` to `roll_lo[n + 1] - 1`, each with its probability
and options `opt_lo[r]` to `opt_lo[r + 1] - 1` (keep value in levels, dice left next);
`farkle[n]` is the chance n dice score nothing. Index 0 of the per-n arrays is unused.
"""

from __future__ import annotations

import numpy as np

#: The parallel loop: `range` here, numba's `prange` in the namespace `race.kernel()`
#: compiles these functions in (importing numba only then).
prange = range


# ---- the final turn ----------------------------------------------------------------------
def final_turn_tables(roll_lo, r_prob, opt_lo, o_dv, o_next, r_max):
    """(Y, Z), each [r, n] for r in 0..r_max, n in 1..6 (column 0 unused).

    Y[r, n]: the chance of gaining at least r more levels in the turn, n dice to roll
    (r = 0: already there, 1). Z[r, n]: the final turn's value when the turn points are r
    levels below the leader's lead and banking there (r = 0) ties: above the lead wins (1),
    the tie is worth one half, below it loses (0). Both hold for any points as long as every
    total reached may be banked; the caller handles bank floors."""
    y = np.zeros((r_max + 1, 7))
    z = np.zeros((r_max + 1, 7))
    for n in range(1, 7):
        y[0, n] = 1.0
    for r in range(1, r_max + 1):
        for n in range(1, 7):
            total = 0.0
            for k in range(roll_lo[n], roll_lo[n + 1]):
                best = 0.0
                for o in range(opt_lo[k], opt_lo[k + 1]):
                    left = r - o_dv[o]
                    v = 1.0 if left <= 0 else y[left, o_next[o]]
                    if v > best:
                        best = v
                total += r_prob[k] * best
            y[r, n] = total
    for n in range(1, 7):
        z[0, n] = 0.5 if y[1, n] < 0.5 else y[1, n]
    for r in range(1, r_max + 1):
        for n in range(1, 7):
            total = 0.0
            for k in range(roll_lo[n], roll_lo[n + 1]):
                best = 0.0
                for o in range(opt_lo[k], opt_lo[k + 1]):
                    left = r - o_dv[o]
                    v = 1.0 if left < 0 else z[left, o_next[o]]
                    if v > best:
                        best = v
                total += r_prob[k] * best
            z[r, n] = total
    return y, z


# ---- one turn of the race ------------------------------------------------------------------
def bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok_a, opp_opened):
    """(value, d value / d z) of banking `p` levels with total `a` against `b`: below the
    floor nothing is scored and the opponent moves at the same totals (worth `z`, the
    farkle's value); reaching the target hands the opponent their final turn."""
    if not bank_ok_a[p if p < len(bank_ok_a) else len(bank_ok_a) - 1]:
        return z, 1.0
    t = a + p
    if t < n_levels:
        return 1.0 - w[b, t], 0.0
    d = t - b
    if d >= d_cap:
        return 1.0, 0.0
    return 1.0 - catch_up[opp_opened, d], 0.0


def top_level(a, b, z, n_levels, catch_up, d_cap, bank_ok_a, opp_opened, risk_floor):
    """The first turn-points level from which banking is optimal at every higher level: past
    the target, bankable, and either the opponent's catch-up chance is below the truncation
    (d >= d_cap) or it is at most risk_floor * (1 - z), risk_floor being the smallest farkle
    chance of any number of dice (0 when some number of dice cannot farkle). There rolling
    is worth at most (1 - f_n) * 1 + f_n * z <= banking."""
    p = n_levels - a
    if p < 1:
        p = 1
    while True:
        if bank_ok_a[p]:
            d = a + p - b
            if d >= d_cap:
                return p
            if catch_up[opp_opened, d] <= risk_floor * (1.0 - z):
                return p
        p += 1


def turn_values(
    a, b, z, n_levels, w, catch_up, d_cap, bank_ok, risk_floor, roll_lo, r_prob, opt_lo, o_dv, o_next, farkle, max_dv
):
    """The turn of the player with total level `a` against `b` (both below the target),
    the farkle's value being `z` (one minus the opponent's chance at the same totals).

    Returns (top, value, slope, roll): value[p, n] the state's winning chance after a keep
    with p levels of turn points and n dice to roll (max of banking and rolling; at p = 0
    the roll), slope[p, n] its derivative in z (the chance, under the policy, that the turn
    ends in a farkle or a bank below the floor), roll[p, n] rolling's value. Rows from `top`
    on are banked (`top_level`)."""
    opened_a = 1 if a > 0 else 0
    opp_opened = 1 if b > 0 else 0
    bank_ok_a = bank_ok[opened_a]
    top = top_level(a, b, z, n_levels, catch_up, d_cap, bank_ok_a, opp_opened, risk_floor)
    rows = top + max_dv + 1
    value = np.zeros((rows, 7))
    slope = np.zeros((rows, 7))
    roll = np.zeros((rows, 7))
    for p in range(top, rows):
        bv, bs = bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok_a, opp_opened)
        for n in range(1, 7):
            value[p, n] = bv
            slope[p, n] = bs
            roll[p, n] = bv
    for p in range(top - 1, -1, -1):
        if p > 0:
            bv, bs = bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok_a, opp_opened)
        else:
            bv, bs = -1.0, 0.0  # the turn's first roll: no bank
        for n in range(1, 7):
            total = farkle[n] * z
            dtotal = farkle[n]
            for k in range(roll_lo[n], roll_lo[n + 1]):
                best = -1.0
                best_slope = 0.0
                for o in range(opt_lo[k], opt_lo[k + 1]):
                    q = p + o_dv[o]
                    nx = o_next[o]
                    if value[q, nx] > best:
                        best = value[q, nx]
                        best_slope = slope[q, nx]
                total += r_prob[k] * best
                dtotal += r_prob[k] * best_slope
            roll[p, n] = total
            if bv >= total:
                value[p, n] = bv
                slope[p, n] = bs
            else:
                value[p, n] = total
                slope[p, n] = dtotal
    return top, value, slope, roll


def start_value(
    a, b, z, n_levels, w, catch_up, d_cap, bank_ok, risk_floor, roll_lo, r_prob, opt_lo, o_dv, o_next, farkle, max_dv
):
    """(value, slope) of the turn start: six dice, no points."""
    top, value, slope, roll = turn_values(
        a,
        b,
        z,
        n_levels,
        w,
        catch_up,
        d_cap,
        bank_ok,
        risk_floor,
        roll_lo,
        r_prob,
        opt_lo,
        o_dv,
        o_next,
        farkle,
        max_dv,
    )
    return value[0, 6], slope[0, 6]


# ---- the fixed point of a pair of totals ---------------------------------------------------
def solve_pair(
    a,
    b,
    guess,
    tol,
    n_levels,
    w,
    catch_up,
    d_cap,
    bank_ok,
    risk_floor,
    roll_lo,
    r_prob,
    opt_lo,
    o_dv,
    o_next,
    farkle,
    max_dv,
):
    """W[a, b] and W[b, a] (a <= b), every state with a larger sum of totals solved.

    A farkle hands the same totals to the opponent, so x = W[a, b] and y = W[b, a] solve
    x = f(1 - y), y = g(1 - x), where f and g are the two turns' values as functions of the
    farkle's value: maxima of linear functions with slopes in [0, 1], so the composed map
    phi(x) = f(1 - g(1 - x)) is nondecreasing with slope <= 1 and psi = phi - x is
    nonincreasing, psi(0) >= 0 >= psi(1). Newton's method on psi inside a bracket that
    bisection keeps; with the policies fixed phi is linear, so the step lands on the root.
    Returns (x, y, bound, evaluations): bound = |psi(x)| / (1 - phi'(x)), the distance to
    the exact root under the policies at x (the root of a piecewise linear psi whose slope
    is <= phi'(x) - 1 on that piece)."""
    lo, hi = 0.0, 1.0
    x = guess
    y = 0.0
    evaluations = 0
    bound = 1.0
    for _ in range(200):
        if a == b:
            f, df = start_value(
                a,
                a,
                1.0 - x,
                n_levels,
                w,
                catch_up,
                d_cap,
                bank_ok,
                risk_floor,
                roll_lo,
                r_prob,
                opt_lo,
                o_dv,
                o_next,
                farkle,
                max_dv,
            )
            y = f
            dphi = -df  # phi(x) = f(1 - x)
            phi = f
            evaluations += 1
        else:
            g, dg = start_value(
                b,
                a,
                1.0 - x,
                n_levels,
                w,
                catch_up,
                d_cap,
                bank_ok,
                risk_floor,
                roll_lo,
                r_prob,
                opt_lo,
                o_dv,
                o_next,
                farkle,
                max_dv,
            )
            f, df = start_value(
                a,
                b,
                1.0 - g,
                n_levels,
                w,
                catch_up,
                d_cap,
                bank_ok,
                risk_floor,
                roll_lo,
                r_prob,
                opt_lo,
                o_dv,
                o_next,
                farkle,
                max_dv,
            )
            y = g
            phi = f
            dphi = df * dg
            evaluations += 2
        psi = phi - x
        if psi >= 0.0:
            lo = x
        if psi <= 0.0:
            hi = x
        slope = 1.0 - dphi
        bound = abs(psi) / slope if slope > 0.0 else (0.0 if psi == 0.0 else 1.0)
        if bound <= tol or hi - lo <= tol:
            break
        nxt = x + psi / slope if slope > 0.0 else 0.5 * (lo + hi)
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if nxt == x:
            break
        x = nxt
    return x, y, bound, evaluations


def solve_sums(
    s_hi,
    s_lo,
    w,
    bounds,
    evals,
    tol,
    n_levels,
    catch_up,
    d_cap,
    bank_ok,
    risk_floor,
    roll_lo,
    r_prob,
    opt_lo,
    o_dv,
    o_next,
    farkle,
    max_dv,
):
    """W[a, b] for every pair whose sum a + b runs from s_hi down to s_lo. A bank moves to a
    larger sum, a farkle or a bank below the floor keeps it, so each sum needs only the sums
    above it, and the pairs {(a, b), (b, a)} of one sum are independent: solved in parallel."""
    for s in range(s_hi, s_lo - 1, -1):
        a_lo = s - n_levels + 1
        if a_lo < 0:
            a_lo = 0
        a_hi = s // 2
        for a in prange(a_lo, a_hi + 1):
            b = s - a
            guess = 0.5  # from the solved neighbours: the same mover, one level more for the other
            if b + 2 < n_levels:
                guess = 2.0 * w[a, b + 1] - w[a, b + 2]
            elif b + 1 < n_levels:
                guess = w[a, b + 1]
            elif a + 1 < n_levels:
                guess = w[a + 1, b]
            if not 0.0 < guess < 1.0:
                guess = 0.5
            x, y, bound, ev = solve_pair(
                a,
                b,
                guess,
                tol,
                n_levels,
                w,
                catch_up,
                d_cap,
                bank_ok,
                risk_floor,
                roll_lo,
                r_prob,
                opt_lo,
                o_dv,
                o_next,
                farkle,
                max_dv,
            )
            w[a, b] = x
            w[b, a] = y
            bounds[a, b] = bound
            evals[a, b] = ev


# ---- judging choices -------------------------------------------------------------------------
def final_value(o, d, p, n, y, z, win_level, tie_ok, d_cap):
    """The final-turn mover's chance after a keep: behind by d levels, p in the turn, n dice."""
    if d >= d_cap:
        return 0.0
    if tie_ok[o, d]:
        if p > d:
            return 1.0
        return z[d - p, n]
    w = win_level[o, d]
    if p >= w:
        return 1.0
    return y[w - p, n]


def sure_rolls(roll_lo, r_prob, opt_lo):
    """sure[n]: rolling n dice in the final turn when every keep wins, summed as the judge
    sums any roll (outcome by outcome, the best keep worth 1, a farkle 0): not 1 - farkle[n]
    computed otherwise, so that `final_roll` gives the judge's loop's value to the last bit."""
    sure = np.zeros(7)
    for n in range(1, 7):
        for k in range(roll_lo[n], roll_lo[n + 1]):
            top_v = 1.0 if opt_lo[k + 1] > opt_lo[k] else 0.0  # some keep scores: it wins
            sure[n] += r_prob[k] * top_v
    return sure


def final_roll(o, d, p, n, y, z, win_level, tie_ok, d_cap, sure):
    """Rolling n dice with p levels in the final turn, behind by d: the sum over the roll's
    outcomes of the best keep's `final_value` is the recurrence that defines y (and z when
    a tie may be banked) at the levels still needed, so it is read off them (the same sums
    in the same order: the same value to the last bit). `sure[n]` is the same sum when
    every keep wins. -1.0 where the tables do not say (level with the lead and a tie
    bankable, or further than they reach): the caller sums the outcomes itself."""
    if d >= d_cap:
        return 0.0  # every keep's chance is 0: the sum is 0
    if tie_ok[o, d]:
        r = d - p
        if r < 0:
            return sure[n]
        if r == 0 or r >= z.shape[0]:
            return -1.0
        return z[r, n]
    r = win_level[o, d] - p
    if r <= 0:
        return sure[n]
    if r >= y.shape[0]:
        return -1.0
    return y[r, n]


def final_bank(o, d, p, bank_ok):
    """Banking p levels in the final turn: above the leader wins, level ties, below loses."""
    if p <= 0 or not bank_ok[o, p if p < bank_ok.shape[1] else bank_ok.shape[1] - 1]:
        return 0.0
    if p > d:
        return 1.0
    if p == d:
        return 0.5
    return 0.0


# ---- every turn's roll values, for judging millions of choices ------------------------------
def turn_rolls(
    a, b, z, n_levels, w, catch_up, d_cap, bank_ok, risk_floor, roll_lo, r_prob, opt_lo, o_dv, o_next, farkle, max_dv
):
    """(top, roll): `turn_values` without the slopes, which only the solver's Newton step
    needs; the same arithmetic in the same order, so the same values to the last bit."""
    opened_a = 1 if a > 0 else 0
    opp_opened = 1 if b > 0 else 0
    bank_ok_a = bank_ok[opened_a]
    top = top_level(a, b, z, n_levels, catch_up, d_cap, bank_ok_a, opp_opened, risk_floor)
    rows = top + max_dv + 1
    value = np.zeros((rows, 7))
    roll = np.zeros((top, 7))
    for p in range(top, rows):
        bv, bs = bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok_a, opp_opened)
        for n in range(1, 7):
            value[p, n] = bv
    for p in range(top - 1, -1, -1):
        if p > 0:
            bv, bs = bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok_a, opp_opened)
        else:
            bv = -1.0  # the turn's first roll: no bank
        for n in range(1, 7):
            total = farkle[n] * z
            for k in range(roll_lo[n], roll_lo[n + 1]):
                best = -1.0
                for o in range(opt_lo[k], opt_lo[k + 1]):
                    v = value[p + o_dv[o], o_next[o]]
                    if v > best:
                        best = v
                total += r_prob[k] * best
            roll[p, n] = total
            value[p, n] = bv if bv >= total else total
    return top, roll


def turn_tops(n_levels, w, catch_up, d_cap, bank_ok, risk_floor, tops):
    """tops[a * n_levels + b]: the first turn-points level banked (`top_level`) of every pair."""
    for i in prange(n_levels * n_levels):
        a = i // n_levels
        b = i % n_levels
        tops[i] = top_level(
            a, b, 1.0 - w[b, a], n_levels, catch_up, d_cap, bank_ok[1 if a > 0 else 0], 1 if b > 0 else 0, risk_floor
        )


def fill_turn_rolls(starts, n_levels, w, catch_up, d_cap, bank_ok, risk_floor, roll_lo, r_prob, opt_lo, o_dv, o_next, farkle,
                    max_dv, rolls):  # fmt: skip
    """rolls[starts[i] + p, n - 1] = rolling n dice at p levels of pair i = a * n_levels + b,
    for p below the pair's top: every pair's turn solved once, in parallel."""
    for i in prange(n_levels * n_levels):
        a = i // n_levels
        b = i % n_levels
        top, roll = turn_rolls(a, b, 1.0 - w[b, a], n_levels, w, catch_up, d_cap, bank_ok, risk_floor, roll_lo, r_prob,
                               opt_lo, o_dv, o_next, farkle, max_dv)  # fmt: skip
        base = starts[i]
        for p in range(starts[i + 1] - base):
            for n in range(1, 7):
                rolls[base + p, n - 1] = roll[p, n]


def table_value(a, b, p, n, z, starts, rolls, n_levels, w, catch_up, d_cap, bank_ok):
    """The mover's chance after a keep (p levels, n dice) from the stored roll values."""
    i = a * n_levels + b
    bv, bs = bank_value(a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok[1 if a > 0 else 0], 1 if b > 0 else 0)
    if p < starts[i + 1] - starts[i]:
        r = rolls[starts[i] + p, n - 1]
        if p == 0 or r > bv:
            return r
    return bv


def after_keep(final, a, b, p, n, z, starts, rolls, n_levels, w, catch_up, d_cap, bank_ok, y, zt, win_level, tie_ok):
    """The mover's chance after a keep, in a final turn (b at or past the target) or not."""
    if final:
        return final_value(1 if a > 0 else 0, b - a, p, n, y, zt, win_level, tie_ok, d_cap)
    return table_value(a, b, p, n, z, starts, rolls, n_levels, w, catch_up, d_cap, bank_ok)


def judge_choices(rid_col, rid, mover, other, points, dice, roll_key, kept_key, flags, g, n_levels, check_opened,
                  roll_index, kopt_lo, kopt_dv, kopt_next, kopt_key, key_value, key_dice,
                  starts, rolls, w, catch_up, d_cap, bank_ok, y, zt, win_level, tie_ok,
                  roll_lo, r_prob, opt_lo, o_dv, o_next, farkle, out_judged, out_made, out_best, out_best_key, out_why):  # fmt: skip
    """Judge every choice c of ruleset `rid` (rid_col[c] == rid) in place, in parallel.

    flags[c]: 1 judged against the single turn, 2 opened, 4 a keep (else a bank-or-roll),
    8 rolled. Totals and points are in points; a choice is judged when it is judged against
    the single turn, both totals are on the grid g and >= 0, the mover's below the target
    and (check_opened) the mover opened exactly when above 0; else out_why[c] says which
    check failed (1 to 4, in that order). A keep of `kept_key` from `roll_key` with points[c]
    before it is worth the mover's chance after it; the best keep is the largest over the
    roll's legal keeps (kopt_*, from roll_index[roll_key], fewer dice first: out_best_key its
    dice key). A bank-or-roll at points[c] with dice[c] to roll is worth banking's or
    rolling's chance (out_best_key 1 when rolling is better, else 0). Values come from every
    pair's stored roll values (`fill_turn_rolls`), final turns from the final tables."""
    sure = sure_rolls(roll_lo, r_prob, opt_lo)
    for c in prange(len(rid_col)):
        if rid_col[c] != rid:
            continue
        f = flags[c]
        if (f & 1) == 0:
            out_why[c] = 1
            continue
        mt = mover[c]
        ot = other[c]
        if mt < 0 or ot < 0 or mt % g != 0 or ot % g != 0:
            out_why[c] = 2
            continue
        a = mt // g
        b = ot // g
        if a >= n_levels:
            out_why[c] = 3
            continue
        if check_opened and (mt > 0) != ((f & 2) != 0):
            out_why[c] = 4
            continue
        p = points[c] // g
        final = b >= n_levels
        z = 0.0 if final else 1.0 - w[b, a]
        if (f & 4) != 0:
            rk = roll_key[c]
            kk = kept_key[c]
            n_roll = key_dice[rk]
            n_kept = key_dice[kk]
            made = after_keep(final, a, b, p + key_value[kk] // g, 6 if n_kept == n_roll else n_roll - n_kept, z, starts,
                              rolls, n_levels, w, catch_up, d_cap, bank_ok, y, zt, win_level, tie_ok)  # fmt: skip
            r = roll_index[rk]
            best = -1.0
            best_j = -1
            for j in range(kopt_lo[r], kopt_lo[r + 1]):
                v = after_keep(final, a, b, p + kopt_dv[j], kopt_next[j], z, starts, rolls, n_levels, w, catch_up, d_cap,
                               bank_ok, y, zt, win_level, tie_ok)  # fmt: skip
                if v > best + 1e-12:
                    best = v
                    best_j = j
            out_made[c] = made
            out_best[c] = best
            out_best_key[c] = kopt_key[best_j]
        else:
            n = dice[c]
            if final:
                bank = final_bank(1 if a > 0 else 0, b - a, p, bank_ok)
                rv = final_roll(1 if a > 0 else 0, b - a, p, n, y, zt, win_level, tie_ok, d_cap, sure)
                if rv < 0.0:  # beyond the tables: the outcomes summed here
                    rv = 0.0
                    for k in range(roll_lo[n], roll_lo[n + 1]):
                        top_v = 0.0
                        for o in range(opt_lo[k], opt_lo[k + 1]):
                            v = final_value(
                                1 if a > 0 else 0, b - a, p + o_dv[o], o_next[o], y, zt, win_level, tie_ok, d_cap
                            )
                            if v > top_v:
                                top_v = v
                        rv += r_prob[k] * top_v
            else:
                bank, bs = bank_value(
                    a, b, p, z, n_levels, w, catch_up, d_cap, bank_ok[1 if a > 0 else 0], 1 if b > 0 else 0
                )
                i = a * n_levels + b
                if p < starts[i + 1] - starts[i]:
                    rv = rolls[starts[i] + p, n - 1]
                else:
                    rv = farkle[n] * z
                    for k in range(roll_lo[n], roll_lo[n + 1]):
                        top_v = 0.0
                        for o in range(opt_lo[k], opt_lo[k + 1]):
                            v = table_value(
                                a, b, p + o_dv[o], o_next[o], z, starts, rolls, n_levels, w, catch_up, d_cap, bank_ok
                            )
                            if v > top_v:
                                top_v = v
                        rv += r_prob[k] * top_v
            out_made[c] = rv if (f & 8) != 0 else bank
            out_best[c] = rv if rv > bank else bank
            out_best_key[c] = 1 if rv > bank + 1e-12 else 0
        out_judged[c] = True


#: Compiled in this order, each resolving the earlier ones; the last runs its loop in parallel.
KERNEL_FUNCTIONS = (
    "final_turn_tables",
    "bank_value",
    "top_level",
    "turn_values",
    "start_value",
    "solve_pair",
    "final_value",
    "sure_rolls",
    "final_roll",
    "final_bank",
    "turn_rolls",
    "table_value",
    "after_keep",
)
PARALLEL_FUNCTIONS = ("solve_sums", "turn_tops", "fill_turn_rolls", "judge_choices")

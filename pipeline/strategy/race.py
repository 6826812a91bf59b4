"""The two-player race to the target: both players' winning chances at every state.

Model (rules.md, "Winning chances (two players)"). A player's winning chance is
P(win) + 1/2 P(tie) when both play to maximise their own. Turns alternate; a turn starts
with six dice; after each scoring roll the player keeps, then banks or rolls on. A farkle,
or a bank below the floor, ends the turn with nothing: the opponent then moves at the same
totals. A bank that brings a total to the target starts the final round: the opponent has
exactly one more turn, won above the leader's total, tied on it.

States. Totals and turn points live on the ruleset's grid g (`solver.moves`), as levels.
W[a, b] is the winning chance of the player about to start a turn with total level a against
b, both below the target (K = ceil(target / g) levels). Without a farkle penalty a total is
above 0 exactly when the player has opened (a first bank reaches `opening` > 0; with
`opening` 0 the flag changes no floor), so the opened flags follow from the totals. Within a
turn the state adds the turn points p and the dice left n (`race_kernel.turn_values`).

The final turn is a race for points alone: with d the leader's lead over the mover, its
value depends on d - p only (`race_kernel.final_turn_tables`), bank floors aside (handled
here: below the floor a tie cannot be banked and the winning total rises to the floor).
C(d, opened) is the catch-up chance of a final turn from its start.

Order and fixed point. Without a penalty totals never fall: a bank raises the sum a + b, a
farkle keeps it and hands the same totals over. So sums are solved from the largest down;
within one sum only the pairs (a, b), (b, a) are coupled, through the farkle, a scalar
fixed point solved by safeguarded Newton (`race_kernel.solve_pair`), to a bound
`FIXED_POINT_TOL` on the distance to the exact root under the final policies.

Truncation. Past the target, banking is exactly optimal once the opponent's catch-up chance
is at most f_min (1 - z) (f_min the smallest farkle chance of any number of dice, z the
farkle's value): rolling can gain at most f_n (1 - z). Turn points whose catch-up chance is
below `CATCH_UP_EPS` are treated as banked (rules.md allows 1e-12): each value is then low by
at most that, and since every value is an average of later values with weights summing to
at most one, and the two-cycle's errors e_x <= (1 - q_a) E + q_a e_y solve to e_x <= E, the
truncation error of every W stays below `CATCH_UP_EPS`.

A farkle penalty makes totals fall (and the state hold both streaks): the order above no
longer exists and the whole state space is one coupled system, so such a ruleset is refused
(`RaceUnsolved`), as are rulesets ending after a number of rounds or without a target, and
those past the state budget. No I/O here: `pipeline.solved` stores and loads the tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import ceil
from typing import Callable, Sequence

import numpy as np

from pipeline.errors import UserError
from pipeline.rules import play
from pipeline.rules.jit import import_numba
from pipeline.rules.ruleset import Ruleset
from pipeline.strategy import race_kernel
from pipeline.rules.table import counts_key, score_table, sub_keys
from pipeline.strategy.solver import moves, multisets, roll_probability

#: The fixed point of each pair of totals is solved until its distance to the exact root
#: (under the final policies) is at most this.
FIXED_POINT_TOL = 1e-14
#: Turn points past the target whose opponent's catch-up chance is below this are banked.
CATCH_UP_EPS = 1e-13
#: Most within-turn states (pairs of totals x turn-points levels x 6 dice counts) solved for
#: one ruleset: a few times `standard`, whose solve then stays within minutes on two cores.
RACE_STATE_BUDGET = 400_000_000
MODEL_NOTE = (
    "two-player model: each choice judged by the winning chance (win + half a tie) under best play by both, "
    "final round included"
)


class RaceUnsolved(UserError, ValueError):
    """A ruleset the two-player solver does not solve (penalty, rounds, no target, budget)."""


@dataclass(frozen=True)
class RaceMoves:
    """`solver.moves` as flat arrays for the compiled loops (race_kernel's docstring)."""

    granularity: int
    roll_lo: np.ndarray
    r_prob: np.ndarray
    opt_lo: np.ndarray
    o_dv: np.ndarray
    o_next: np.ndarray
    farkle: np.ndarray
    max_dv: int
    risk_floor: float  # the smallest farkle chance of any dice count; 0 if some count cannot farkle


@lru_cache(maxsize=32)
def race_moves(rules: Ruleset) -> RaceMoves:
    """Every distinct (keep value, dice left next) of every scoring roll. Unlike the
    single-turn solver no keep is dropped as dominated: in the race more points can hurt
    (reaching the target with a small lead hands the opponent a final turn that a total
    just below it would not). Rolls offering the same options are merged."""
    m = moves(rules)
    g = m.granularity
    table = score_table(rules)
    roll_lo = [0, 0]
    probs: list[float] = []
    opt_lo = [0]
    dvs: list[int] = []
    nexts: list[int] = []
    for n in range(1, 7):
        merged: dict[tuple[tuple[int, int], ...], Fraction] = {}
        for counts in multisets(n):
            key = counts_key(counts)
            if table.farkle[key]:
                continue
            options = set()
            for sub in sub_keys()[key]:
                v = table.value[sub]
                if v is None:
                    continue
                k = sum(play.key_counts(sub))
                options.add((v // g, play.dice_to_roll(n, k)))
            found = tuple(sorted(options))
            merged[found] = merged.get(found, Fraction(0)) + roll_probability(counts)
        for offered, prob in merged.items():
            probs.append(float(prob))
            for dv, nxt in offered:
                dvs.append(dv)
                nexts.append(nxt)
            opt_lo.append(len(dvs))
        roll_lo.append(len(probs))
    farkle = np.array([0.0] + [float(f) for f in m.farkle])
    return RaceMoves(
        g,
        np.array(roll_lo, dtype=np.int64),
        np.array(probs),
        np.array(opt_lo, dtype=np.int64),
        np.array(dvs, dtype=np.int64),
        np.array(nexts, dtype=np.int64),
        farkle,
        max(dvs, default=0),
        float(min(farkle[1:])),
    )


def levels(rules: Ruleset) -> int:
    """K: the totals below the target on the grid (0, g, ..., (K - 1) g)."""
    assert rules.target is not None, "a ruleset without a target is refused first"
    return ceil(rules.target / moves(rules).granularity)


def _describe(rules: Ruleset) -> str:
    from pipeline.strategy.solver import describe

    return describe(rules)


def refusal(rules: Ruleset) -> str | None:
    """Why `rules` is not solved (one line), or None. Cheap: nothing is built but the moves."""
    name = _describe(rules)
    if rules.target is None:
        return f"ruleset {name} has no target: the two-player winning chances are modelled for a race to a target only"
    if rules.rounds is not None:
        return (
            f"ruleset {name} ends after a number of rounds: the two-player winning chances do not model a round limit"
        )
    if play.farkle_cost(rules.penalty_after - 1, rules.farkle_penalty, rules.penalty_after) != 0:
        return (
            f"ruleset {name} has a farkle penalty: totals can fall, so the two-player winning chances "
            "(which solve totals in rising order) are not computed"
        )
    m = moves(rules)
    if m.has_zero_keep or not m.rolls[5]:
        return f"ruleset {name} has a keep worth 0 points or no scoring roll: the two-player winning chances are not computed"
    needed = state_count(rules)
    if needed > RACE_STATE_BUDGET:
        return (
            f"ruleset {name} is not solved for two players: it needs about {needed:,} states (grid {m.granularity}, "
            f"target {rules.target:,}), over the budget of {RACE_STATE_BUDGET:,}"
        )
    return None


def state_count(rules: Ruleset) -> int:
    """About how many within-turn states a solve visits: per pair of totals, the turn points
    from 0 to the target and a tail past it, times six dice counts."""
    m = moves(rules)  # the single-turn moves: the same grid, and no keep pruned can be larger
    g = m.granularity
    k = levels(rules)
    tail = int(9000 // g) + m.max_dv  # past the target: a few thousand points under standard
    return k * k * 6 * (k // 2 + tail)


def check(rules: Ruleset) -> None:
    reason = refusal(rules)
    if reason is not None:
        raise RaceUnsolved(reason)


# ---- the compiled loops --------------------------------------------------------------------
@lru_cache(maxsize=1)
def kernel() -> dict:
    """race_kernel's functions jitted (numba), each calling the jitted others."""
    import types

    numba = import_numba()

    namespace = dict(vars(race_kernel))
    namespace["prange"] = numba.prange
    jit = numba.njit(cache=True, nogil=True)
    for name in race_kernel.KERNEL_FUNCTIONS:
        f = namespace[name]
        namespace[name] = jit(types.FunctionType(f.__code__, namespace, name, f.__defaults__))
    parallel = numba.njit(cache=True, nogil=True, parallel=True)
    for name in race_kernel.PARALLEL_FUNCTIONS:
        f = namespace[name]
        namespace[name] = parallel(types.FunctionType(f.__code__, namespace, name, f.__defaults__))
    return namespace


def judge_compiled() -> bool:
    """Whether numba's cache holds the bulk judge's loop (`judge_choices`) for this machine,
    so that judging will load it rather than compile it (the loops it calls are compiled
    with it). A cache numba cannot be asked about counts as holding it: the caller then
    compiles in place, as it would anyway. Reads numba's cache index (`_cache`, not a
    public API: its absence or a change of shape is that case)."""
    try:
        dispatcher = kernel()["judge_choices"]
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - no numba, no cache, another numba: say "compiled"
        return True


# ---- the final turn ------------------------------------------------------------------------
@dataclass(frozen=True)
class FinalTurn:
    """The final turn's tables of one ruleset: `y`, `z` (race_kernel.final_turn_tables),
    `bank_ok[opened, p]` (may p levels be banked), `catch_up[opened, d]` = C(d) for d below
    `d_cap` (0 from there), `win_level[opened, d]` (the fewest turn points, in levels, that
    win against a lead of d) and `tie_ok[opened, d]`."""

    granularity: int
    y: np.ndarray
    z: np.ndarray
    bank_ok: np.ndarray
    catch_up: np.ndarray
    d_cap: int
    win_level: np.ndarray
    tie_ok: np.ndarray

    def value(self, opened: bool, d: int, p: int, n: int) -> float:
        """The final-turn mover's chance after a keep, p levels in the turn, n dice to roll,
        behind by d levels (p > d: banking wins)."""
        o = int(opened)
        if d >= len(self.tie_ok[o]):
            return 0.0
        if self.tie_ok[o, d]:
            return 1.0 if p > d else float(self.z[d - p, n])
        w = int(self.win_level[o, d])
        return 1.0 if p >= w else float(self.y[w - p, n])

    def bank(self, opened: bool, d: int, p: int) -> float:
        if p <= 0 or not self.bank_ok[int(opened), min(p, self.bank_ok.shape[1] - 1)]:
            return 0.0
        return 1.0 if p > d else 0.5 if p == d else 0.0


@lru_cache(maxsize=32)
def final_turn(rules: Ruleset) -> FinalTurn:
    m = race_moves(rules)
    g = m.granularity
    floors = [play.bank_floor(rules.opening, rules.min_bank, opened) for opened in (False, True)]
    floor_levels = max(ceil(f / g) for f in floors)
    r_max = 64
    while True:  # grow until the catch-up chance of a lead of r_max is below the truncation
        y, z = kernel()["final_turn_tables"](m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, r_max)
        if r_max > floor_levels + 2 and y[r_max].max() < CATCH_UP_EPS:
            break
        r_max *= 2
    d_cap = r_max - floor_levels - 1
    width = r_max + 1 + levels(rules) + m.max_dv + 8
    bank_ok = np.zeros((2, width), dtype=np.bool_)
    for o in (0, 1):
        for p in range(1, width):
            bank_ok[o, p] = play.bank_shortfall(p * g, rules.opening, rules.min_bank, bool(o)) == play.BANK_OK
    catch_up = np.zeros((2, d_cap + 1))
    win_level = np.zeros((2, d_cap + 1), dtype=np.int64)
    tie_ok = np.zeros((2, d_cap + 1), dtype=np.bool_)
    for o in (0, 1):
        for d in range(1, d_cap + 1):
            tie_ok[o, d] = bank_ok[o, d]
            w = d + 1
            while not bank_ok[o, w]:
                w += 1
            win_level[o, d] = w
            catch_up[o, d] = z[d, 6] if tie_ok[o, d] else y[w, 6]
    # the truncation: from the first lead whose chance is below CATCH_UP_EPS, none is counted
    below = np.nonzero((catch_up[0] < CATCH_UP_EPS) & (catch_up[1] < CATCH_UP_EPS) & (np.arange(d_cap + 1) > 0))[0]
    cut = int(below[0]) if len(below) else d_cap
    catch_up = np.ascontiguousarray(catch_up[:, : cut + 1])
    catch_up[:, cut] = 0.0
    return FinalTurn(g, y, z, bank_ok, catch_up, cut, win_level[:, : cut + 1], tie_ok[:, : cut + 1])


# ---- solving ---------------------------------------------------------------------------------
@dataclass
class RaceTable:
    """The solved turn starts of a ruleset: w[a, b] for total levels a, b below the target.
    `bound` is the largest fixed-point bound of any pair (race_kernel.solve_pair)."""

    rules: Ruleset
    w: np.ndarray
    bound: float = 0.0
    evaluations: int = 0


def solve_table(rules: Ruleset, progress: Callable[[int, int], None] | None = None) -> RaceTable:
    """Solve every turn start of `rules` (RaceUnsolved if refused). `progress(done, total)`
    is called as pairs of totals are solved."""
    check(rules)
    m = race_moves(rules)
    ft = final_turn(rules)
    k = levels(rules)
    w = np.zeros((k, k))
    bounds = np.zeros((k, k))
    evals = np.zeros((k, k), dtype=np.int64)
    solve_sums = kernel()["solve_sums"]
    total = k * (k + 1) // 2
    done = 0
    s = 2 * k - 2
    while s >= 0:
        s_lo = max(0, s - max(1, (2 * k) // 100))
        solve_sums(s, s_lo, w, bounds, evals, FIXED_POINT_TOL, k, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor,
                   m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv)  # fmt: skip
        for t in range(s_lo, s + 1):
            done += min(t, 2 * k - 2 - t) // 2 + 1
        if progress is not None:
            progress(min(done, total), total)
        s = s_lo - 1
    return RaceTable(rules, w, float(bounds.max()), int(evals.sum()))


# ---- reading the solution --------------------------------------------------------------------
@dataclass(frozen=True)
class TurnView:
    """One turn's values for its mover: `bank(p)`, `roll(p, n)` and `value(p, n)` (the better
    of the two; at p = 0 the roll), p in levels of turn points, n dice to roll. In the final
    turn (`final`) the mover is behind by `lead` levels and the game ends with the turn."""

    race: "Race"
    mover: int  # level of the mover's total
    other: int  # level of the other's total
    final: bool
    top: int = 0
    values: np.ndarray | None = None
    rolls: np.ndarray | None = None
    z: float = 0.0

    @property
    def lead(self) -> int:
        return self.other - self.mover

    def bank(self, p: int) -> float:
        """Banking p levels (p >= 1)."""
        r = self.race
        if self.final:
            return r.final.bank(self.mover > 0, self.lead, p)
        if not r.final.bank_ok[int(self.mover > 0), min(p, r.final.bank_ok.shape[1] - 1)]:
            return self.z
        t = self.mover + p
        if t < r.n_levels:
            return 1.0 - float(r.w[self.other, t])
        d = t - self.other
        return 1.0 if d >= r.final.d_cap else 1.0 - float(r.final.catch_up[int(self.other > 0), d])

    def value(self, p: int, n: int) -> float:
        if self.final:
            return self.race.final.value(self.mover > 0, self.lead, p, n)
        assert self.values is not None
        if p < len(self.values):
            return float(self.values[p, n])
        return self.bank(p)

    def roll(self, p: int, n: int) -> float:
        """Rolling n dice with p levels in the turn, then playing on at best."""
        if not self.final and self.rolls is not None and p < self.top:
            return float(self.rolls[p, n])
        m = self.race.moves
        total = 0.0 if self.final else float(m.farkle[n]) * self.z
        for k in range(m.roll_lo[n], m.roll_lo[n + 1]):
            best = max(self.value(p + int(m.o_dv[o]), int(m.o_next[o])) for o in range(m.opt_lo[k], m.opt_lo[k + 1]))
            total += float(m.r_prob[k]) * best
        return total

    def farkle_value(self) -> float:
        """The mover's chance after a farkle (or a bank below the floor)."""
        return 0.0 if self.final else self.z


class Race:
    """A solved ruleset: the turn starts (`w`) and, on demand, any turn's within-turn values
    and the final turn. Totals and turn points are in points here; they must be on the
    grid (`granularity`) and >= 0, else ValueError."""

    note = MODEL_NOTE

    def __init__(self, table: RaceTable):
        self.rules = table.rules
        self.w = table.w
        self.bound = table.bound
        self.moves = race_moves(self.rules)
        self.granularity = self.moves.granularity
        self.n_levels = self.w.shape[0]
        if self.n_levels != levels(self.rules):
            raise ValueError(f"a table of {self.n_levels} levels for a ruleset of {levels(self.rules)}")

    @property
    def final(self) -> FinalTurn:
        return final_turn(self.rules)

    def level(self, points: int, what: str = "points") -> int:
        if (
            isinstance(points, bool)
            or not isinstance(points, (int, np.integer))
            or points < 0
            or points % self.granularity
        ):
            raise ValueError(f"{what} must be a multiple of {self.granularity} and >= 0, got {points!r}")
        return int(points) // self.granularity

    def first_player(self) -> float:
        """The first player's winning chance at the start: both totals 0, neither opened."""
        return float(self.w[0, 0])

    def turn_start(self, mine: int, theirs: int) -> float:
        """The winning chance of the player about to start a turn with `mine` against
        `theirs` (points). `theirs` at or past the target: this is the final turn."""
        view = self.turn(mine, theirs)
        return view.value(0, 6)

    def turn(self, mine: int, theirs: int) -> TurnView:
        """The values of the turn of the player with `mine` against `theirs` (points)."""
        a, b = self.level(mine, "the mover's total"), self.level(theirs, "the other total")
        if a >= self.n_levels:
            raise ValueError(f"the mover's total {mine} is at or past the target {self.rules.target}: the game is over")
        if b >= self.n_levels:
            return TurnView(self, a, b, True)
        return _turn_view(self, a, b)

    def headline(self) -> dict:
        return headline(RaceTable(self.rules, self.w, self.bound))


def _turn_view(race: Race, a: int, b: int) -> TurnView:
    m, ft = race.moves, race.final
    z = 1.0 - float(race.w[b, a])
    top, values, _, rolls = kernel()["turn_values"](
        a, b, z, race.n_levels, race.w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor,
        m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv,
    )  # fmt: skip
    return TurnView(race, a, b, False, int(top), values, rolls, z)


def headline(table: RaceTable) -> dict:
    """What `rules show` prints: the first player's chance at the start, two players."""
    return {
        "first_player": float(table.w[0, 0]),
        "players": 2,
        "model": MODEL_NOTE,
        "fixed_point_bound": table.bound,
        "catch_up_truncation": CATCH_UP_EPS,
    }


def describe_rules(rules: Ruleset) -> str:
    return _describe(rules)


def table_metadata(table: RaceTable) -> dict[str, str]:
    return {
        "rules": table.rules.to_json(),
        "bound": repr(table.bound),
        "fixed_point_tol": repr(FIXED_POINT_TOL),
        "catch_up_eps": repr(CATCH_UP_EPS),
    }


def keep_choices(view: TurnView, p: int, n: int, roll: Sequence[int]) -> list[tuple[tuple[int, ...], float]]:
    """Every legal keep of `roll` (n dice) with p levels before it, and the mover's chance
    after it (then banking or rolling on at best). Best first; on equal chance fewer dice."""
    from pipeline.rules.scoring import counts_to_dice, dice_counts
    from pipeline.rules.table import counts_key, score_table, sub_keys

    g = view.race.granularity
    table = score_table(view.race.rules)
    counts = dice_counts(roll)
    out = []
    for sub in sub_keys()[counts_key(counts)]:
        v = table.value[sub]
        if v is None:
            continue
        kept = counts_to_dice(play.key_counts(sub))
        k = len(kept)
        out.append((kept, view.value(p + v // g, 6 if k == n else n - k)))
    out.sort(key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
    return out


__all__ = ["json"]

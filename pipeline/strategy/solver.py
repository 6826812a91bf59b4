"""The single-turn Farkle solver: the play that maximises the expected points banked this turn.

Model. A state is (turn points p, dice left to roll n, opened). After each
keep the player banks or rolls the n dice on (all six again after hot dice). Banking is worth
p when p reaches the bank floor (`min_bank`, and `opening` too while not opened), else 0; a
farkle is worth 0. Farkle penalties and the race to the target are outside the model: it is a
*single-turn* model, and every figure it gives must say so (`MODEL_NOTE`).

Bellman equations, with B(p) the bank value and R(p, n) the value of rolling n dice:

    V(p, n) = max(B(p), R(p, n))
    R(p, n) = sum over non-farkle rolls r of n dice of P(r) * max over legal keeps K of r of
              V(p + value(K), n - |K|  or 6 when |K| = n)

Points live on the ruleset's grid g (the gcd of every keep value: 50 under standard), so
states are integer levels p = level * g.

Solved exactly up to float rounding by backward induction over levels, from the cap down:
every keep worth > 0 moves to a higher level. Since rules.md made a combination worth 0 no
combination, no keep is worth 0 and no level feeds itself; should one ever (a future
knob), it is solved by value iteration from below, which converges to the optimal value
because all rewards are >= 0 (positive dynamic programming: iterating the Bellman operator
from a lower bound climbs to its least fixed point, the optimal value).

Why the cap is exact, not a truncation. Let f_n be the farkle probability of n dice and, for
p beyond every floor, suppose the player banks at once whenever f_n > 0 (the large-p policy;
if f_6 = 0, which needs three pairs plus partial straights, 6 dice are rolled risk-free and
D6 below is what that adds). Then V(p, n) = p + D_n with D_n = 0 for f_n > 0, and rolling
instead is worth (1 - f_n) p + A_n with

    A_n = sum over non-farkle rolls r of P(r) * max over keeps K of (value(K) + D_next(K)).

So rolling loses exactly when p * f_n > A_n. The cap is put on the grid above every floor and
above max_n A_n / f_n; beyond it the large-p policy is self-consistent, i.e. W(p, n) = p + D_n
solves the Bellman equations there, and it is the value of a policy. In positive dynamic
programming the optimal value is the least non-negative solution, and W is attained, so W is
the optimal value beyond the cap: the states below are then solved exactly by backward
induction, and raising the cap changes nothing (tests check both the inequality and that
solving with twice the cap gives bit-identical figures).

Tolerance: float64 throughout, sums by `math.fsum`. Each level is a probability-weighted
sum (weights summing to at most 1) of values already computed, so rounding errors do not
grow beyond the few ulps each sum adds. A 40-digit decimal solve of standard (`num=` below)
agrees to 2.5e-12 points; the test asserts < 1e-9. Actions are compared with TOL = 1e-7
points; on a tie the policy banks.

State budget. The table follows the ruleset's values: (cap / g + largest keep / g + 1) x 6
entries per bank floor, so a ruleset off the usual grid (values sharing no divisor, g = 1)
or with huge values would take minutes and gigabytes. `Policy` refuses, before allocating
anything, a ruleset needing more than SOLVER_STATE_BUDGET entries, raising SolverBudgetError
(a ValueError); the commands that use the policy then say so in one line and go on without
it. `refusals()` lets a command collect those lines from deep inside a library call.

No I/O and no clock here: `solve(rules)` is pure and cached per ruleset.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, reduce
from math import factorial, fsum, gcd
from operator import itemgetter, mul
from typing import Any, Callable, Iterable, Iterator, Sequence

from pipeline.rules.ruleset import Ruleset
from pipeline.rules.scoring import counts_to_dice, dice_counts
from pipeline.rules.play import bank_floor, key_counts
from pipeline.rules.table import counts_key, score_table, sub_keys
from pipeline.errors import UserError

MODEL_NOTE = (
    "single-turn model: maximises the expected points banked in one turn; "
    "farkle penalties and the race to the target are not modelled"
)
TOL = 1e-7  # points: roll only when it beats banking by more than this
#: Most value-table entries solved for one ruleset (all bank floors together): about 1.5 s of
#: one core of a small machine (bench/solver.py: grid 10, 24,120 entries, 1.1 to 1.3 s; standard,
#: 5,160 entries, 0.15 to 0.26 s). `standard` needs 5,160;
#: a house table whose values are all multiples of 25 about 10,000, of 10 about 24,000. Values
#: that share no divisor (grid 1) or huge single scores (a lone 1 = 100,000) need millions.
SOLVER_STATE_BUDGET = 30_000
BANK, ROLL = "bank", "roll"


def multisets(n: int) -> Iterable[tuple[int, ...]]:
    def rec(face: int, left: int, acc: tuple[int, ...]):
        if face == 5:
            yield acc + (left,)
            return
        for c in range(left, -1, -1):
            yield from rec(face + 1, left - c, acc + (c,))

    yield from rec(0, n, ())


def roll_probability(counts: Sequence[int]) -> Fraction:
    n = sum(counts)
    ways = factorial(n)
    for c in counts:
        ways //= factorial(c)
    return Fraction(ways, 6**n)


@dataclass(frozen=True)
class Roll:
    """A non-farkle roll multiset: its probability and, per number of dice left to roll after
    the keep (hot dice: 6), the best keep value in grid steps. A smaller keep value with the
    same dice left is dominated (more points never hurt), so at most six options remain."""

    prob: Fraction
    options: tuple[tuple[int, int], ...]  # (keep value / granularity, dice left next)


@dataclass(frozen=True)
class Moves:
    """What a roll offers, per ruleset and independent of the turn points."""

    granularity: int
    farkle: tuple[Fraction, ...]  # index n-1: P(a roll of n dice farkles), exact
    rolls: tuple[tuple[Roll, ...], ...]  # index n-1: the non-farkle rolls of n dice
    has_zero_keep: bool
    max_dv: int


@lru_cache(maxsize=32)
def moves(rules: Ruleset) -> Moves:
    table = score_table(rules)
    g = reduce(gcd, (v for v in table.value.values() if v), 0) or 1
    farkle: list[Fraction] = []
    rolls: list[tuple[Roll, ...]] = []
    for n in range(1, 7):
        bust = Fraction(0)
        out: list[Roll] = []
        for counts in multisets(n):
            key = counts_key(counts)
            p = roll_probability(counts)
            if table.farkle[key]:
                bust += p
                continue
            best_by_next: dict[int, int] = {}
            for sub in sub_keys()[key]:
                v = table.value[sub]
                if v is None:
                    continue
                k = sum(key_counts(sub))
                nxt = 6 if k == n else n - k
                if v > best_by_next.get(nxt, -1):
                    best_by_next[nxt] = v
            out.append(Roll(p, tuple((v // g, nxt) for nxt, v in sorted(best_by_next.items()))))
        farkle.append(bust)
        rolls.append(tuple(out))
    dvs = [dv for n_rolls in rolls for r in n_rolls for dv, _ in r.options]
    return Moves(g, tuple(farkle), tuple(rolls), 0 in dvs, max(dvs, default=0))


def large_p_gains(m: Moves) -> tuple[list[float], list[float]]:
    """(D, A) of the module docstring, in points: D[n-1] what the large-p policy adds to p
    from a state with n dice, A[n-1] what rolling n dice adds beyond (1 - f_n) p."""
    g = m.granularity
    d = [0.0] * 6
    for _ in range(100_000):
        a = [
            fsum(float(r.prob) * max(dv * g + d[nxt - 1] for dv, nxt in r.options) for r in m.rolls[n])
            for n in range(6)
        ]
        new = [a[n] if m.farkle[n] == 0 else 0.0 for n in range(6)]
        if max(abs(x - y) for x, y in zip(new, d)) <= 1e-12 * max(1.0, *new):
            return new, a
        d = new
    raise ValueError("risk-free rolling never stops under this ruleset: the turn value is unbounded")


def minimum_cap(rules: Ruleset) -> float:
    """Turn points beyond which the large-p policy (bank unless the roll is risk-free) is
    optimal: above every bank floor and above A_n / f_n for every n with f_n > 0."""
    m = moves(rules)
    _, a = large_p_gains(m)
    bound = float(bank_floor(rules.opening, rules.min_bank, False))
    for n in range(6):
        if m.farkle[n] > 0:
            bound = max(bound, a[n] / float(m.farkle[n]))
    return bound


def default_cap(rules: Ruleset) -> int:
    """The first grid point strictly above `minimum_cap`, plus one grid step of margin."""
    g = moves(rules).granularity
    return (int(minimum_cap(rules) // g) + 2) * g


class SolverBudgetError(UserError, ValueError):
    """The ruleset's turn needs more states than SOLVER_STATE_BUDGET: it is not solved."""


_refusals: ContextVar[list[str] | None] = ContextVar("solver_refusals", default=None)


@contextmanager
def refusals() -> Iterator[list[str]]:
    """Collect, in order and once each, the message of every ruleset the solver refuses
    while the block runs, for a command to print after a library call that carried on
    without the policy (stats, report)."""
    collected: list[str] = []
    token = _refusals.set(collected)
    try:
        yield collected
    finally:
        _refusals.reset(token)


def state_count(rules: Ruleset, cap: int | None = None) -> int:
    """The value-table entries solving `rules` (up to `cap`, default `default_cap`) takes."""
    m = moves(rules)
    cap = default_cap(rules) if cap is None else cap
    floors = len({bank_floor(rules.opening, rules.min_bank, opened) for opened in (False, True)})
    return floors * 6 * (cap // m.granularity + m.max_dv + 1)


def check_budget(rules: Ruleset, cap: int | None = None) -> None:
    """Raise SolverBudgetError if solving `rules` would pass SOLVER_STATE_BUDGET. Cheap: no
    table is built."""
    needed = state_count(rules, cap)
    if needed > SOLVER_STATE_BUDGET:
        g = moves(rules).granularity
        message = (
            f"ruleset {describe(rules)} is not solved: it needs {needed:,} solver states (grid {g}, "
            f"cap {default_cap(rules) if cap is None else cap:,}), over the budget of {SOLVER_STATE_BUDGET:,}"
        )
        collected = _refusals.get()
        if collected is not None and message not in collected:
            collected.append(message)
        raise SolverBudgetError(message)


def describe(rules: Ruleset) -> str:
    """A built-in's name, else the knobs that differ from its base, as compact JSON."""
    from pipeline.rules import BUILTIN_RULESETS

    base = BUILTIN_RULESETS.get(rules.base)
    if base is None or base == rules or rules.name in BUILTIN_RULESETS:
        return rules.name
    mine, theirs = rules.to_dict(), base.to_dict()
    changed = {k: v for k, v in mine.items() if k != "base" and theirs[k] != v}
    return json.dumps({"base": rules.base, **changed}, separators=(",", ":"))


@dataclass
class _Solved:
    floor: int
    bank: list  # [level]: the bank value
    roll: list  # [level * 6 + n - 1]: the roll value


def _solve_floor(m: Moves, floor: int, levels: int, d_inf: Sequence[float], num: Callable[[Any], Any]) -> _Solved:
    """Backward induction over levels for one bank floor. `num` converts exact numbers to
    the arithmetic used (float, or Decimal for the precision test)."""
    g = m.granularity
    zero = num(0)
    total = levels + m.max_dv + 1
    bank = [num(level * g) if level * g >= floor and level > 0 else zero for level in range(total)]
    value = [zero] * (total * 6)  # [level * 6 + n - 1]
    roll = [zero] * (levels * 6)
    for level in range(levels, total):  # beyond the cap: the large-p policy, exact
        for n in range(6):
            value[level * 6 + n] = bank[level] + num(d_inf[n])
    # per dice count: probabilities and one getter per roll reading its options' next values
    # from a window of the value list that starts at the current level
    probs = [[num(r.prob) for r in m.rolls[n]] for n in range(6)]
    getters = [
        [
            itemgetter(*[dv * 6 + nxt - 1 for dv, nxt in r.options] * (2 if len(r.options) == 1 else 1))
            for r in m.rolls[n]
        ]
        for n in range(6)
    ]
    add = fsum if num is float else (lambda xs: sum(xs, zero))
    width = (m.max_dv + 1) * 6

    def sweep(level: int) -> float:
        base = level * 6
        b = bank[level]
        change = 0.0
        window = value[base : base + width]  # a keep worth 0 reads this level as it was
        for n in range(6):
            r = add(map(mul, probs[n], [max(get(window)) for get in getters[n]]))
            v = r if r > b else b
            change = max(change, abs(float(v - value[base + n])))
            roll[base + n] = r
            value[base + n] = v
        return change

    for level in range(levels - 1, -1, -1):
        for n in range(6):
            value[level * 6 + n] = bank[level]
        if not m.has_zero_keep:
            sweep(level)  # every option reads higher levels only
            continue
        # keeps worth 0 read this level too: value iteration from below until it settles
        for _ in range(1_000_000):
            if sweep(level) <= 1e-13 * max(1.0, float(value[level * 6 + 5])):
                break
        else:  # pragma: no cover - each sweep loses at least the farkle probability
            raise ValueError("value iteration did not converge")
    return _Solved(floor, bank[:levels], roll)


class Policy:
    """The solved turn of one ruleset. Points must be on the grid (`granularity`, every keep
    value is a multiple of it); any points >= 0 are accepted: states at or beyond `cap`
    follow the large-p policy, which is exact there (module docstring)."""

    note = MODEL_NOTE

    def __init__(self, rules: Ruleset, cap: int, num: Callable[[Any], Any] = float):
        m = moves(rules)
        g = m.granularity
        check_budget(rules, cap)  # before anything is allocated
        if cap % g or cap <= minimum_cap(rules):
            raise ValueError(
                f"cap {cap} must be a multiple of {g} above {minimum_cap(rules):.1f}, "
                "beyond which the large-p policy is provably optimal"
            )
        self.rules = rules
        self.cap = cap
        self.granularity = g
        self.farkle = tuple(float(f) for f in m.farkle)
        self._moves = m
        self._levels = cap // g
        self._d_inf, self._a_inf = large_p_gains(m)
        floors = {opened: bank_floor(rules.opening, rules.min_bank, opened) for opened in (True, False)}
        solved = {f: _solve_floor(m, f, self._levels, self._d_inf, num) for f in sorted(set(floors.values()))}
        self._by_opened = {opened: solved[f] for opened, f in floors.items()}
        self._thresholds = {(n, opened): self._threshold(n, opened) for n in range(1, 7) for opened in (False, True)}

    # ---- states ----------------------------------------------------------------------
    def _level(self, points: int) -> int:
        if isinstance(points, bool) or not isinstance(points, int) or points < 0 or points % self.granularity:
            raise ValueError(f"turn points must be a multiple of {self.granularity} and >= 0, got {points!r}")
        return points // self.granularity

    @staticmethod
    def _check_dice(dice_left: int) -> None:
        if not 1 <= dice_left <= 6:
            raise ValueError(f"dice left must be 1..6, got {dice_left}")

    def floor(self, opened: bool) -> int:
        """Smallest turn total that may be banked (`min_bank`, and `opening` if not opened)."""
        return self._by_opened[bool(opened)].floor

    def bank_value(self, points: int, dice_left: int, opened: bool) -> float:
        """What banking now is worth: the points if they reach the floor, else 0."""
        self._check_dice(dice_left)
        self._level(points)
        return float(points) if points > 0 and points >= self.floor(opened) else 0.0

    def roll_value(self, points: int, dice_left: int, opened: bool) -> float:
        """Expected banked points from rolling `dice_left` dice now and playing on optimally."""
        self._check_dice(dice_left)
        level = self._level(points)
        if level < self._levels:
            return float(self._by_opened[bool(opened)].roll[level * 6 + dice_left - 1])
        return (1.0 - self.farkle[dice_left - 1]) * points + self._a_inf[dice_left - 1]

    def tail_gain(self, dice_left: int) -> float:
        """A_n: at or above the cap, rolling `dice_left` dice is worth
        (1 - farkle[n-1]) * points + A_n (banking: the points). For SQL joins (pipeline.strategy.judge)."""
        self._check_dice(dice_left)
        return float(self._a_inf[dice_left - 1])

    def value(self, points: int, dice_left: int, opened: bool) -> float:
        """V(points, dice_left): the better of banking and rolling on."""
        return max(self.bank_value(points, dice_left, opened), self.roll_value(points, dice_left, opened))

    def best_action(self, points: int, dice_left: int, opened: bool) -> str:
        """ "roll" when rolling beats banking by more than TOL, else "bank"."""
        bank = self.bank_value(points, dice_left, opened)
        return ROLL if self.roll_value(points, dice_left, opened) > bank + TOL else BANK

    def action_loss(self, points: int, dice_left: int, opened: bool, action: str) -> float:
        """Expected points given up by `action` ("bank" or "roll") against the better one."""
        if action not in (BANK, ROLL):
            raise ValueError(f"action must be 'bank' or 'roll', got {action!r}")
        bank = self.bank_value(points, dice_left, opened)
        roll = self.roll_value(points, dice_left, opened)
        return max(bank, roll) - (bank if action == BANK else roll)

    def turn_value(self, opened: bool) -> float:
        """Expected banked points of a whole turn: six dice, no points yet."""
        return self.roll_value(0, 6, opened)

    def bank_threshold(self, dice_left: int, opened: bool) -> int | None:
        """Smallest turn points from which banking is best at every higher total on the grid,
        with `dice_left` dice to roll; None if never (rolls that cannot farkle)."""
        self._check_dice(dice_left)
        return self._thresholds[(dice_left, bool(opened))]

    def _threshold(self, dice_left: int, opened: bool) -> int | None:
        if self.farkle[dice_left - 1] == 0:
            return None
        s = self._by_opened[opened]
        for level in range(self._levels - 1, -1, -1):
            if float(s.roll[level * 6 + dice_left - 1]) > float(s.bank[level]) + TOL:
                return (level + 1) * self.granularity
        return 0

    # ---- keeps -----------------------------------------------------------------------
    def keep_values(self, points: int, roll: Iterable[int], opened: bool) -> list[tuple[tuple[int, ...], float]]:
        """Every legal keep of `roll` (dice faces) with `points` already in the turn, and the
        expected banked points after it (then banking or rolling on, whichever is better).
        Best first; on equal value fewer dice first. Empty for a farkle."""
        self._level(points)
        counts = dice_counts(roll)
        n = sum(counts)
        self._check_dice(n)
        table = score_table(self.rules)
        out = []
        for sub in sub_keys()[counts_key(counts)]:
            v = table.value[sub]
            if v is None:
                continue
            kept = counts_to_dice(key_counts(sub))
            k = len(kept)
            out.append((kept, self.value(points + v, 6 if k == n else n - k, opened)))
        out.sort(key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
        return out

    def best_keep(self, points: int, roll: Iterable[int], opened: bool) -> tuple[tuple[int, ...], float] | None:
        """The keep `keep_values` puts first; None for a farkle."""
        values = self.keep_values(points, roll, opened)
        return values[0] if values else None

    def keep_loss(self, points: int, roll: Iterable[int], kept: Iterable[int], opened: bool) -> float:
        """Expected points given up by keeping `kept` from `roll` instead of the best keep."""
        roll = tuple(roll)
        values = self.keep_values(points, roll, opened)
        want = tuple(sorted(kept))
        for dice, value in values:
            if dice == want:
                return values[0][1] - value
        raise ValueError(f"{list(want)} is not a legal keep of {sorted(roll)}")

    # ---- summaries -------------------------------------------------------------------
    def headline(self) -> dict:
        """The figures `rules show` prints: expected turn values and bank thresholds."""
        return {
            "model": MODEL_NOTE,
            "expected_turn_value": {"not_opened": self.turn_value(False), "opened": self.turn_value(True)},
            "bank_threshold": {
                state: {str(n): self.bank_threshold(n, opened) for n in range(1, 7)}
                for state, opened in (("not_opened", False), ("opened", True))
            },
            "granularity": self.granularity,
            "cap": self.cap,
        }

    def states(self, opened: bool) -> tuple[list[int], list[float], list[list[float]]]:
        """Below the cap: points on the grid, bank value per points, roll value per points
        and dice left (index n-1). For exports."""
        s = self._by_opened[bool(opened)]
        points = [level * self.granularity for level in range(self._levels)]
        bank = [float(b) for b in s.bank]
        roll = [[float(s.roll[level * 6 + n]) for n in range(6)] for level in range(self._levels)]
        return points, bank, roll

    def to_arrow(self):
        from pipeline.strategy.export import policy_table

        return policy_table(self)

    def to_polars(self):
        import polars as pl

        return pl.from_arrow(self.to_arrow())


def solve_uncached(rules: Ruleset, cap: int | None = None, *, num: Callable[[Any], Any] = float) -> Policy:
    """Solve the turn of `rules`; cap: `default_cap`, or any larger grid point (same figures)."""
    return Policy(rules, default_cap(rules) if cap is None else cap, num)


@lru_cache(maxsize=16)
def solve(rules: Ruleset, cap: int | None = None) -> Policy:
    """`solve_uncached`, cached per ruleset (and cap)."""
    return solve_uncached(rules, cap)

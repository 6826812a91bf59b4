"""Scoring a keep: the best way to split kept dice into the combinations of a ruleset.

Dice are handled as face counts (c1..c6) because a keep is a multiset: order never
matters and two keeps with the same counts are the same keep. The search is exact and
memoised per ruleset; it works for up to MAX_SCORED_DICE dice, because the auditor scores
the union of dice kept over several rolls when it checks for cross-roll melds. Bulk callers
should use `pipeline.rules.table` instead, which precomputes every keep of up to six dice.

Two ways to one answer. Up to SMALL_DICE dice, the search recurses on the lowest face still
to cover, one combination at a time (the reference). Past it, the same recursion is
evaluated bottom-up over every sub-multiset at once (`_Dense`: numpy, one array operation
per face count and combination), because the recursion's states are the sub-multisets of
the dice, about (n/6 + 1) ** 6 of them: 4.8 million for 72 mixed dice, far too many one
Python call at a time. Both take the first best combination in the same order, so they
give the same value and the same split (tests/test_rules_scoring_dense.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations, product
from typing import Any, Iterable, Sequence

from pipeline.rules.ruleset import Ruleset

Counts = tuple[int, int, int, int, int, int]
FACES = (1, 2, 3, 4, 5, 6)
#: The most dice scored at once: the union of the 12 keeps the cross-roll meld check looks
#: at (pipeline.replay.melds.MAX_KEEPS_SEARCHED), six dice each. More is refused (ValueError):
#: no keep or union is that large, and the search grows with the dice.
MAX_SCORED_DICE = 72
#: Up to this many dice the recursion answers directly; past it, `_Dense`.
SMALL_DICE = 12
_WORDS = {1: "single", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


@dataclass(frozen=True)
class Meld:
    """One combination inside a split: which dice it uses, its name and its points."""

    counts: Counts
    label: str
    points: int

    def __str__(self) -> str:
        return f"{self.label} {self.points}"


@dataclass(frozen=True)
class Keep:
    """A scored keep: the dice (sorted), the total, and the melds of the best split."""

    dice: tuple[int, ...]
    points: int
    melds: tuple[Meld, ...]

    @property
    def breakdown(self) -> str:
        return format_breakdown(self.melds)


def format_breakdown(melds: Iterable[Meld]) -> str:
    """`three 1s 1000 + single 5 50`: biggest combination first, as a person would say it."""
    return " + ".join(str(m) for m in sorted(melds, key=lambda m: (-m.points, m.label)))


def dice_counts(dice: Iterable[int]) -> Counts:
    counts = [0, 0, 0, 0, 0, 0]
    for die in dice:
        if not (isinstance(die, int) and not isinstance(die, bool) and 1 <= die <= 6):
            raise ValueError(f"a die must be an integer 1..6, got {die!r}")
        counts[die - 1] += 1
    return tuple(counts)  # type: ignore[return-value]


def counts_to_dice(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(face for face, n in zip(FACES, counts) for _ in range(n))


def _one(face: int, n: int) -> Counts:
    counts = [0] * 6
    counts[face - 1] = n
    return tuple(counts)  # type: ignore[return-value]


def _plural(face: int, n: int) -> str:
    return f"{_WORDS[n]} {face}s" if n > 1 else f"single {face}"


@lru_cache(maxsize=64)
def melds_of(rules: Ruleset) -> tuple[Meld, ...]:
    """Every combination the ruleset scores, with the dice it uses.

    A combination worth 0 points is not a combination (rules.md, "Values"): left out here,
    the dice only it could use score nothing, so a roll of nothing else is a farkle and a
    keep of them is not legal. Everything downstream (the table, odds, solver, simulator,
    replay) reads this list, so the rule holds everywhere at once.
    """
    return tuple(meld for meld in _candidate_melds(rules) if meld.points)


def _candidate_melds(rules: Ruleset) -> list[Meld]:
    """Every combination the knobs name, whatever its value (None: not a combination)."""
    melds: list[Meld] = []
    if rules.single_one is not None:
        melds.append(Meld(_one(1, 1), "single 1", rules.single_one))
    if rules.single_five is not None:
        melds.append(Meld(_one(5, 1), "single 5", rules.single_five))
    for face in FACES:
        for n in (3, 4, 5, 6):
            value = rules.kind_value(face, n)
            if value is not None:
                melds.append(Meld(_one(face, n), _plural(face, n), value))
    if rules.straight is not None:
        melds.append(Meld((1, 1, 1, 1, 1, 1), "straight", rules.straight))
    for faces, value in rules.partial_straights or ():
        counts = [0] * 6
        for ch in faces:
            counts[int(ch) - 1] = 1
        melds.append(Meld(tuple(counts), f"partial straight {faces}", value))  # type: ignore[arg-type]
    if rules.three_pairs is not None:
        for trio in combinations(FACES, 3):
            counts = [0] * 6
            for face in trio:
                counts[face - 1] = 2
            label = "three pairs (" + ",".join(map(str, trio)) + ")"
            melds.append(Meld(tuple(counts), label, rules.three_pairs))  # type: ignore[arg-type]
    if rules.four_kind_plus_pair is not None:
        for four, pair in permutations(FACES, 2):
            counts = [0] * 6
            counts[four - 1] = 4
            counts[pair - 1] = 2
            melds.append(
                Meld(tuple(counts), f"four {four}s + pair of {pair}s", rules.four_kind_plus_pair)  # type: ignore[arg-type]
            )
    if rules.two_triplets is not None:
        for a, b in combinations(FACES, 2):
            counts = [0] * 6
            counts[a - 1] = 3
            counts[b - 1] = 3
            melds.append(Meld(tuple(counts), f"two triplets ({a}s,{b}s)", rules.two_triplets))  # type: ignore[arg-type]
    return melds


@lru_cache(maxsize=64)
def _melds_by_lowest_face(rules: Ruleset) -> dict[int, tuple[Meld, ...]]:
    """Melds grouped by the lowest face they use: the search covers the lowest face first."""
    grouped: dict[int, list[Meld]] = {i: [] for i in range(6)}
    for meld in melds_of(rules):
        lowest = next(i for i, n in enumerate(meld.counts) if n)
        grouped[lowest].append(meld)
    return {i: tuple(ms) for i, ms in grouped.items()}


def _allowed(meld: Meld, counts: Counts, split_kinds: bool) -> bool:
    """Without split_kinds, three or more equal dice must go into one set (six, then the rest)."""
    for need, have in zip(meld.counts, counts):
        if need > have:
            return False
        if not split_kinds and need and have >= 3 and need != min(have, 6):
            return False
    return True


def best_split(counts: Counts, rules: Ruleset) -> tuple[int, tuple[Meld, ...]] | None:
    """The highest-scoring split that uses every die, or None when no split uses them all."""
    return best_split_counts(tuple(counts), rules)  # type: ignore[arg-type]  # six counts


def _check_size(counts: Counts) -> None:
    if sum(counts) > MAX_SCORED_DICE:
        raise ValueError(f"at most {MAX_SCORED_DICE} dice can be scored at once, got {sum(counts)}")


def best_split_counts(counts: Counts, rules: Ruleset) -> tuple[int, tuple[Meld, ...]] | None:
    """`best_split` of face counts given as a tuple (memoised on it): the replay's own call."""
    if sum(counts) <= SMALL_DICE:
        return _split_small(counts, rules)
    _check_size(counts)
    return _dense(counts, rules).split(counts)


@lru_cache(maxsize=200_000)
def _split_small(counts: Counts, rules: Ruleset) -> tuple[int, tuple[Meld, ...]] | None:
    """The reference search: the first best combination covering the lowest face, recursively."""
    lowest = next((i for i, n in enumerate(counts) if n), None)
    if lowest is None:
        return 0, ()
    best: tuple[int, tuple[Meld, ...]] | None = None
    for meld in _melds_by_lowest_face(rules)[lowest]:
        if not _allowed(meld, counts, rules.split_kinds):
            continue
        rest = tuple(h - n for h, n in zip(counts, meld.counts))
        sub = _split_small(rest, rules)
        if sub is None:
            continue
        total = meld.points + sub[0]
        if best is None or total > best[0]:
            best = (total, (meld,) + sub[1])
    return best


def clear_caches() -> None:
    """Forget every memoised search (benchmarks measure a cold search)."""
    _split_small.cache_clear()
    best_keep_counts.cache_clear()
    _dense_tables.clear()


def score_keep(dice: Iterable[int], rules: Ruleset) -> int | None:
    """Value of a keep when every kept die must score; None when no split uses them all."""
    found = best_split_counts(dice_counts(dice), rules)
    return None if found is None else found[0]


def keep_of(dice: Iterable[int], rules: Ruleset) -> Keep | None:
    counts = dice_counts(dice)
    found = best_split_counts(counts, rules)
    if found is None:
        return None
    return Keep(counts_to_dice(counts), found[0], found[1])


def _sub_counts(counts: Counts) -> Iterable[Counts]:
    for sub in product(*(range(n + 1) for n in counts)):
        if any(sub):
            yield sub  # type: ignore[misc]


@lru_cache(maxsize=20_000)
def best_keep_counts(counts: Counts, rules: Ruleset) -> tuple[Counts, int, tuple[Meld, ...]] | None:
    """(kept counts, value, melds) of the best legal keep of counts taken as a roll, None for a farkle."""
    if sum(counts) > SMALL_DICE:
        _check_size(counts)
        return _dense(counts, rules).best_keep(counts)
    best: tuple[Counts, int, tuple[Meld, ...]] | None = None
    for sub in _sub_counts(counts):
        found = best_split_counts(sub, rules)
        if found is None:
            continue
        # Highest value; on a tie the keep that leaves more dice to roll.
        if best is None or found[0] > best[1] or (found[0] == best[1] and sum(sub) < sum(best[0])):
            best = (sub, found[0], found[1])
    return best


def best_keep(roll: Iterable[int], rules: Ruleset) -> Keep | None:
    """The highest-value legal keep of a roll (fewest dice on a tie); None for a farkle."""
    found = best_keep_counts(dice_counts(roll), rules)
    if found is None:
        return None
    return Keep(counts_to_dice(found[0]), found[1], found[2])


def is_farkle(roll: Iterable[int], rules: Ruleset | None = None) -> bool:
    """True when no die or combination of the roll scores."""
    from pipeline.rules.ruleset import STANDARD

    return best_keep_counts(dice_counts(roll), rules or STANDARD) is None


def scoring_dice(roll: Iterable[int], rules: Ruleset) -> tuple[int, ...]:
    """The dice of a roll that can be part of some scoring keep (the rest score nothing)."""
    counts = dice_counts(roll)
    if sum(counts) > SMALL_DICE:
        _check_size(counts)
        return counts_to_dice(_dense(counts, rules).usable(counts))
    usable = [0] * 6
    for sub in _sub_counts(counts):
        if best_split_counts(sub, rules) is not None:
            usable = [max(u, s) for u, s in zip(usable, sub)]
    return counts_to_dice(usable)


def corrected_keep_value(dice: Iterable[int], rules: Ruleset) -> int:
    """What kept dice are really worth: every die if a split uses them all, else the best
    split of those that can score, the rest worth 0 (log-format.md, Corrected scores)."""
    counts = dice_counts(dice)
    found = best_split_counts(counts, rules)
    if found is not None:
        return found[0]
    best = best_keep_counts(counts, rules)
    return 0 if best is None else best[1]


# ---- many dice: the recursion evaluated bottom-up -------------------------------------------
# The value of a sub-multiset that no split covers. Every real value is >= 0, and this stays
# far below 0 with any points added (at most 72 combinations of at most 8 x 100,000 each).
_NONE = -(1 << 30)


class _Dense:
    """`_split_small`'s recursion for every sub-multiset of `box` at once.

    `value[c]` is the best split's value of face counts c (or _NONE), `choice[c]` the index
    (+1) in `_melds_by_lowest_face(rules)[lowest face of c]` of the combination it starts
    with. States are filled face by face from the highest: those whose lowest face is f,
    by increasing count of f, each from states already filled (a combination takes at least
    one die of its lowest face). For one count of f and one combination, every count of the
    higher faces is one shifted array slice, so the work is (combinations x counts of f)
    numpy operations, not a Python call per state. Combinations are tried in the recursion's
    order and a later one replaces an earlier only when strictly better: the same choice."""

    def __init__(self, box: Counts, rules: Ruleset):
        import numpy as np

        self.box = box
        self.rules = rules
        self.groups = _melds_by_lowest_face(rules)
        shape = tuple(n + 1 for n in box)
        value = np.full(shape, _NONE, np.int32)
        choice = np.zeros(shape, np.int16)
        value[(0,) * 6] = 0
        for f in range(5, -1, -1):
            zeros: tuple[Any, ...] = (0,) * f
            higher = box[f + 1 :]
            for have in range(1, box[f] + 1):
                target_value = value[zeros + (have, ...)]  # a view, also when no face is higher
                target_choice = choice[zeros + (have, ...)]
                for meld_index, meld in enumerate(self.groups[f], start=1):
                    need = meld.counts[f]
                    if need > have or (not rules.split_kinds and have >= 3 and need != min(have, 6)):
                        continue
                    rest_need = meld.counts[f + 1 :]
                    if any(n > h for n, h in zip(rest_need, higher)):
                        continue
                    source = value[zeros + (have - need, ...)][
                        tuple(slice(0, h + 1 - n) for n, h in zip(rest_need, higher))
                    ]
                    into: tuple[Any, ...] = tuple(slice(n, None) for n in rest_need) + (
                        ...,
                    )  # (...,): a view, never a scalar
                    # an uncovered source stays far below 0 with the points added: no test needed
                    candidate = source + meld.points
                    better = candidate > target_value[into]
                    mask = _allowed_mask(np, rest_need, higher, rules.split_kinds)
                    if mask is not None:
                        better &= mask
                    np.copyto(target_value[into], candidate, where=better)
                    np.copyto(target_choice[into], meld_index, where=better)
        self.value = value
        self.choice = choice

    def covers(self, counts: Counts) -> bool:
        return all(c <= b for c, b in zip(counts, self.box))

    def split(self, counts: Counts) -> tuple[int, tuple[Meld, ...]] | None:
        total = int(self.value[counts])
        if total < 0:
            return None
        melds = []
        state = list(counts)
        while any(state):
            lowest = next(i for i, n in enumerate(state) if n)
            meld = self.groups[lowest][int(self.choice[tuple(state)]) - 1]
            melds.append(meld)
            state = [h - n for h, n in zip(state, meld.counts)]
        return total, tuple(melds)

    def _subs(self, counts: Counts):
        """The values of every sub-multiset of `counts` (a view), and each one's dice."""
        import numpy as np

        values = self.value[tuple(slice(0, c + 1) for c in counts)]
        dice = sum(np.arange(c + 1).reshape([-1 if i == j else 1 for j in range(6)]) for i, c in enumerate(counts))
        return values, np.broadcast_to(dice, values.shape)

    def best_keep(self, counts: Counts) -> tuple[Counts, int, tuple[Meld, ...]] | None:
        """`best_keep_counts`: the highest value, then the fewest dice, then the first in
        the order of `_sub_counts` (face counts ascending, the last face fastest)."""
        import numpy as np

        values, dice = self._subs(counts)
        scores = values >= 0
        scores[(0,) * 6] = False  # the empty keep is no keep
        if not scores.any():
            return None
        top = values[scores].max()
        best = scores & (values == top)
        fewest = dice[best].min()
        best &= dice == fewest
        sub = tuple(int(i) for i in np.unravel_index(int(np.argmax(best)), values.shape))
        found = self.split(sub)  # type: ignore[arg-type]
        assert found is not None
        return sub, found[0], found[1]  # type: ignore[return-value]

    def usable(self, counts: Counts) -> list[int]:
        """Per face, the most dice of it in any sub-multiset that splits."""
        values, _ = self._subs(counts)
        scores = values >= 0
        out = []
        for face in range(6):
            other = tuple(i for i in range(6) if i != face)
            present = scores.any(axis=other)
            out.append(int(present.nonzero()[0].max()) if present.any() else 0)
        return out


def _allowed_mask(np, need: Sequence[int], have_max: Sequence[int], split_kinds: bool):
    """`_allowed`'s rule for the higher faces, over every count of them the slice covers
    (counts from `need` up): None where every count is allowed."""
    if split_kinds:
        return None
    mask = None
    for axis, (n, top) in enumerate(zip(need, have_max)):
        if not n:
            continue
        have = np.arange(n, top + 1)
        ok = (have < 3) | (n == np.minimum(have, 6))
        if ok.all():
            continue
        shape = [1] * len(need)
        shape[axis] = len(have)
        ok = ok.reshape(shape)
        mask = ok if mask is None else mask & ok
    return mask


_DENSE_KEPT = 4  # tables kept (each up to 4.8 million states, 43 MB, for 72 mixed dice)
_dense_tables: list[_Dense] = []


def _dense(counts: Counts, rules: Ruleset) -> _Dense:
    """A table covering `counts` under `rules`: one made for a larger box serves too (its
    states do not depend on the box), so the union checks of one turn share a table."""
    for i, table in enumerate(_dense_tables):
        if table.rules == rules and table.covers(counts):
            _dense_tables.insert(0, _dense_tables.pop(i))
            return table
    table = _Dense(counts, rules)
    _dense_tables.insert(0, table)
    del _dense_tables[_DENSE_KEPT:]
    return table

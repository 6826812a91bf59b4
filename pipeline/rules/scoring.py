"""Scoring a keep: the best way to split kept dice into the combinations of a ruleset.

Dice are handled as face counts (c1..c6) because a keep is a multiset: order never
matters and two keeps with the same counts are the same keep. The search is exact and
memoised per ruleset; it works for any number of dice, because the auditor scores the
union of dice kept over several rolls when it checks for cross-roll melds. Bulk callers
should use `pipeline.rules.table` instead, which precomputes every keep of up to six dice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations, product
from typing import Iterable, Sequence

from pipeline.rules.ruleset import Ruleset

Counts = tuple[int, int, int, int, int, int]
FACES = (1, 2, 3, 4, 5, 6)
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
    return best_split_counts(tuple(counts), rules)


@lru_cache(maxsize=200_000)
def best_split_counts(counts: Counts, rules: Ruleset) -> tuple[int, tuple[Meld, ...]] | None:
    """`best_split` of face counts given as a tuple (memoised on it): the replay's own call."""
    lowest = next((i for i, n in enumerate(counts) if n), None)
    if lowest is None:
        return 0, ()
    best: tuple[int, tuple[Meld, ...]] | None = None
    for meld in _melds_by_lowest_face(rules)[lowest]:
        if not _allowed(meld, counts, rules.split_kinds):
            continue
        rest = tuple(h - n for h, n in zip(counts, meld.counts))
        sub = best_split_counts(rest, rules)
        if sub is None:
            continue
        total = meld.points + sub[0]
        if best is None or total > best[0]:
            best = (total, (meld,) + sub[1])
    return best


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

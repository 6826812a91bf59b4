"""Cross-roll melds: a claim that only adds up if dice of different rolls were one combination.

A tired scorekeeper who keeps a 5, then two more 5s, and writes "three 5s = 500" has made
the most common Farkle scoring mistake. log-format.md defines exactly when a wrong claim
is such a meld (rather than a plain scoring error); these functions implement that
definition and nothing else, so the engine can ask one question and get the evidence back.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from pipeline.rules import Ruleset
from pipeline.rules.scoring import Counts, best_keep_counts, best_split_counts, format_breakdown

# A turn with more keeps than this is only searched over its most recent keeps: the
# search is exponential and real turns seldom keep more than a dozen times.
MAX_KEEPS_SEARCHED = 12


@dataclass(slots=True)
class KeptDice:
    """A keep already replayed in this turn: its dice, what was claimed, what it is worth."""

    seq: int
    dice: tuple[int, ...]
    key: int  # counts_key of the dice
    claimed: int
    value: int  # value(X) of log-format.md: best split of all dice, else of those that can score
    roll_index: int  # which roll of the turn it came from (1-based)

    @property
    def counts(self) -> Counts:
        return tuple(map(self.dice.count, (1, 2, 3, 4, 5, 6)))  # type: ignore[return-value]


@dataclass(frozen=True)
class MeldEvidence:
    keeps: tuple[KeptDice, ...]  # the earlier keeps (keep check) or the melded keeps (bank check)
    union_value: int
    breakdown: str


def value_of(counts: Counts, rules: Ruleset) -> tuple[int, str]:
    """value(X) of log-format.md for any multiset, also of more than six dice: the best
    split using every die where one exists, else the best split of the dice that can score."""
    found = best_split_counts(counts, rules)
    if found is not None:
        return found[0], format_breakdown(found[1])
    best = best_keep_counts(counts, rules)
    if best is None:
        return 0, "nothing scores"
    return best[1], format_breakdown(best[2])


def union_value(parts: Sequence[Counts], rules: Ruleset) -> tuple[int, str]:
    counts = tuple(sum(c[i] for c in parts) for i in range(6))
    return value_of(counts, rules)  # type: ignore[arg-type]


def keep_meld(
    counts: Counts, value: int, claimed: int, earlier: Sequence[KeptDice], rules: Ruleset
) -> MeldEvidence | None:
    """For a keep whose claim is wrong: is it value(S ∪ keep) or value(S ∪ keep) − claimed(S)
    for some non-empty set S of earlier keeps, where together they are worth more than apart?"""
    candidates = list(earlier)[-MAX_KEEPS_SEARCHED:]
    for size in range(1, len(candidates) + 1):
        for subset in combinations(candidates, size):
            together = union_value([counts] + [k.counts for k in subset], rules)
            apart = value + sum(k.value for k in subset)
            if together[0] <= apart:
                continue
            if claimed in (together[0], together[0] - sum(k.claimed for k in subset)):
                return MeldEvidence(subset, together[0], together[1])
    return None


def bank_meld(claimed: int, keeps: Sequence[KeptDice], rules: Ruleset) -> MeldEvidence | None:
    """For a bank whose claim is wrong: is it value(∪S) + Σ claimed(keeps outside S) for some
    set S of two or more keeps of the turn worth more together than apart?"""
    candidates = list(keeps)[-MAX_KEEPS_SEARCHED:]
    total_claimed = sum(k.claimed for k in keeps)
    for size in range(2, len(candidates) + 1):
        for subset in combinations(candidates, size):
            together = union_value([k.counts for k in subset], rules)
            if together[0] <= sum(k.value for k in subset):
                continue
            outside = total_claimed - sum(k.claimed for k in subset)
            if claimed == together[0] + outside:
                return MeldEvidence(subset, together[0], together[1])
    return None

"""Scoring many dice: the bottom-up evaluation (`scoring._Dense`) against the recursion.

The recursion (`scoring._split_small`) is the reference: the first best combination of the
lowest face, recursively. Past SMALL_DICE dice the public functions evaluate the same
recursion over every sub-multiset at once; these tests hold the two equal state for state
(value and split), for the best keep of a roll and for the dice that can score, under
rulesets that exercise every kind of combination and both settings of `split_kinds`.
"""

from __future__ import annotations

import random
from itertools import product

import pytest

from pipeline.rules import Ruleset, best_keep, keep_of, scoring_dice
from pipeline.rules import scoring
from pipeline.replay.melds import MAX_KEEPS_SEARCHED

RULESETS = {
    "standard": Ruleset.builtin("standard"),
    "playmonster": Ruleset.builtin("playmonster"),
    "unsplit": Ruleset.from_value({"base": "standard", "split_kinds": False}),
    "partials": Ruleset.from_value(
        {
            "base": "standard",
            "split_kinds": False,
            "four_kind_plus_pair": None,
            "single_five": 0,
            "two_triplets": 900,
            "partial_straights": {"12345": 700, "2345": 300},
        }
    ),
    "doubling": Ruleset.from_value({"base": "playmonster", "split_kinds": False}),
}


def reference_keep(counts, rules):
    """best_keep_counts by enumerating every sub-multiset through the recursion."""
    best = None
    for sub in scoring._sub_counts(counts):
        found = scoring._split_small(sub, rules)
        if found is None:
            continue
        if best is None or found[0] > best[1] or (found[0] == best[1] and sum(sub) < sum(best[0])):
            best = (sub, found[0], found[1])
    return best


def reference_usable(counts, rules):
    usable = [0] * 6
    for sub in scoring._sub_counts(counts):
        if scoring._split_small(sub, rules) is not None:
            usable = [max(u, s) for u, s in zip(usable, sub)]
    return usable


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_dense_split_equals_the_recursion_for_every_sub_multiset(name):
    rules = RULESETS[name]
    box = (3, 3, 2, 3, 3, 2) if name != "standard" else (3, 3, 3, 3, 3, 3)
    table = scoring._Dense(box, rules)
    for counts in product(*(range(n + 1) for n in box)):
        assert table.split(counts) == scoring._split_small(counts, rules), counts


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_dense_best_keep_and_usable_dice_equal_the_enumeration(name):
    rules = RULESETS[name]
    rng = random.Random(name)
    for _ in range(12):
        counts = tuple(rng.randint(0, 4) for _ in range(6))
        table = scoring._Dense(counts, rules)
        assert table.best_keep(counts) == reference_keep(counts, rules), counts
        assert table.usable(counts) == reference_usable(counts, rules), counts


def test_a_table_made_for_a_larger_box_answers_for_the_smaller_ones():
    rules = RULESETS["unsplit"]
    big = scoring._Dense((4, 4, 4, 4, 4, 4), rules)
    for counts in [(1, 2, 0, 4, 3, 3), (4, 0, 0, 0, 0, 4), (2, 2, 2, 2, 2, 2)]:
        assert big.split(counts) == scoring._Dense(counts, rules).split(counts)
        assert big.best_keep(counts) == scoring._Dense(counts, rules).best_keep(counts)


@pytest.mark.parametrize("name", ["standard", "unsplit"])
def test_public_functions_past_the_small_limit_agree_with_the_reference(name):
    """13 to 18 dice: the public calls take the dense path; the reference is still feasible."""
    rules = RULESETS[name]
    rng = random.Random(7)
    for _ in range(6):
        dice = [rng.randint(1, 6) for _ in range(rng.randint(scoring.SMALL_DICE + 1, 18))]
        counts = scoring.dice_counts(dice)
        found = scoring._split_small(counts, rules)
        keep = keep_of(dice, rules)
        assert (keep.points, keep.melds) == found if found else keep is None
        best = reference_keep(counts, rules)
        got = best_keep(dice, rules)
        assert (scoring.dice_counts(got.dice), got.points, got.melds) == best
        assert scoring.dice_counts(scoring_dice(dice, rules)) == tuple(reference_usable(counts, rules))


def test_seventy_two_mixed_dice_never_take_the_recursion_state_by_state():
    """The union of twelve six-dice keeps is the largest the replay scores. The recursion
    would visit every sub-multiset in Python (4.8 million for twelve of each face; 25 s);
    the dense path visits none of them one at a time, and its answer holds up: the best
    split of twelve of each face is twelve straights or better, and a keep never beats it."""
    rules = RULESETS["standard"]
    scoring._split_small.cache_clear()
    scoring.best_keep_counts.cache_clear()
    counts = (12, 12, 12, 12, 12, 12)
    dice = scoring.counts_to_dice(counts)
    keep = keep_of(dice, rules)
    best = best_keep(dice, rules)
    usable = scoring_dice(dice, rules)
    assert scoring._split_small.cache_info().currsize < 1_000
    assert keep is not None and keep.points >= 12 * rules.straight
    assert sum(m.counts[i] for m in keep.melds for i in range(6)) == 72
    assert sum(m.points for m in keep.melds) == keep.points
    assert best is not None and best.points == keep.points and len(best.dice) == 72
    assert usable == dice


def test_more_dice_than_a_union_can_hold_are_refused():
    assert MAX_KEEPS_SEARCHED * 6 <= scoring.MAX_SCORED_DICE
    with pytest.raises(ValueError, match="at most 72 dice"):
        keep_of([1] * (scoring.MAX_SCORED_DICE + 1), RULESETS["standard"])

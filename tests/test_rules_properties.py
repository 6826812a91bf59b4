"""Properties the scoring must have whatever the dice, checked with hypothesis.

- dice order never matters (a keep is a multiset);
- the cached per-ruleset table equals the recursive search (`score_keep`, `best_keep`) for
  every one of the 923 multisets of one to six dice;
- adding a die to a roll never lowers its best keep;
- `score_keep` of a union of two scoring keeps is at least the sum of the parts when
  `split_kinds` is on (the union may always be split back into the parts); with it off,
  rules.md itself gives the counter-example 1,1,1 + 1 (1100) vs 1,1,1,1 (1000).
"""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rules import (
    Ruleset,
    best_keep,
    counts_key,
    dice_key,
    is_farkle,
    score_keep,
    score_table,
)

RULES = {
    "standard": Ruleset.from_value("standard"),
    "playmonster": Ruleset.from_value("playmonster"),
    "doubling": Ruleset.from_value({"n_of_a_kind": "doubling"}),
    "linear": Ruleset.from_value({"n_of_a_kind": "linear"}),
    "no split": Ruleset.from_value({"split_kinds": False}),
    "partials": Ruleset.from_value({"partial_straights": {"12345": 500, "23456": 750}}),
    "no two triplets": Ruleset.from_value({"two_triplets": None}),
    "six kind 10000": Ruleset.from_value({"six_kind": 10000}),
}
SPLITTING = {name: r for name, r in RULES.items() if r.split_kinds}

die = st.integers(1, 6)
roll = st.lists(die, min_size=1, max_size=6)
any_rules = st.sampled_from(list(RULES.values()))

FAST = settings(max_examples=150, deadline=None)


@FAST
@given(roll, any_rules, st.randoms(use_true_random=False))
def test_dice_order_never_matters(dice, rules, rnd):
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    assert score_keep(shuffled, rules) == score_keep(dice, rules)
    a, b = best_keep(shuffled, rules), best_keep(dice, rules)
    assert (a and a.points) == (b and b.points)
    assert is_farkle(shuffled, rules) == is_farkle(dice, rules)
    assert dice_key(shuffled) == dice_key(dice)


@FAST
@given(st.lists(die, min_size=1, max_size=12), any_rules, st.randoms(use_true_random=False))
def test_dice_order_never_matters_for_unions(dice, rules, rnd):
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    assert score_keep(shuffled, rules) == score_keep(dice, rules)


ALL_COUNTS = [c for c in product(range(7), repeat=6) if 1 <= sum(c) <= 6]


@pytest.mark.parametrize("name", list(RULES))
def test_table_equals_recursive_search_on_all_923_multisets(name):
    rules = RULES[name]
    table = score_table(rules)
    assert len(ALL_COUNTS) == 923 == len(table)
    for counts in ALL_COUNTS:
        dice = [face for face, n in zip(range(1, 7), counts) for _ in range(n)]
        key = counts_key(counts)
        assert table.value[key] == score_keep(dice, rules), dice
        best = best_keep(dice, rules)
        assert table.best[key] == (0 if best is None else best.points), dice
        assert table.farkle[key] == (best is None), dice


@FAST
@given(st.lists(die, min_size=0, max_size=5), die, any_rules)
def test_adding_a_die_never_lowers_the_best_keep(dice, extra, rules):
    def best_points(d):
        keep = best_keep(d, rules) if d else None
        return 0 if keep is None else keep.points

    assert best_points(dice + [extra]) >= best_points(dice)


@FAST
@given(st.lists(die, min_size=0, max_size=5), st.sampled_from([1, 5]), any_rules)
def test_adding_a_scoring_die_never_farkles_and_never_lowers(dice, extra, rules):
    before = best_keep(dice, rules) if dice else None
    after = best_keep(dice + [extra], rules)
    assert after is not None
    assert after.points >= (0 if before is None else before.points)


def legal_keeps(rules: Ruleset) -> list[str]:
    """Every multiset of one to six dice whose dice all score (drawn from, not asserted on)."""
    return [row.dice for row in score_table(rules).rows if row.value is not None]


@FAST
@given(st.sampled_from(list(SPLITTING.values())), st.data())
def test_union_scores_at_least_the_sum_of_its_parts(rules, data):
    keeps = legal_keeps(rules)
    parts = data.draw(st.lists(st.sampled_from(keeps), min_size=2, max_size=3))
    dice = [[int(ch) for ch in part] for part in parts]
    total = sum(score_keep(d, rules) for d in dice)
    union = score_keep([x for d in dice for x in d], rules)
    assert union is not None and union >= total


def test_union_can_score_less_than_its_parts_without_split_kinds():
    # rules.md: without split_kinds four 1s are one set, 1000, while 1,1,1 and 1 are 1000 + 100
    rules = RULES["no split"]
    assert score_keep([1, 1, 1, 1], rules) < score_keep([1, 1, 1], rules) + score_keep([1], rules)

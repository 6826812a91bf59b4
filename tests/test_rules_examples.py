"""rules.md, sentence by sentence: every worked example, every subtle point, every knob.

Expected values are read off /work/shared/rules.md (or its seeds) and worked out by hand in
the comments; none is copied from the engine's output.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from pipeline.rules import (
    Ruleset,
    best_keep,
    farkle_probability,
    is_farkle,
    keep_of,
    score_keep,
    score_table,
)

STANDARD = Ruleset.from_value("standard")
PLAYMONSTER = Ruleset.from_value("playmonster")


def custom(**knobs) -> Ruleset:
    return Ruleset.from_value({"base": "standard", **knobs})


DOUBLING = custom(n_of_a_kind="doubling")
LINEAR = custom(n_of_a_kind="linear")
NO_SPLIT = custom(split_kinds=False)


# ---- scoring table rows ------------------------------------------------------------------
@pytest.mark.parametrize(
    "dice, common, playmonster",
    [
        ((1,), 100, 100),
        ((5,), 50, 50),
        ((1, 1, 1), 1000, 300),
        ((2, 2, 2), 200, 200),
        ((3, 3, 3), 300, 300),
        ((4, 4, 4), 400, 400),
        ((5, 5, 5), 500, 500),
        ((6, 6, 6), 600, 600),
        ((6, 6, 6, 6), 1000, 1000),
        ((2, 2, 2, 2, 2), 2000, 2000),
        ((3, 3, 3, 3, 3, 3), 3000, 3000),
        ((1, 2, 3, 4, 5, 6), 1500, 1500),
        ((2, 2, 4, 4, 6, 6), 1500, 1500),
        ((3, 3, 3, 3, 6, 6), 1500, 1500),
        ((2, 2, 2, 4, 4, 4), 2500, 2500),
    ],
)
def test_scoring_table_rows(dice, common, playmonster):
    assert score_keep(dice, STANDARD) == common
    assert score_keep(dice, PLAYMONSTER) == playmonster


@pytest.mark.parametrize("face", [2, 3, 4, 6])
def test_two_three_four_six_score_nothing_alone(face):
    assert score_keep([face], STANDARD) is None
    assert score_keep([face, face], STANDARD) is None
    assert is_farkle([face], STANDARD)


# ---- the list ----------------------------------------------------------------------
def test_four_ones_split_kinds_true_is_three_ones_plus_a_single():
    assert score_keep([1, 1, 1, 1], STANDARD) == 1000 + 100


def test_four_ones_without_split_kinds_is_four_of_a_kind():
    assert score_keep([1, 1, 1, 1], NO_SPLIT) == 1000


def test_four_ones_under_doubling_is_twice_the_triple():
    assert score_keep([1, 1, 1, 1], DOUBLING) == 2 * 1000


def test_four_of_a_kind_plus_pair_beats_splitting():
    # 1,1,1,1,5,5: four of a kind + a pair 1500, split up it would be 1000+100+50+50 = 1200
    assert score_keep([1, 1, 1, 1, 5, 5], STANDARD) == 1500
    assert score_keep([5, 1, 5, 1, 1, 1], STANDARD) == 1500


def test_two_pairs_are_not_three_pairs():
    assert is_farkle([2, 2, 3, 3, 4, 6], STANDARD)
    assert best_keep([2, 2, 3, 3, 4, 6], STANDARD) is None
    assert score_keep([2, 2, 3, 3, 4, 6], STANDARD) is None


def test_four_threes_under_doubling():
    assert score_keep([3, 3, 3, 3], DOUBLING) == 600


# ---- worked examples (common table) ----------------------------------------------------------
def test_worked_example_keep_ones_and_five():
    roll = [1, 1, 3, 4, 5, 6]
    assert score_keep([1, 1, 5], STANDARD) == 250
    assert score_keep([1], STANDARD) == 100  # the seed: or keep one 1 and roll five dice
    best = best_keep(roll, STANDARD)
    assert (best.points, sorted(best.dice)) == (250, [1, 1, 5])


def test_worked_example_three_twos_and_a_five_leaves_two_dice():
    roll = [2, 2, 2, 5, 3, 6]
    assert score_keep([2, 2, 2, 5], STANDARD) == 250
    best = best_keep(roll, STANDARD)
    assert best.points == 250 and len(roll) - len(best.dice) == 2


def test_worked_example_four_fours_and_a_one():
    roll = [4, 4, 4, 4, 1, 3]
    assert score_keep([4, 4, 4, 4, 1], STANDARD) == 1100
    best = best_keep(roll, STANDARD)
    assert best.points == 1100 and len(roll) - len(best.dice) == 1


def test_worked_example_three_pairs_is_hot_dice():
    roll = [2, 2, 3, 3, 6, 6]
    assert score_keep(roll, STANDARD) == 1500
    best = best_keep(roll, STANDARD)
    assert best.points == 1500 and len(best.dice) == 6  # all six kept: hot dice


def test_worked_example_three_threes_and_a_one():
    assert score_keep([3, 3, 3, 1], STANDARD) == 400
    assert score_keep([3, 3, 3, 1], PLAYMONSTER) == 400
    best = best_keep([3, 3, 3, 1, 2, 6], PLAYMONSTER)
    assert best.points == 400 and sorted(best.dice) == [1, 3, 3, 3]


def test_playmonster_seed_walkthrough():
    # 1,5,2,3,4,6: the seed keeps 1 and 5 for 150 (keeping fewer is allowed) although the
    # roll is a straight; then 6,6,6,2 -> 600; then a lone 5 -> 50; 800 in all.
    assert score_keep([1, 5], PLAYMONSTER) == 150
    assert best_keep([1, 5, 2, 3, 4, 6], PLAYMONSTER).points == 1500
    assert score_keep([6, 6, 6], PLAYMONSTER) == 600
    assert score_keep([5], PLAYMONSTER) == 50
    # hot-dice reroll 2,2,3,3,4,6: farkle
    assert is_farkle([2, 2, 3, 3, 4, 6], PLAYMONSTER)
    # a lone 2 on one die is a farkle
    assert is_farkle([2], PLAYMONSTER)


def test_combinations_count_only_within_one_roll():
    # 5,5 kept from one roll and 5 from the next: 100 + 50, never three 5s = 500
    per_roll = score_keep([5, 5], STANDARD) + score_keep([5], STANDARD)
    assert per_roll == 150
    assert score_keep([5, 5, 5], STANDARD) == 500  # what a cross-roll meld would claim


# ---- subtle points -----------------------------------------------------------------------------
def test_a_keep_uses_every_kept_die_under_doubling():
    # four 1s alone are 2000 under doubling, but a keep of 1,1,1,1,6,6 must use the 6s: 1500
    assert score_keep([1, 1, 1, 1, 6, 6], DOUBLING) == 1500
    assert best_keep([1, 1, 1, 1, 6, 6], DOUBLING).points == 2000
    assert score_keep([1, 1, 1, 6], STANDARD) is None  # the 6 scores nothing


def test_three_pairs_need_three_different_faces():
    # 2,2,2,2,5,5 is never three pairs, but is four of a kind + a pair
    assert score_keep([2, 2, 2, 2, 5, 5], STANDARD) == 1500
    no_four_pair = custom(four_kind_plus_pair=None, three_pairs=5000)
    assert score_keep([2, 2, 2, 2, 5, 5], no_four_pair) == 1000 + 50 + 50
    # six equal dice are not three pairs or two triplets either
    cheap_six = custom(six_kind=100, three_pairs=5000, two_triplets=5000)
    assert score_keep([2] * 6, cheap_six) == 200 + 200  # two separate triples


def test_four_kind_plus_pair_needs_another_face():
    # 3,3,3,3,3,3 is not four 3s + a pair of 3s
    rules = custom(six_kind=100, four_kind_plus_pair=5000)
    assert score_keep([3] * 6, rules) == 300 + 300


def test_two_triplets_need_different_faces():
    rules = custom(six_kind=0, two_triplets=9000)
    assert score_keep([4] * 6, rules) == 400 + 400


def test_a_die_is_used_in_one_combination_only():
    # 1,1,1 + 1 cannot also count as two triples of 1s or three 1s + three 1s
    assert score_keep([1, 1, 1, 1], STANDARD) == 1100
    # five 5s with four and five of a kind worth 0: three 5s + two singles, nothing reused
    assert score_keep([5, 5, 5, 5, 5], custom(four_kind=0, five_kind=0)) == 500 + 50 + 50
    assert score_keep([5, 5, 5, 5, 5], custom(five_kind=0)) == 1000 + 50  # four 5s + a single


def test_split_kinds_false_more_than_six_is_six_plus_the_rest():
    # eight 2s: six 2s (3000) + two 2s, which score nothing -> not a legal keep
    assert score_keep([2] * 8, NO_SPLIT) is None
    # with split_kinds: five 2s 2000 + three 2s 200
    assert score_keep([2] * 8, STANDARD) == 2200
    # nine 2s: six 2s + three 2s
    assert score_keep([2] * 9, NO_SPLIT) == 3000 + 200
    # seven 5s: six 5s + a single 5
    assert score_keep([5] * 7, NO_SPLIT) == 3000 + 50


def test_split_kinds_false_five_ones_is_one_set():
    assert score_keep([1] * 5, NO_SPLIT) == 2000
    assert score_keep([1] * 5, STANDARD) == 2000  # 1000+100+100 = 1200 is less
    assert score_keep([1] * 5, custom(five_kind=500)) == 1000 + 100 + 100
    assert score_keep([1] * 5, custom(five_kind=500, split_kinds=False)) == 500


def test_split_kinds_false_keeps_four_plus_pair_and_two_triplets():
    assert score_keep([1, 1, 1, 1, 5, 5], NO_SPLIT) == 1500
    assert score_keep([1, 1, 1, 5, 5, 5], NO_SPLIT) == 2500
    assert score_keep([1, 1, 1, 5, 5, 5], custom(split_kinds=False, two_triplets=None)) == 1500


def test_unions_beyond_six_dice_score():
    assert score_keep([1] * 6 + [5] * 3, STANDARD) == 3000 + 500
    assert score_keep([1, 2, 3, 4, 5, 6, 1, 5], STANDARD) == 1500 + 150


# ---- one test per knob ---------------------------------------------------------------------------
def test_knob_single_one():
    assert score_keep([1], custom(single_one=150)) == 150
    assert score_keep([1, 5], custom(single_one=150)) == 200
    off = custom(single_one=0)  # rules.md: worth 0, so not a combination
    assert score_keep([1], off) is None
    assert score_keep([1, 1, 1], off) == 1000  # three 1s still count
    assert farkle_probability(1, off) == Fraction(5, 6)


def test_knob_single_five():
    assert score_keep([5, 5], custom(single_five=75)) == 150
    off = custom(single_five=0)
    assert score_keep([5], off) is None
    assert score_keep([5, 5, 5], off) == 500
    assert farkle_probability(1, off) == Fraction(5, 6)


def test_knob_three_ones():
    assert score_keep([1, 1, 1], custom(three_ones=300)) == 300
    assert score_keep([1, 1, 1, 5], custom(three_ones=300)) == 350
    # other faces stay face x 100
    assert score_keep([4, 4, 4], custom(three_ones=300)) == 400
    # four 1s split: max(four of a kind 1000, 300 + 100)
    assert score_keep([1, 1, 1, 1], custom(three_ones=300)) == 1000
    assert score_keep([1, 1, 1], custom(three_ones=0)) == 300  # three single 1s: a 0 set is no set


@pytest.mark.parametrize(
    "mode, four, five, six",
    [
        # three 3s = 300; flat 1000/2000/3000, doubling 2x/4x/8x, linear 2x/3x/4x
        ("flat", 1000, 2000, 3000),
        ("doubling", 600, 1200, 2400),
        ("linear", 600, 900, 1200),
    ],
)
def test_knob_n_of_a_kind(mode, four, five, six):
    rules = custom(n_of_a_kind=mode)
    assert score_keep([3] * 4, rules) == four
    assert score_keep([3] * 5, rules) == five
    assert score_keep([3] * 6, rules) == six


def test_knob_n_of_a_kind_ones_use_the_ones_triple():
    # three 1s = 1000 (standard) or 300 (playmonster)
    assert [score_keep([1] * n, DOUBLING) for n in (4, 5, 6)] == [2000, 4000, 8000]
    assert [score_keep([1] * n, LINEAR) for n in (4, 5, 6)] == [2000, 3000, 4000]
    pm_doubling = Ruleset.from_value({"base": "playmonster", "n_of_a_kind": "doubling"})
    # 600 / 1200 / 2400, but split into singles and triples where that is more
    assert score_keep([1] * 4, pm_doubling) == 600
    assert score_keep([1] * 5, pm_doubling) == 1200
    assert score_keep([1] * 6, pm_doubling) == 2400


def test_knob_four_kind():
    rules = custom(four_kind=800)
    assert score_keep([2] * 4, rules) == 800
    assert score_keep([6] * 4, custom(four_kind=800, n_of_a_kind="doubling")) == 800  # not 1200
    assert score_keep([1] * 4, rules) == 1100  # splitting is still better
    assert score_keep([2] * 5, rules) == 2000  # five of a kind untouched


def test_knob_five_kind():
    rules = custom(five_kind=4000)
    assert score_keep([6] * 5, rules) == 4000
    assert score_keep([6] * 4, rules) == 1000


def test_knob_six_kind():
    rules = custom(six_kind=10000)
    assert score_keep([2] * 6, rules) == 10000
    assert score_keep([1] * 6, rules) == 10000
    assert score_keep([2] * 5, rules) == 2000


def test_knob_straight():
    assert score_keep([6, 5, 4, 3, 2, 1], custom(straight=2500)) == 2500
    off = custom(straight=None)
    assert score_keep([1, 2, 3, 4, 5, 6], off) is None
    assert best_keep([1, 2, 3, 4, 5, 6], off).points == 150


def test_knob_partial_straights():
    rules = custom(partial_straights={"12345": 500, "23456": 750})
    assert score_keep([1, 2, 3, 4, 5], rules) == 500
    assert score_keep([2, 3, 4, 5, 6], rules) == 750
    assert score_keep([1, 2, 3, 4, 5, 5], rules) == 550
    assert score_keep([2, 3, 4, 5, 6, 1], rules) == 1500  # full straight beats 750 + 100
    assert score_keep([2, 3, 4, 5, 6, 1], custom(straight=500, partial_straights={"23456": 750})) == 850
    assert score_keep([1, 2, 3, 4, 5], STANDARD) is None  # default null: no partials
    assert score_keep([2, 3, 4, 5], rules) is None  # only the runs named
    assert not is_farkle([2, 3, 4, 6, 6, 5], custom(partial_straights={"2345": 400}))


def test_knob_three_pairs():
    assert score_keep([2, 2, 3, 3, 6, 6], custom(three_pairs=750)) == 750
    # 1,1,5,5,6,6: three pairs 750 beats nothing else that uses the 6s
    assert score_keep([1, 1, 5, 5, 6, 6], custom(three_pairs=750)) == 750
    off = custom(three_pairs=None)
    assert score_keep([2, 2, 3, 3, 6, 6], off) is None
    assert is_farkle([2, 2, 3, 3, 6, 6], off)
    assert score_keep([1, 1, 5, 5, 3, 3], off) is None


def test_switching_three_pairs_off_changes_the_six_dice_odds():
    # six dice with no 1, 5 or triple: faces {2,3,4,6}, counts <= 2, six dice.
    # 2,2,2 patterns: C(4,3) * 6!/(2!2!2!) = 360; 2,2,1,1 patterns: C(4,2) * 6!/(2!2!) = 1080.
    assert farkle_probability(6, custom(three_pairs=None)) == Fraction(360 + 1080, 6**6)
    assert Fraction(360 + 1080, 6**6) == Fraction(5, 162)
    assert farkle_probability(6, STANDARD) == Fraction(1080, 6**6) == Fraction(5, 216)
    for n in range(1, 6):
        assert farkle_probability(n, custom(three_pairs=None)) == farkle_probability(n, STANDARD)


def test_knob_four_kind_plus_pair():
    assert score_keep([2, 2, 2, 2, 5, 5], custom(four_kind_plus_pair=2000)) == 2000
    assert score_keep([2, 2, 2, 2, 5, 5], custom(four_kind_plus_pair=None)) == 1000 + 100
    assert score_keep([3, 3, 3, 3, 6, 6], custom(four_kind_plus_pair=None)) is None


def test_knob_two_triplets():
    assert score_keep([2, 2, 2, 3, 3, 3], STANDARD) == 2500
    assert score_keep([2, 2, 2, 3, 3, 3], custom(two_triplets=3000)) == 3000
    off = custom(two_triplets=None)  # null: just two triples added up
    assert score_keep([2, 2, 2, 3, 3, 3], off) == 200 + 300
    assert score_keep([1, 1, 1, 6, 6, 6], off) == 1000 + 600


def test_knob_split_kinds():
    assert score_keep([1] * 4, custom(split_kinds=True)) == 1100
    assert score_keep([1] * 4, custom(split_kinds=False)) == 1000
    assert score_keep([1, 1, 1, 1, 5], custom(split_kinds=False)) == 1050
    assert score_keep([5] * 4, custom(split_kinds=False, four_kind=100)) == 100


@pytest.mark.parametrize(
    "knob, value",
    [
        ("opening", 1000),
        ("opening", 0),
        ("min_bank", 350),
        ("farkle_penalty", 500),
        ("penalty_after", 2),
        ("target", 5000),
    ],
)
def test_game_knobs_are_kept_and_leave_scoring_alone(knob, value):
    rules = custom(**{knob: value})
    assert getattr(rules, knob) == value
    assert rules.to_dict()[knob] == value
    assert rules != STANDARD  # every value above differs from the default
    assert score_table(rules).value == score_table(STANDARD).value
    assert score_table(rules).best == score_table(STANDARD).best


def test_game_knob_defaults_are_rules_md_defaults():
    assert (STANDARD.opening, STANDARD.min_bank, STANDARD.farkle_penalty) == (500, 0, 0)
    assert (STANDARD.penalty_after, STANDARD.target) == (3, 10000)
    assert PLAYMONSTER.opening == 500 and PLAYMONSTER.three_ones == 300


# ---- probabilities -------------------------------------------------------------------------------
RULES_MD_ODDS = {
    6: Fraction(5, 216),
    5: Fraction(25, 324),
    4: Fraction(17, 108),
    3: Fraction(5, 18),
    2: Fraction(4, 9),
    1: Fraction(2, 3),
}


@pytest.mark.parametrize("name", ["standard", "playmonster"])
@pytest.mark.parametrize("n", sorted(RULES_MD_ODDS))
def test_exact_farkle_odds(name, n):
    assert farkle_probability(n, Ruleset.from_value(name)) == RULES_MD_ODDS[n]


def test_farkle_odds_reject_impossible_dice_counts():
    for n in (0, 7):
        with pytest.raises(ValueError):
            farkle_probability(n, STANDARD)


def test_keep_of_breakdown_names_the_split():
    keep = keep_of([1, 1, 1, 5], STANDARD)
    assert keep.points == 1050
    assert "1000" in keep.breakdown and "50" in keep.breakdown
    assert keep_of([2, 3], STANDARD) is None


def test_best_keep_prefers_fewer_dice_on_a_tie():
    # best_keep's documented tie-break: equal points, the keep that leaves more dice to roll.
    # With 1-2-3-4 worth 100, keeping 1 or 1,2,3,4 both score 100; the lone 1 rolls more dice.
    rules = custom(partial_straights={"1234": 100})
    assert score_keep([1], rules) == score_keep([1, 2, 3, 4], rules) == 100
    assert best_keep([1, 2, 3, 4, 6, 6], rules).dice == (1,)

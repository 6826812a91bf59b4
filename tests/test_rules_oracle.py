"""An independent oracle for keep scoring, written from /work/shared/rules.md alone.

The engine searches splits by face counts, lowest face first, with memoisation. This oracle
does the obviously-right slow thing instead: it numbers the kept dice, enumerates every set
partition of them (Bell(6) = 203 at most), asks of each block "is this one combination of
rules.md, and what is it worth?", and keeps the best partition whose blocks all score. It
reads knob values from plain dicts with rules.md's defaults, not from `Ruleset`, so a bug in
the engine's derived values (`kind_value`, `triple_value`, the meld list) cannot leak in.

Every one of the 923 multisets of one to six dice is compared, for a fixed list of rulesets
and for randomly drawn ones, on: the keep value (`score_keep` and the table's `value`), the
best keep of the multiset taken as a roll, the farkle flag, and the exact farkle odds.

rules.md, "Values": "a combination worth 0 points (a knob set to 0, or a value that comes to
0 ...) is not a combination: dice that only it could use do not score". The oracle applies
that sentence where it decides what a block is (`block_value`), so 0-valued knobs are drawn
in the random rulesets and must agree too.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product
from math import factorial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rules_md import STANDARD_KNOBS
from pipeline.rules import Ruleset, farkle_probability, score_keep, score_table

BASES = {"standard": STANDARD_KNOBS, "playmonster": {**STANDARD_KNOBS, "three_ones": 300}}

FLAT = {4: 1000, 5: 2000, 6: 3000}  # "4, 5, 6 of a kind = 1000, 2000, 3000 whatever the face"
DOUBLING = {4: 2, 5: 4, 6: 8}  # "2x, 4x, 8x that face's triple"
LINEAR = {4: 2, 5: 3, 6: 4}  # "2x, 3x, 4x the triple"
FIXED = {4: "four_kind", 5: "five_kind", 6: "six_kind"}


def knobs_of(value: str | dict) -> dict:
    """Knob dict of a rules value, the way rules.md describes it (no engine involved)."""
    if isinstance(value, str):
        return dict(BASES[value])
    value = dict(value)
    knobs = dict(BASES[value.pop("base", "standard")])
    knobs.update(value)
    return knobs


def triple(face: int, k: dict) -> int | None:
    return k["three_ones"] if face == 1 else face * 100


def block_value(block: tuple[int, ...], k: dict) -> int | None:
    """Points of `block` (sorted dice) taken as ONE combination of rules.md; None if it is none."""
    n = len(block)
    counts = Counter(block)
    shape = sorted(counts.values())
    candidates: list[int | None] = []
    if n == 1:
        candidates.append({1: k["single_one"], 5: k["single_five"]}.get(block[0]))
    if len(counts) == 1 and n == 3:
        candidates.append(triple(block[0], k))
    if len(counts) == 1 and n in (4, 5, 6):
        face = block[0]
        if k[FIXED[n]] is not None:
            candidates.append(k[FIXED[n]])
        elif k["n_of_a_kind"] == "flat":
            candidates.append(FLAT[n])
        else:
            t = triple(face, k)
            mult = (DOUBLING if k["n_of_a_kind"] == "doubling" else LINEAR)[n]
            candidates.append(None if t is None else mult * t)
    if block == (1, 2, 3, 4, 5, 6):
        candidates.append(k["straight"])
    if k["partial_straights"]:
        candidates.append(k["partial_straights"].get("".join(map(str, block))))
    if n == 6 and shape == [2, 2, 2]:
        candidates.append(k["three_pairs"])
    if n == 6 and shape == [2, 4]:
        candidates.append(k["four_kind_plus_pair"])
    if n == 6 and shape == [3, 3]:
        candidates.append(k["two_triplets"])
    # null: not a combination; 0: "a combination worth 0 points ... is not a combination"
    found = [c for c in candidates if c is not None and c != 0]
    return max(found) if found else None


def one_set_per_face(blocks: list[tuple[int, ...]], kept: Counter) -> bool:
    """split_kinds false: "three or more equal dice are scored as one set (...; more than six,
    which only a cross-roll union can hold, as six plus the rest)". Up to six dice of a face:
    all of them lie in one block (that block may still be four+pair or two triplets). More
    than six: one block holds six of them and the rest are scored the same way again."""
    for face, n in kept.items():
        if n < 3:
            continue
        holding = sorted((b.count(face) for b in blocks if face in b), reverse=True)
        while n > 6:
            if not holding or holding[0] != 6:
                return False
            holding.pop(0)
            n -= 6
        if n >= 3 and holding != [n]:
            return False
    return True


def set_partitions(items: list) -> list[list[list]]:
    """Every partition of `items` (by position) into non-empty blocks."""
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for part in set_partitions(rest):
        out.append([[first]] + part)
        for i in range(len(part)):
            out.append(part[:i] + [[first] + part[i]] + part[i + 1 :])
    return out


PARTITIONS = {n: set_partitions(list(range(n))) for n in range(9)}  # by dice position (Bell(8) = 4140)


def oracle_keep(dice: tuple[int, ...], k: dict, _values: dict | None = None) -> int | None:
    """Best total over partitions in which every block is a combination; None if none."""
    values = {} if _values is None else _values  # block -> value memo, per knob dict
    kept = Counter(dice)
    best = None
    for part in PARTITIONS[len(dice)]:
        blocks = [tuple(sorted(dice[i] for i in b)) for b in part]
        if not k["split_kinds"] and not one_set_per_face(blocks, kept):
            continue
        total = 0
        for b in blocks:
            if b not in values:
                values[b] = block_value(b, k)
            if values[b] is None:
                break
            total += values[b]
        else:
            if best is None or total > best:
                best = total
    return best


# ---- the 923 multisets -----------------------------------------------------------------
ALL_COUNTS = [c for c in product(range(7), repeat=6) if 1 <= sum(c) <= 6]


def to_dice(counts) -> tuple[int, ...]:
    return tuple(face for face, n in zip(range(1, 7), counts) for _ in range(n))


def key_of(counts) -> int:
    """rules-table key: face counts as decimal digits, 1s first."""
    return int("".join(map(str, counts)))


def sub_counts(counts):
    for sub in product(*(range(n + 1) for n in counts)):
        if any(sub):
            yield sub


_TABLES: dict[str, dict] = {}


def oracle_table(k: dict) -> dict:
    """counts -> (keep value, best keep value as a roll or None for a farkle)."""
    memo_key = repr(sorted(k.items()))
    if memo_key not in _TABLES:
        _TABLES[memo_key] = _oracle_table(k)
    return _TABLES[memo_key]


def _oracle_table(k: dict) -> dict:
    blocks: dict = {}
    value = {c: oracle_keep(to_dice(c), k, blocks) for c in ALL_COUNTS}
    out = {}
    for c in ALL_COUNTS:
        scored = [value[s] for s in sub_counts(c) if value[s] is not None]
        out[c] = (value[c], max(scored) if scored else None)
    return out


def oracle_farkle_odds(n: int, table: dict) -> Fraction:
    """P(farkle) for n dice: multinomial weight of each n-dice multiset that cannot score."""
    busts = 0
    for c, (_, best) in table.items():
        if sum(c) == n and best is None:
            weight = factorial(n)
            for x in c:
                weight //= factorial(x)
            busts += weight
    return Fraction(busts, 6**n)


# ---- the oracle checks itself against rules.md's sentences ---------------------------------
def test_oracle_agrees_with_rules_md_sentences():
    std = knobs_of("standard")
    assert len(set_partitions(list(range(6)))) == 203  # Bell(6)
    assert oracle_keep((1, 1, 1, 1, 5, 5), std) == 1500
    assert oracle_keep((1, 1, 1, 1), std) == 1100
    assert oracle_keep((1, 1, 1, 1), knobs_of({"split_kinds": False})) == 1000
    assert oracle_keep((1, 1, 1, 1), knobs_of({"n_of_a_kind": "doubling"})) == 2000
    assert oracle_keep((1, 1, 1, 1, 6, 6), knobs_of({"n_of_a_kind": "doubling"})) == 1500
    assert oracle_keep((2, 2, 2, 2, 5, 5), std) == 1500
    assert oracle_keep((2, 2, 2, 2, 5, 5), knobs_of({"four_kind_plus_pair": None})) == 1100
    assert oracle_table(std)[(0, 2, 2, 0, 1, 1)] == (None, 50)  # 2,2,3,3,5,6: only the 5 scores
    assert oracle_keep((2, 2, 3, 3, 4, 6), std) is None
    # "Values": a combination worth 0 is not a combination
    assert oracle_keep((1,), knobs_of({"single_one": 0})) is None
    assert oracle_table(knobs_of({"single_one": 0}))[(1, 0, 1, 0, 1, 1)] == (None, 50)  # 1,3,5,6: only the 5
    assert oracle_table(knobs_of({"single_one": 0, "single_five": 0}))[(1, 1, 1, 1, 1, 0)][1] is None
    zero_triple = knobs_of({"n_of_a_kind": "doubling", "three_ones": 0})
    assert oracle_keep((1, 1, 1, 1), zero_triple) == 400  # four singles: the 4-set and 3-set are worth 0
    assert oracle_keep((1, 1, 1, 1), {**zero_triple, "split_kinds": False}) is None  # one set, worth 0
    assert oracle_keep((1, 1, 1, 1, 1, 1, 1), knobs_of({"split_kinds": False})) == 3100  # six + the rest
    assert oracle_keep((2, 2, 2, 2, 2, 2, 2, 2), knobs_of({"split_kinds": False})) is None  # six 2s + two 2s


# ---- engine vs oracle ----------------------------------------------------------------------
RULESETS = {
    "standard": "standard",
    "playmonster": "playmonster",
    "doubling": {"n_of_a_kind": "doubling"},
    "linear": {"n_of_a_kind": "linear"},
    "no split": {"split_kinds": False},
    "no split, doubling": {"split_kinds": False, "n_of_a_kind": "doubling"},
    "partial straights": {"partial_straights": {"12345": 500, "23456": 750}},
    "short partials": {"partial_straights": {"123": 150, "2345": 400, "3456": 450}},
    "two triplets null": {"two_triplets": None},
    "six kind 10000": {"six_kind": 10000},
    "three pairs null": {"three_pairs": None},
    "four+pair null": {"four_kind_plus_pair": None},
    "straight null": {"straight": None},
    "playmonster doubling": {"base": "playmonster", "n_of_a_kind": "doubling"},
    "playmonster linear no split": {"base": "playmonster", "n_of_a_kind": "linear", "split_kinds": False},
    "cheap combos": {"three_pairs": 750, "straight": 2500, "two_triplets": 1200, "four_kind": 500},
    "zero singles": {"single_one": 0, "single_five": 0, "three_ones": 0},
    "zero triple ones, doubling": {"three_ones": 0, "n_of_a_kind": "doubling"},
    "zero triple ones, doubling, no split": {"three_ones": 0, "n_of_a_kind": "doubling", "split_kinds": False},
    "single one 0": {"single_one": 0},
    "single five 0": {"single_five": 0},
    "zero kinds": {"four_kind": 0, "five_kind": 0, "six_kind": 0},
    "zero kinds, no split": {"four_kind": 0, "six_kind": 0, "split_kinds": False},
    "zero six-dice combos": {"straight": 0, "three_pairs": 0, "four_kind_plus_pair": 0, "two_triplets": 0},
    "zero partial": {"partial_straights": {"12345": 0, "234": 0, "3456": 400}},
}


def compare_engine_to_oracle(value) -> list[str]:
    k = knobs_of(value)
    rules = Ruleset.from_value(value)
    table = score_table(rules)
    truth = oracle_table(k)
    problems = []
    for c in ALL_COUNTS:
        dice = to_dice(c)
        want_value, want_best = truth[c]
        got = score_keep(dice, rules)
        if got != want_value:
            problems.append(f"score_keep{dice}: engine {got}, oracle {want_value}")
        key = key_of(c)
        if table.value[key] != want_value:
            problems.append(f"table.value[{key}]: {table.value[key]}, oracle {want_value}")
        if table.best[key] != (want_best or 0):
            problems.append(f"table.best[{key}]: {table.best[key]}, oracle {want_best}")
        if table.farkle[key] != (want_best is None):
            problems.append(f"table.farkle[{key}]: {table.farkle[key]}, oracle {want_best is None}")
    return problems


@pytest.mark.parametrize("value", list(RULESETS.values()), ids=list(RULESETS))
def test_engine_matches_partition_oracle_on_all_923_multisets(value):
    problems = compare_engine_to_oracle(value)
    assert not problems, f"{len(problems)} disagreements, e.g. " + "; ".join(problems[:8])


@pytest.mark.parametrize("value", list(RULESETS.values()), ids=list(RULESETS))
def test_exact_farkle_odds_match_oracle_enumeration(value):
    truth = oracle_table(knobs_of(value))
    rules = Ruleset.from_value(value)
    for n in range(1, 7):
        assert farkle_probability(n, rules) == oracle_farkle_odds(n, truth), n


# 0 drawn often on purpose: "a combination worth 0 points ... is not a combination"
worth = st.just(0) | st.integers(0, 5000)
points = st.none() | worth
random_rules = st.fixed_dictionaries(
    {},
    optional={
        "base": st.sampled_from(["standard", "playmonster"]),
        "single_one": worth,  # "single_one, single_five and three_ones may not" be null
        "single_five": worth,
        "three_ones": worth,
        "n_of_a_kind": st.sampled_from(["flat", "doubling", "linear"]),
        "four_kind": points,
        "five_kind": points,
        "six_kind": points,
        "straight": points,
        "partial_straights": st.none()
        | st.dictionaries(
            st.sampled_from(["123", "234", "345", "456", "1234", "2345", "3456", "12345", "23456"]),
            st.just(0) | st.integers(0, 3000),
            max_size=3,
        ),
        "three_pairs": points,
        "four_kind_plus_pair": points,
        "two_triplets": points,
        "split_kinds": st.booleans(),
    },
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_rules)
def test_engine_matches_oracle_for_random_rulesets(value):
    problems = compare_engine_to_oracle(value)
    assert not problems, f"{value}: {len(problems)} disagreements, e.g. " + "; ".join(problems[:8])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=7, max_size=8),
    st.sampled_from(list(RULESETS.values())),
)
def test_unions_of_seven_or_eight_dice_match_oracle(dice, value):
    # cross-roll unions: a six-dice combination uses six of the dice, the rest score apart
    # (split_kinds false: six of a face as one set, then the rest)
    assert score_keep(dice, Ruleset.from_value(value)) == oracle_keep(tuple(dice), knobs_of(value))


@pytest.mark.parametrize("dice", [(1,) * 7, (1,) * 8, (2,) * 8, (5,) * 7 + (1,), (1, 1, 1, 1, 1, 1, 5, 5)])
@pytest.mark.parametrize("value", list(RULESETS.values()), ids=list(RULESETS))
def test_runs_of_more_than_six_equal_dice_match_oracle(dice, value):
    assert score_keep(dice, Ruleset.from_value(value)) == oracle_keep(dice, knobs_of(value))


@pytest.mark.parametrize("knob", ["single_one", "single_five", "three_ones"])
def test_single_one_single_five_three_ones_may_not_be_null(knob):
    from pipeline.rules import RulesetError

    with pytest.raises(RulesetError, match=knob):
        Ruleset.from_value({knob: None})
    assert getattr(Ruleset.from_value({knob: 0}), knob) == 0

"""Rulesets: built-in names, `{"base": NAME, knob: value}` objects, JSON/TOML files, validation
and the canonical `to_dict` form. The knob names and defaults are rules.md's table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules_md import STANDARD_KNOBS as RULES_MD_STANDARD
from pipeline.rules import KNOB_NAMES, Ruleset, RulesetError, score_keep
from pipeline.reader.rules_source import load_ruleset, load_ruleset_file

INTEGER_KNOBS = [
    "single_one",
    "single_five",
    "three_ones",
    "four_kind",
    "five_kind",
    "six_kind",
    "straight",
    "three_pairs",
    "four_kind_plus_pair",
    "two_triplets",
    "opening",
    "min_bank",
    "farkle_penalty",
    "penalty_after",
    "target",
]
# rules.md, "Values": these may be null (not a combination); single_one, single_five and
# three_ones may not (0 switches them off).
COMBINATION_KNOBS = [
    "four_kind",
    "five_kind",
    "six_kind",
    "straight",
    "partial_straights",
    "three_pairs",
    "four_kind_plus_pair",
    "two_triplets",
]
NEVER_NULL_COMBINATIONS = ["single_one", "single_five", "three_ones"]


# ---- construction --------------------------------------------------------------------------
def test_knob_names_are_rules_md_names():
    assert set(KNOB_NAMES) == set(RULES_MD_STANDARD)


def test_standard_by_name_has_rules_md_defaults():
    r = Ruleset.from_value("standard")
    assert {k: v for k, v in r.to_dict().items() if k != "base"} == RULES_MD_STANDARD
    assert r.name == "standard"


def test_playmonster_by_name_differs_only_in_three_ones():
    r = Ruleset.from_value("playmonster")
    expected = {**RULES_MD_STANDARD, "three_ones": 300}
    assert {k: v for k, v in r.to_dict().items() if k != "base"} == expected
    assert r.name == "playmonster"


def test_object_with_base_and_knobs():
    r = Ruleset.from_value({"base": "standard", "n_of_a_kind": "doubling", "three_pairs": 750, "opening": 1000})
    assert (r.n_of_a_kind, r.three_pairs, r.opening) == ("doubling", 750, 1000)
    assert r.three_ones == 1000
    pm = Ruleset.from_value({"base": "playmonster", "opening": 0})
    assert (pm.three_ones, pm.opening) == (300, 0)
    assert pm.name != "playmonster"


def test_object_without_base_is_based_on_standard():
    assert Ruleset.from_value({"target": 5000}) == Ruleset.from_value({"base": "standard", "target": 5000})
    assert Ruleset.from_value({}) == Ruleset.from_value("standard")


def test_from_json_text():
    r = Ruleset.from_json_text('{"base": "playmonster", "two_triplets": null}')
    assert r.three_ones == 300 and r.two_triplets is None
    assert Ruleset.from_json_text('"playmonster"') == Ruleset.from_value("playmonster")
    with pytest.raises(RulesetError):
        Ruleset.from_json_text("{nope")


def test_from_json_file(tmp_path):
    path = tmp_path / "house.json"
    path.write_text(
        json.dumps(
            {
                "base": "standard",
                "partial_straights": {"12345": 500, "23456": 750},
                "six_kind": 10000,
                "two_triplets": None,
            }
        )
    )
    r = load_ruleset_file(path)
    assert r.six_kind == 10000 and r.two_triplets is None
    assert r.to_dict()["partial_straights"] == {"12345": 500, "23456": 750}
    assert load_ruleset(str(path)) == r


def test_from_toml_file(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text(
        'base = "standard"\nn_of_a_kind = "linear"\nsplit_kinds = false\nmin_bank = 350\n'
        '\n[partial_straights]\n"12345" = 500\n"23456" = 750\n'
    )
    r = load_ruleset_file(path)
    assert (r.n_of_a_kind, r.split_kinds, r.min_bank) == ("linear", False, 350)
    assert r.to_dict()["partial_straights"] == {"12345": 500, "23456": 750}
    assert load_ruleset(str(path)) == r


def test_file_errors_name_the_file_and_knob(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("opening = 3.5\n")
    with pytest.raises(RulesetError, match="opening") as exc:
        load_ruleset_file(path)
    assert "bad.toml" in str(exc.value)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(RulesetError):
        load_ruleset_file(broken)
    with pytest.raises(RulesetError):
        load_ruleset_file(tmp_path / "missing.json")


def test_load_ruleset_spec_forms():
    assert load_ruleset(None) == Ruleset.from_value("standard")
    assert load_ruleset("playmonster") == Ruleset.from_value("playmonster")
    assert load_ruleset('{"three_pairs": 750}').three_pairs == 750


# ---- rejection --------------------------------------------------------------------------------
def test_ruleset_error_is_a_value_error():
    assert issubclass(RulesetError, ValueError)


@pytest.mark.parametrize("name", ["vegas", "Standard", ""])
def test_unknown_name(name):
    with pytest.raises(RulesetError) as exc:
        Ruleset.from_value(name)
    assert repr(name) in str(exc.value)
    with pytest.raises(RulesetError):
        Ruleset.from_value({"base": name})


@pytest.mark.parametrize("value", [5, None, ["standard"], True])
def test_rules_value_of_wrong_shape(value):
    with pytest.raises(RulesetError):
        Ruleset.from_value(value)


def test_base_must_be_a_name():
    with pytest.raises(RulesetError, match="base"):
        Ruleset.from_value({"base": 1})


@pytest.mark.parametrize("knob", ["three_fives", "Opening", "straights", "double"])
def test_unknown_knob_is_named(knob):
    with pytest.raises(RulesetError) as exc:
        Ruleset.from_value({"base": "standard", knob: 1})
    assert knob in str(exc.value)


@pytest.mark.parametrize("knob", INTEGER_KNOBS)
@pytest.mark.parametrize("bad", [True, False, "x", "500", -5, 3.5, [], {}])
def test_wrong_type_for_an_integer_knob_is_named(knob, bad):
    with pytest.raises(RulesetError) as exc:
        Ruleset.from_value({knob: bad})
    assert knob in str(exc.value)


@pytest.mark.parametrize("knob", INTEGER_KNOBS)
def test_integral_float_is_accepted_as_integer(knob):
    r = Ruleset.from_value({knob: 3.0})
    assert getattr(r, knob) == 3 and type(getattr(r, knob)) is int


@pytest.mark.parametrize("knob", ["penalty_after", "target"])
def test_positive_knobs_reject_zero(knob):
    with pytest.raises(RulesetError, match=knob):
        Ruleset.from_value({knob: 0})
    assert getattr(Ruleset.from_value({knob: 1}), knob) == 1


@pytest.mark.parametrize("knob", ["opening", "min_bank", "farkle_penalty"])
def test_zero_turns_a_game_knob_off(knob):
    assert getattr(Ruleset.from_value({knob: 0}), knob) == 0


@pytest.mark.parametrize("knob", COMBINATION_KNOBS)
def test_combination_knobs_may_be_null(knob):
    assert getattr(Ruleset.from_value({knob: None}), knob) is None


@pytest.mark.parametrize(
    "knob",
    [
        *NEVER_NULL_COMBINATIONS,
        "n_of_a_kind",
        "split_kinds",
        "opening",
        "min_bank",
        "farkle_penalty",
        "penalty_after",
        "target",
    ],
)
def test_other_knobs_may_not_be_null(knob):
    with pytest.raises(RulesetError, match=knob):
        Ruleset.from_value({knob: None})


@pytest.mark.parametrize("bad", ["tripling", "Flat", 2, True])
def test_n_of_a_kind_modes(bad):
    for mode in ("flat", "doubling", "linear"):
        assert Ruleset.from_value({"n_of_a_kind": mode}).n_of_a_kind == mode
    with pytest.raises(RulesetError, match="n_of_a_kind"):
        Ruleset.from_value({"n_of_a_kind": bad})


@pytest.mark.parametrize("bad", [1, 0, "true", "yes"])
def test_split_kinds_is_a_boolean(bad):
    with pytest.raises(RulesetError, match="split_kinds"):
        Ruleset.from_value({"split_kinds": bad})


@pytest.mark.parametrize(
    "bad",
    [
        ["12345"],
        "12345",
        {"135": 100},
        {"54321": 100},
        {"12345": -1},
        {"12345": True},
        {"12345": "500"},
        {"12345": 2.5},
        {"12345": None},
        {"1a3": 100},
    ],
)
def test_partial_straights_rejects_malformed(bad):
    with pytest.raises(RulesetError, match="partial_straights"):
        Ruleset.from_value({"partial_straights": bad})


# ---- canonical form ----------------------------------------------------------------------------
CUSTOMS = [
    {"base": "standard", "n_of_a_kind": "doubling", "three_pairs": 750, "opening": 1000},
    {"base": "playmonster", "partial_straights": {"23456": 750, "12345": 500}, "two_triplets": None},
    {"six_kind": 10000, "split_kinds": False, "farkle_penalty": 500, "penalty_after": 3},
    {"straight": None, "three_pairs": None, "four_kind_plus_pair": None, "n_of_a_kind": "linear"},
    {"min_bank": 350, "target": 5000, "single_five": 0, "four_kind": 2000.0},
]


@pytest.mark.parametrize("value", ["standard", "playmonster", *CUSTOMS])
def test_to_dict_round_trips(value):
    r = Ruleset.from_value(value)
    d = r.to_dict()
    assert Ruleset.from_value(d) == r
    assert Ruleset.from_json_text(json.dumps(d)) == r
    assert Ruleset.from_json_text(r.to_json()) == r
    assert set(d) == {"base", *RULES_MD_STANDARD}
    assert json.loads(json.dumps(d)) == d  # plain JSON values only


def test_to_dict_keeps_the_base_and_overrides():
    d = Ruleset.from_value(CUSTOMS[1]).to_dict()
    assert d["base"] == "playmonster" and d["three_ones"] == 300
    assert d["partial_straights"] == {"12345": 500, "23456": 750}
    assert d["two_triplets"] is None


def test_rulesets_are_hashable_and_compare_by_knobs():
    a = Ruleset.from_value({"three_pairs": 750})
    b = Ruleset.from_value({"base": "standard", "three_pairs": 750.0})
    assert a == b and hash(a) == hash(b)
    assert a != Ruleset.from_value("standard")
    assert len({a, b, Ruleset.from_value("standard")}) == 2


points = st.none() | st.integers(0, 100_000)
valid_rules = st.fixed_dictionaries(
    {},
    optional={
        "base": st.sampled_from(["standard", "playmonster"]),
        **{k: points for k in COMBINATION_KNOBS if k != "partial_straights"},
        **{k: st.integers(0, 100_000) for k in NEVER_NULL_COMBINATIONS},
        "partial_straights": st.none()
        | st.dictionaries(st.sampled_from(["123", "2345", "3456", "12345", "23456"]), st.integers(0, 5000)),
        "n_of_a_kind": st.sampled_from(["flat", "doubling", "linear"]),
        "split_kinds": st.booleans(),
        "opening": st.integers(0, 5000),
        "min_bank": st.integers(0, 5000),
        "farkle_penalty": st.integers(0, 5000),
        "penalty_after": st.integers(1, 10),
        "target": st.integers(1, 100_000),
    },
)


@settings(max_examples=200, deadline=None)
@given(valid_rules)
def test_any_valid_ruleset_round_trips_and_keeps_its_knobs(value):
    r = Ruleset.from_value(value)
    assert Ruleset.from_value(r.to_dict()) == r
    d = r.to_dict()
    for knob, v in value.items():
        if knob == "partial_straights":
            assert d[knob] == (v or None)  # {} is the same as none
        else:
            assert d[knob] == v


# ---- the user guide's examples load and mean what it says -------------------------------------
DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def docs_block(lang: str) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert blocks, f"docs/rules.md has no {lang} example"
    return blocks[0]


def test_docs_json_example(tmp_path):
    path = tmp_path / "house.json"
    path.write_text(docs_block("json"))
    r = load_ruleset(str(path))
    assert (r.n_of_a_kind, r.three_pairs, r.two_triplets, r.opening) == ("doubling", 750, None, 1000)
    assert score_keep([3, 3, 3, 3], r) == 600  # as the guide's comment says


def test_docs_toml_example(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text(docs_block("toml"))
    r = load_ruleset(str(path))
    assert (r.three_ones, r.n_of_a_kind, r.split_kinds, r.six_kind) == (300, "linear", False, 10000)
    assert score_keep([1, 1, 1, 1], r) == 2 * 300  # as the guide's comment says


def test_partial_straight_keys_must_be_ascii_digits():
    import pytest as _pytest

    from pipeline.rules import Ruleset as _Ruleset, RulesetError as _RulesetError

    with _pytest.raises(_RulesetError, match="partial_straights"):
        _Ruleset.from_value({"partial_straights": {"\u0661\u0662\u0663": 300}})

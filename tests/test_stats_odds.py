"""The exact-odds table: the rules engine's enumeration, one row per (ruleset, dice), cached."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from pipeline.rules import Ruleset
from pipeline.stats import odds as odds_mod
from pipeline.stats.odds import exact_odds_table, matching_rulesets

STANDARD = Ruleset.builtin("standard")
NO_PAIRS = Ruleset.from_value({"base": "standard", "three_pairs": None})


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path))
    return tmp_path


def as_dict(table):
    return {(r["ruleset"], r["dice"]): Fraction(r["farkle_num"], r["farkle_den"]) for r in table.to_pylist()}


def test_odds_of_rules_md_and_a_variant(cache_dir):
    got = as_dict(exact_odds_table([STANDARD.to_json(), NO_PAIRS.to_json(), None, "not json"]))
    # rules.md's table for the common rules
    table = {
        6: Fraction(5, 216),
        5: Fraction(25, 324),
        4: Fraction(17, 108),
        3: Fraction(5, 18),
        2: Fraction(4, 9),
        1: Fraction(2, 3),
    }
    for n, p in table.items():
        assert got[(STANDARD.to_json(), n)] == p
    # without three pairs, six dice of three pairs (6!/(2!2!2!) * C(6,3) = 1800 rolls, of which
    # those with neither a 1 nor a 5: pairs from {2,3,4,6}: 90 * 4 = 360) farkle too
    assert got[(NO_PAIRS.to_json(), 6)] == Fraction(5, 216) + Fraction(360, 6**6)
    assert got[(NO_PAIRS.to_json(), 5)] == Fraction(25, 324)
    assert len(got) == 12  # unreadable texts are left out


def test_cache_is_written_then_used(cache_dir, monkeypatch):
    exact_odds_table([STANDARD.to_json()])
    files = list(cache_dir.glob("exact-odds-*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())
    assert list(stored.values())[0][5] == [5, 216]
    monkeypatch.setattr(odds_mod, "farkle_probability", lambda n, r: pytest.fail("recomputed"))
    assert as_dict(exact_odds_table([STANDARD.to_json()]))[(STANDARD.to_json(), 6)] == Fraction(5, 216)


def test_broken_cache_is_recomputed(cache_dir):
    exact_odds_table([STANDARD.to_json()])
    path = next(cache_dir.glob("exact-odds-*.json"))
    key = next(iter(json.loads(path.read_text())))
    path.write_text(json.dumps({key: [[1, 0]] * 6}))
    assert as_dict(exact_odds_table([STANDARD.to_json()]))[(STANDARD.to_json(), 1)] == Fraction(2, 3)
    path.write_text("{garbage")
    assert as_dict(exact_odds_table([STANDARD.to_json()]))[(STANDARD.to_json(), 2)] == Fraction(4, 9)


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    exact_odds_table([STANDARD.to_json()])
    assert not list(tmp_path.rglob("*.json"))


def test_matching_rulesets_ignores_base_and_spelling():
    texts = [STANDARD.to_json(), NO_PAIRS.to_json(), Ruleset.builtin("playmonster").to_json()]
    assert matching_rulesets(texts, Ruleset.from_value({"base": "playmonster", "three_ones": 1000})) == [
        STANDARD.to_json()
    ]
    assert matching_rulesets(texts, Ruleset.from_value({"three_pairs": None})) == [NO_PAIRS.to_json()]
    assert matching_rulesets(texts, Ruleset.from_value({"opening": 0})) == []

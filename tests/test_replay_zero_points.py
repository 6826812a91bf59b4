"""rules.md, "Values" (issue 15, 3): a combination worth 0 points is not a combination.

"dice that only it could use do not score, so a roll of nothing else is a farkle and keeping
them is non_scoring_kept"; single_one, single_five and three_ones cannot be null. Each log
is replayed by the real reader and engine; expected values are worked out from rules.md.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.rules import Ruleset, farkle_probability, score_table
from pipeline.rules.table import dice_key
from pipeline.simulate import simulate
from tests.gamelog import Log, audit, codes
from tests.test_simulate_inject import audit as audit_bytes

OPEN = {"opening": 0}
ZERO_ONE = {"base": "standard", "single_one": 0, **OPEN}
ZERO_TRIPLE_DOUBLING = {"base": "standard", "n_of_a_kind": "doubling", "three_ones": 0, **OPEN}


def test_a_roll_whose_only_scoring_die_is_a_zero_point_one_is_a_farkle():
    log = Log(rules=ZERO_ONE)
    log.roll("ana", [1, 2, 3, 4, 6, 6]).farkle("ana")  # the 1 is worth 0: nothing scores
    out = audit(log)
    assert codes(out) == []  # no false_farkle


def test_keeping_a_zero_point_one_is_non_scoring_kept_and_worth_nothing():
    log = Log(rules=ZERO_ONE)
    log.roll("ana", [1, 5, 2, 3, 4, 4]).keep("ana", [1, 5], 50)  # 1 scores nothing; 5 = 50
    log.roll("ana", [6, 6, 6, 2]).keep("ana", [6, 6, 6], 600).bank("ana", 650, 650)
    out = audit(log)
    assert codes(out) == [(3, "non_scoring_kept")]
    assert out.findings[0].message.endswith("but a 1 scores nothing")
    assert out.games[0].corrected["ana"] == 650  # best split of the dice that score: 50 + 600


def test_three_ones_still_score_when_a_single_one_is_worth_0():
    log = Log(rules=ZERO_ONE)
    log.roll("ana", [1, 1, 1, 2, 3, 4]).keep("ana", [1, 1, 1], 1000).bank("ana", 1000, 1000)
    assert codes(audit(log)) == []


def test_four_ones_under_doubling_with_three_ones_0_are_four_single_ones():
    # four 1s: 2 x 0 (not a combination), three 1s: 0 (not one), so four singles = 400
    log = Log(rules=ZERO_TRIPLE_DOUBLING)
    log.roll("ana", [1, 1, 1, 1, 2, 3]).keep("ana", [1, 1, 1, 1], 2000).bank("ana", 2000, 2000)
    out = audit(log)
    assert codes(out) == [(3, "scoring_error")]
    assert (out.findings[0].claimed, out.findings[0].expected) == (2000, 400)
    assert out.games[0].corrected["ana"] == 400


def test_four_ones_kept_as_one_set_without_split_kinds_score_nothing():
    # split_kinds false: four 1s are one set, worth 0: not a combination, so not a legal keep;
    # the roll still scores (a single 1 kept alone is 100), so it is no farkle
    rules = {**ZERO_TRIPLE_DOUBLING, "split_kinds": False}
    log = Log(rules=rules)
    log.roll("ana", [1, 1, 1, 1, 2, 3]).keep("ana", [1, 1, 1, 1], 400).bank("ana", 400, 400)
    out = audit(log)
    assert codes(out) == [(3, "non_scoring_kept")]
    assert out.findings[0].message.endswith("but only 1,1 of them can score together (200)")
    table = score_table(Ruleset.from_value(rules))
    assert table.best[dice_key([1, 1, 1, 1, 2, 3])] == 200  # keep two single 1s
    # corrected: "else the best split of those that can score": two single 1s
    assert out.games[0].corrected["ana"] == 200


def test_four_of_a_kind_worth_0_is_no_combination():
    log = Log(rules={"base": "standard", "four_kind": 0, **OPEN})
    log.roll("ana", [2, 2, 2, 2, 3, 4]).keep("ana", [2, 2, 2, 2], 1000).bank("ana", 1000, 1000)
    out = audit(log)
    assert codes(out) == [(3, "non_scoring_kept")]  # three 2s + a 2 that scores nothing
    assert out.games[0].corrected["ana"] == 200


def test_a_zero_point_six_dice_combination_leaves_the_roll_a_farkle():
    log = Log(rules={"base": "standard", "three_pairs": 0, **OPEN})
    log.roll("ana", [2, 2, 3, 3, 6, 6]).farkle("ana")
    assert codes(audit(log)) == []


def test_odds_follow_the_rule():
    # single_one 0: one die scores only as a 5 -> farkles 5 in 6
    assert farkle_probability(1, Ruleset.from_value({"single_one": 0})) == Fraction(5, 6)
    # both singles 0: one die never scores
    assert farkle_probability(1, Ruleset.from_value({"single_one": 0, "single_five": 0})) == 1


def test_rules_show_says_a_zero_point_combination_is_not_one():
    result = CliRunner().invoke(app, ["rules", "show", '{"single_one": 0, "four_kind": 0}', "-f", "json"])
    assert result.exit_code == 0, result.output
    import json

    points = {row["combination"]: row["points"] for row in json.loads(result.output)["scoring"]}
    assert points["single 1"] is None and points["four of a kind (any face)"] is None
    assert points["single 5"] == 50 and points["three 1s"] == 1000


def test_the_simulator_plays_zero_point_tables_cleanly():
    import io

    data = io.BytesIO()
    rules = [
        Ruleset.from_value({"single_five": 0, "three_pairs": 0, "target": 3000}),
        Ruleset.from_value({"n_of_a_kind": "doubling", "three_ones": 0, "split_kinds": False, "target": 3000}),
    ]
    simulate(data, 30, 9, rules=rules, players=(2, 3))
    assert audit_bytes(data.getvalue()) == []  # no bot keeps a 0-point "combination"


# ---- null is not allowed for the three basic combinations ---------------------------------------
@pytest.mark.parametrize("knob", ["single_one", "single_five", "three_ones"])
def test_a_log_whose_rules_null_a_basic_combination_is_bad_event(knob):
    log = Log(rules={"base": "standard", knob: None}).opening_turn("ana")
    out = audit(log)
    assert codes(out)[0] == (1, "bad_event") and knob in out.findings[0].message
    assert {f.code for f in out.findings} == {"bad_event", "unknown_game"}


@pytest.mark.parametrize("knob", ["single_one", "single_five", "three_ones"])
def test_the_cli_refuses_a_null_basic_combination_with_exit_2(tmp_path, knob):
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(Log(rules=None).opening_turn("ana").lines) + "\n")
    result = CliRunner().invoke(app, ["audit", str(path), "--rules", f'{{"{knob}": null}}'])
    assert result.exit_code == 2
    assert knob in result.output

"""`farkle-logs score` and `farkle-logs rules`, run through Typer's CliRunner.

Exit codes are the project's contract: 0 fine, 1 a finding in the data (a keep that is not
legal), 2 bad usage (a die of 7, an unknown ruleset or knob). Printed values come from
rules.md, not from earlier runs of the command.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


# ---- score -------------------------------------------------------------------------------
def test_score_prints_value_and_breakdown():
    result = run("score", "1", "1", "1", "5")
    assert result.exit_code == 0, result.output
    line = result.stdout.strip()
    assert line.startswith("1 1 1 5: 1050 ")
    assert "1000" in line and "50" in line  # three 1s + single 5
    assert "standard" in line


def test_score_dice_order_does_not_matter():
    a, b = run("score", "5", "1", "1", "1", "1", "5"), run("score", "1", "1", "1", "1", "5", "5")
    assert a.exit_code == b.exit_code == 0
    assert a.stdout == b.stdout
    assert ": 1500 " in a.stdout  # four of a kind + a pair


def test_score_json():
    result = run("score", "1", "1", "1", "1", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["points"] == 1100 and data["all_score"] is True
    assert data["dice"] == [1, 1, 1, 1] and data["non_scoring"] == []
    assert "1000" in data["breakdown"] and "100" in data["breakdown"]


def test_score_of_more_dice_than_a_union_holds_is_bad_usage_in_one_line():
    """1,000 dice used to end in a RecursionError (exit 70)."""
    result = run("score", *(["3"] * 1000))
    assert result.exit_code == 2
    assert "1000 dice: at most 72" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_score_of_72_mixed_dice_scores_them():
    """The largest union the replay scores (it took 25 s, searched one sub-multiset at a time)."""
    dice = [str(face) for face in (1, 2, 3, 4, 5, 6) for _ in range(12)]
    result = run("score", *dice, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["all_score"] is True and data["points"] >= 12 * 1500  # twelve straights at least


def test_score_illegal_keep_exits_1_naming_non_scoring_dice_and_best_keep():
    result = run("score", "1", "1", "2", "3", "5")
    assert result.exit_code == 1
    out = result.stdout
    assert "not a legal keep" in out
    assert "2 3 score nothing" in out
    assert "best legal keep: 1 1 5 = 250" in out


def test_score_illegal_keep_json():
    result = run("score", "3", "3", "3", "1", "2", "6", "-f", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["points"] is None and data["all_score"] is False
    assert data["non_scoring"] == [2, 6]
    assert data["best_keep"]["dice"] == [1, 3, 3, 3] and data["best_keep"]["points"] == 400


def test_score_farkle_exits_1():
    result = run("score", "2", "2", "3", "3", "4", "6")
    assert result.exit_code == 1
    assert "farkle" in result.stdout
    assert "2 2 3 3 4 6 score nothing" in result.stdout


def test_score_dice_that_cannot_all_score_together():
    # every die can be in some scoring keep (2,2,2 or 2,3,4,5) but not all at once
    rules = '{"partial_straights": {"2345": 400}}'
    result = run("score", "2", "2", "2", "3", "4", "5", "--rules", rules)
    assert result.exit_code == 1
    assert "cannot all score together" in result.stdout
    assert "2 3 4 5 = 400" in result.stdout


@pytest.mark.parametrize("bad", ["7", "0"])
def test_score_die_out_of_range_exits_2(bad):
    result = run("score", "1", bad)
    assert result.exit_code == 2
    assert bad in result.stderr and result.stdout == ""


def test_score_unknown_ruleset_exits_2():
    result = run("score", "1", "--rules", "vegas")
    assert result.exit_code == 2
    assert "vegas" in result.stderr


def test_score_unknown_knob_exits_2():
    result = run("score", "1", "--rules", '{"base": "standard", "three_fives": 700}')
    assert result.exit_code == 2
    assert "three_fives" in result.stderr


def test_score_bad_knob_value_exits_2():
    result = run("score", "1", "--rules", '{"opening": -5}')
    assert result.exit_code == 2
    assert "opening" in result.stderr


def test_score_with_playmonster():
    result = run("score", "1", "1", "1", "-r", "playmonster")
    assert result.exit_code == 0
    assert result.stdout.startswith("1 1 1: 300 ")
    assert "playmonster" in result.stdout


def test_score_inline_json_rules():
    result = run("score", "3", "3", "3", "3", "--rules", '{"base": "standard", "n_of_a_kind": "doubling"}')
    assert result.exit_code == 0
    assert result.stdout.startswith("3 3 3 3: 600 ")


def test_score_rules_from_json_file(tmp_path):
    path = tmp_path / "house.json"
    path.write_text(json.dumps({"base": "standard", "n_of_a_kind": "doubling", "three_pairs": 750}))
    assert run("score", "1", "1", "1", "1", "--rules", str(path)).stdout.startswith("1 1 1 1: 2000 ")
    assert run("score", "2", "2", "3", "3", "6", "6", "--rules", str(path)).stdout.startswith("2 2 3 3 6 6: 750 ")


def test_score_rules_from_toml_file(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text('base = "playmonster"\nsplit_kinds = false\n\n[partial_straights]\n"12345" = 500\n')
    assert run("score", "1", "1", "1", "1", "-r", str(path)).stdout.startswith("1 1 1 1: 1000 ")
    assert run("score", "1", "1", "1", "-r", str(path)).stdout.startswith("1 1 1: 300 ")
    assert run("score", "5", "4", "3", "2", "1", "-r", str(path)).stdout.startswith("1 2 3 4 5: 500 ")


def test_score_bad_ruleset_file_exits_2(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("target = 0\n")
    result = run("score", "1", "-r", str(path))
    assert result.exit_code == 2
    assert "target" in result.stderr
    missing = run("score", "1", "-r", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2


def test_score_union_of_more_than_six_dice():
    result = run("score", "5", "5", "5", "5", "5", "5", "5")
    assert result.exit_code == 0
    assert ": 3050 " in result.stdout  # six 5s + a single 5


def test_score_union_with_a_non_scoring_die_does_not_claim_a_farkle():
    result = run("score", "1", "1", "1", "1", "1", "1", "2")
    assert result.exit_code == 1
    assert "2 score nothing" in result.stdout
    assert "farkle" not in result.stdout
    assert "best legal keep: 1 1 1 1 1 1 = 3000" in result.stdout


def test_rules_show_two_triplets_off_means_two_triples_added_up():
    result = run("rules", "show", '{"two_triplets": null}')
    assert result.exit_code == 0
    assert "two triples added up" in result.stdout


# ---- rules list / show ----------------------------------------------------------------------------
def test_rules_list():
    result = run("rules", "list")
    assert result.exit_code == 0
    assert "standard" in result.stdout and "playmonster" in result.stdout


def test_rules_list_json():
    result = run("rules", "list", "-f", "json")
    assert result.exit_code == 0
    assert [r["name"] for r in json.loads(result.stdout)] == ["standard", "playmonster"]


ODDS = {6: "5/216", 5: "25/324", 4: "17/108", 3: "5/18", 2: "4/9", 1: "2/3"}


@pytest.mark.parametrize("name", ["standard", "playmonster"])
def test_rules_show_text(name):
    result = run("rules", "show", name)
    assert result.exit_code == 0
    out = result.stdout
    for fraction in ODDS.values():
        assert fraction in out
    assert "2.31%" in out and "43.2" in out  # rules.md: 2.31 %, 1 in 43.2
    three_ones = next(line for line in out.splitlines() if "three 1s" in line)
    assert numbers(three_ones)[-1] == (1000 if name == "standard" else 300)
    assert "opening" in out and "split_kinds" in out


@pytest.mark.parametrize("name", ["standard", "playmonster"])
def test_rules_show_json(name):
    result = run("rules", "show", name, "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["name"] == name
    assert data["rules"]["three_ones"] == (1000 if name == "standard" else 300)
    assert data["rules"]["opening"] == 500 and data["rules"]["target"] == 10000
    odds = {row["dice"]: row["fraction"] for row in data["farkle_odds"]}
    assert odds == ODDS
    for row in data["farkle_odds"]:
        num, den = map(int, row["fraction"].split("/"))
        assert row["probability"] == pytest.approx(num / den)
    scoring = {row["combination"]: row["points"] for row in data["scoring"]}
    assert scoring["single 1"] == 100 and scoring["single 5"] == 50
    assert scoring["three pairs"] == 1500 and scoring["two triplets"] == 2500


def test_rules_show_custom_json_has_new_odds_and_nulls():
    result = run("rules", "show", '{"three_pairs": null, "n_of_a_kind": "doubling"}', "-f", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["name"].startswith("custom")
    assert data["rules"]["three_pairs"] is None
    odds = {row["dice"]: row["fraction"] for row in data["farkle_odds"]}
    assert odds[6] == "5/162"  # three pairs off: see test_rules_examples for the count
    assert odds[5] == ODDS[5]
    scoring = {row["combination"]: row["points"] for row in data["scoring"]}
    assert scoring["three pairs"] is None
    assert scoring["four 3s"] == 600  # doubling: per-face rows


def test_rules_show_custom_text_marks_missing_combinations():
    result = run("rules", "show", '{"straight": null}')
    assert result.exit_code == 0
    straight = next(line for line in result.stdout.splitlines() if "straight" in line and "1-2-3" in line)
    assert "not a combination" in straight


def test_rules_show_from_toml_and_json_files(tmp_path):
    toml_path = tmp_path / "r.toml"
    toml_path.write_text('three_pairs = 750\nopening = 1000\n')
    json_path = tmp_path / "r.json"
    json_path.write_text('{"three_pairs": 750, "opening": 1000}')
    shown = [json.loads(run("rules", "show", str(p), "-f", "json").stdout)["rules"] for p in (toml_path, json_path)]
    assert shown[0] == shown[1]
    assert shown[0]["three_pairs"] == 750 and shown[0]["opening"] == 1000


@pytest.mark.parametrize(
    "spec, word",
    [
        ("vegas", "vegas"),
        ('{"opening": true}', "opening"),
        ('{"n_of_a_kind": "tripling"}', "n_of_a_kind"),
        ("{not json", "JSON"),
    ],
)
def test_rules_show_bad_ruleset_exits_2(spec, word):
    result = run("rules", "show", spec)
    assert result.exit_code == 2
    assert word in result.stderr
    assert result.stdout == ""

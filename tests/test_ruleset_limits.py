"""Absurd rulesets (issue 11 item 3): knob values past the documented limits are a
RulesetError naming the knob and the limit (exit 2 on the command line, bad_event in a log);
rulesets inside the limits that the turn solver cannot afford are refused by its state
budget, and every command that needs the solved turn says so in one line and carries on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.model import BadLine
from pipeline.reader import parse_line
from pipeline.rules import KNOB_NAMES, Ruleset, RulesetError
from pipeline.rules.ruleset import MAX_PENALTY_AFTER, MAX_POINTS, MAX_TARGET
from pipeline.strategy import solver
from pipeline.strategy.solver import SOLVER_STATE_BUDGET, SolverBudgetError, check_budget, refusals, state_count

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
NUMBER_KNOBS = [
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
LIMIT = {**{k: MAX_POINTS for k in NUMBER_KNOBS}, "target": MAX_TARGET, "penalty_after": MAX_PENALTY_AFTER}
# Inside every knob limit, but off the grid of 50: the solver's grid is 1 (gcd of 7, 3, 11, 200, ...).
OFF_GRID = {"base": "standard", "single_one": 7, "single_five": 3, "three_ones": 11}
OFF_GRID_TEXT = json.dumps(OFF_GRID)


# ---- knob limits ---------------------------------------------------------------------------
def test_the_limits_are_the_documented_ones():
    assert (MAX_POINTS, MAX_TARGET, MAX_PENALTY_AFTER) == (100_000, 1_000_000, 1_000)
    rules_md = (ROOT / "docs" / "rules.md").read_text()
    assert "100,000" in rules_md and "1,000,000" in rules_md and "1,000" in rules_md
    assert set(NUMBER_KNOBS) < set(KNOB_NAMES)


@pytest.mark.parametrize("knob", NUMBER_KNOBS)
def test_each_number_knob_takes_its_limit_and_refuses_one_more(knob):
    assert getattr(Ruleset.from_value({knob: LIMIT[knob]}), knob) == LIMIT[knob]
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_value({knob: LIMIT[knob] + 1})
    assert str(caught.value) == (
        f"knob '{knob}' must be at most {LIMIT[knob]:,} (see the limits in docs/rules.md), got {LIMIT[knob] + 1}"
    )


def test_partial_straight_values_are_points_too():
    Ruleset.from_value({"partial_straights": {"12345": MAX_POINTS}})
    with pytest.raises(RulesetError, match=r"'partial_straights' value for '12345' must be at most 100,000"):
        Ruleset.from_value({"partial_straights": {"12345": MAX_POINTS + 1}})


@pytest.mark.parametrize(
    "value, shown",
    [
        ({"straight": 10_000_000}, "knob 'straight' must be at most 100,000"),
        (
            {"single_one": 1e100},
            "knob 'single_one' must be at most 100,000 (see the limits in docs/rules.md), got 1e+100",
        ),
        ({"target": 10**5000}, "got (a value too large to show)"),
        ({"opening": 10**12}, "knob 'opening' must be at most 100,000"),
    ],
)
def test_absurd_values_are_refused_with_a_short_message(value, shown):
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_value(value)
    assert shown in str(caught.value) and len(str(caught.value)) < 160


@pytest.mark.parametrize(
    "command",
    [
        ["rules", "show", "{}"],
        ["score", "1", "-r", "{}"],
        ["audit", str(ROOT / "sample_logs" / "standard.jsonl"), "-r", "{}"],
    ],
)
def test_the_cli_exits_2_naming_the_knob(command):
    absurd = json.dumps({"straight": 10_000_000})
    result = runner.invoke(app, [absurd if c == "{}" else c for c in command])
    assert result.exit_code == 2, result.output
    assert "knob 'straight' must be at most 100,000" in result.output


def test_a_log_with_an_absurd_ruleset_is_a_bad_event_line():
    line = json.dumps(
        {
            "game_id": "g",
            "seq": 1,
            "type": "game_start",
            "players": ["a"],
            "rules": {"base": "standard", "single_one": 1e100},
        }
    ).encode()
    bad = parse_line(line, "f", 1)
    assert isinstance(bad, BadLine) and bad.code == "bad_event"
    assert bad.reason.startswith("invalid 'rules': knob 'single_one' must be at most 100,000")


# ---- the solver's state budget -------------------------------------------------------------
def test_state_count_of_standard_by_hand():
    # standard: keep values on a grid of 50; the largest keep is six of a kind, 3000 = 60 steps;
    # two bank floors (opening 500 while not opened, min_bank 0 after); 6 dice counts.
    rules = Ruleset.builtin("standard")
    cap = solver.default_cap(rules)
    assert state_count(rules) == 2 * 6 * (cap // 50 + 60 + 1)
    # min_bank = opening: one floor
    one_floor = Ruleset.from_value({"min_bank": 500})
    assert state_count(one_floor) == 6 * (solver.default_cap(one_floor) // 50 + 60 + 1)


def test_an_off_grid_ruleset_is_refused_before_anything_is_built(monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the value table was built")

    monkeypatch.setattr(solver, "_solve_floor", must_not_run)
    rules = Ruleset.from_value(OFF_GRID)
    assert solver.moves(rules).granularity == 1
    assert state_count(rules) > SOLVER_STATE_BUDGET
    with pytest.raises(SolverBudgetError) as caught:
        solver.solve_uncached(rules)
    message = str(caught.value)
    assert message.startswith(
        'ruleset {"base":"standard","single_one":7,"single_five":3,"three_ones":11} is not solved'
    )
    assert f"over the budget of {SOLVER_STATE_BUDGET:,}" in message and "grid 1" in message


def test_the_budget_is_an_exact_bound(monkeypatch):
    rules = Ruleset.from_value({"single_five": 25})  # grid 25: a real house table
    needed = state_count(rules)
    monkeypatch.setattr(solver, "SOLVER_STATE_BUDGET", needed)
    check_budget(rules)
    assert solver.solve_uncached(rules).granularity == 25
    monkeypatch.setattr(solver, "SOLVER_STATE_BUDGET", needed - 1)
    with pytest.raises(SolverBudgetError):
        solver.solve_uncached(rules)


def test_refusals_collects_each_message_once_and_only_inside_the_block():
    rules = Ruleset.from_value(OFF_GRID)
    with refusals() as collected:
        for _ in range(3):
            with pytest.raises(SolverBudgetError):
                solver.solve(rules)
    assert len(collected) == 1 and "is not solved" in collected[0]
    with pytest.raises(SolverBudgetError):
        solver.solve(rules)
    assert len(collected) == 1


def test_real_house_rules_fit_the_budget():
    for value in (
        "standard",
        "playmonster",
        {"n_of_a_kind": "doubling", "six_kind": 10000},
        {"single_five": 25, "three_pairs": 750, "opening": 1000},
        {"partial_straights": {"12345": 500, "23456": 750}, "min_bank": 350},
    ):
        check_budget(Ruleset.from_value(value))


# ---- every caller of the solver carries on without it -----------------------------------
def test_rules_show_prints_everything_else_and_one_note():
    text = runner.invoke(app, ["rules", "show", OFF_GRID_TEXT])
    assert text.exit_code == 0, text.output
    assert "Exact farkle odds" in text.stdout and "Solved turn" not in text.stdout
    notes = [line for line in text.stderr.splitlines() if line.startswith("note:")]
    # one note per solver: the single turn's, and the two-player game's (its own budget)
    assert len(notes) == 2 and "is not solved:" in notes[0] and "not solved for two players" in notes[1]
    as_json = runner.invoke(app, ["rules", "show", OFF_GRID_TEXT, "-f", "json"])
    data = json.loads(as_json.stdout)
    assert data["strategy"] is None and data["win_probability"] is None and len(data["farkle_odds"]) == 6


@pytest.fixture(scope="module")
def mixed_dataset(tmp_path_factory):
    """Games under standard and under the off-grid ruleset, ingested."""
    tmp = tmp_path_factory.mktemp("mixed")
    log = tmp / "games.jsonl"
    made = runner.invoke(
        app, ["simulate", "-n", "6", "--seed", "3", "-r", "standard", "-r", OFF_GRID_TEXT, "-o", str(log)]
    )
    assert made.exit_code == 0, made.output
    out = tmp / "ds"
    assert runner.invoke(app, ["ingest", str(log), "-o", str(out)]).exit_code == 0
    games = [json.loads(line) for line in log.read_text().splitlines()]
    off_grid = {g["game_id"] for g in games if g["type"] == "game_start" and isinstance(g["rules"], dict)}
    assert off_grid and len(off_grid) < 6
    return log, out, off_grid


def test_stats_decisions_quality_judges_the_rest_and_says_what_it_left_out(mixed_dataset):
    _, out, off_grid = mixed_dataset
    result = runner.invoke(app, ["stats", str(out), "-s", "decisions-quality", "-f", "json"])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "is not solved" in notes[0] and "not judged" in notes[0]

    def overall(*filters):
        done = runner.invoke(app, ["stats", str(out), "-s", "decisions-quality", "-f", "json", *filters])
        rows = json.loads(done.stdout)["tables"]["decision_quality"]
        return next(r for r in rows if r["scope"] == "overall")

    everything, standard, unsolved = overall(), overall("--rules", "standard"), overall("--rules", OFF_GRID_TEXT)
    assert unsolved["judged"] == 0 and unsolved["not_judged"] == unsolved["choices"] > 0
    assert standard["judged"] > 0 and everything["judged"] == standard["judged"]
    assert everything["choices"] == standard["choices"] + unsolved["choices"]


def test_report_is_written_with_one_note(mixed_dataset, tmp_path):
    _, out, _ = mixed_dataset
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").stat().st_size > 0
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "is not solved" in notes[0]


def test_coach_says_why_nothing_is_judged(mixed_dataset):
    log, _, off_grid = mixed_dataset
    result = runner.invoke(app, ["audit", str(log), "--game", sorted(off_grid)[0], "--coach"])
    assert result.exit_code == 0, result.output
    assert re.search(r"note: game \S+: ruleset .* is not solved: it needs [\d,]+ solver states", result.stderr)


def test_simulate_with_the_optimal_bot_refuses_before_writing(tmp_path):
    out = tmp_path / "sim.jsonl"
    result = runner.invoke(
        app, ["simulate", "-n", "2", "--seed", "1", "--bots", "optimal", "-r", OFF_GRID_TEXT, "-o", str(out)]
    )
    assert result.exit_code == 2
    assert "the optimal bot cannot play: ruleset" in result.output and not out.exists()

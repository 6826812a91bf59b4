"""The two-player winning chances (pipeline.strategy.race): checked against an independent
brute force (tests/race_brute.py), against their own equations, and where users see them
(rules show, rules solve, advise)."""

from __future__ import annotations

from importlib.resources import files

import json
import random

import numpy as np
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.rules import Ruleset
from pipeline.solved import headline as shipped_headlines
from pipeline.solved import tables as race_tables
from pipeline.strategy import race
from pipeline.strategy.advice import advise
from pipeline.strategy.solver import solve

from tests.race_brute import brute_force

SMALL = {"base": "standard", "target": 1000}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Custom rulesets solve into a cache of the test's own."""
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))
    race_tables.race.cache_clear()
    yield tmp_path / "cache"
    race_tables.race.cache_clear()


@pytest.mark.parametrize(
    "spec",
    [
        {"base": "standard", "target": 300},
        {"base": "playmonster", "target": 400},
        {"base": "standard", "opening": 0, "min_bank": 200, "single_five": 100, "target": 500},
    ],
    ids=["standard-300", "playmonster-400", "no-opening-min-bank-200-grid-100"],
)
def test_brute_force_value_iteration_agrees(spec):
    rules = Ruleset.from_value(spec)
    expected, g = brute_force(rules)
    solved = race.solve_table(rules)
    assert g == race.race_moves(rules).granularity
    assert solved.w.shape == expected.shape
    assert np.abs(solved.w - expected).max() < 1e-9
    assert solved.bound < 1e-12


@pytest.mark.parametrize(
    "spec",
    [SMALL, {"base": "standard", "opening": 0, "min_bank": 200, "single_five": 100, "target": 500}],
    ids=["standard-1000", "no-opening-min-bank-200-grid-100"],
)
def test_the_judges_roll_values_are_the_solvers_to_the_last_bit(spec):
    """The judge values choices from `turn_rolls` (the solver's `turn_values` without the
    slopes, written apart so that the bulk judge does not carry them): every pair's top and
    rolling value must be the solver's exactly, and the stored float32 table their rounding."""
    rules = Ruleset.from_value(spec)
    solved = race_tables.race(rules)
    m, ft, k = solved.moves, solved.final, solved.n_levels
    kernel = race.kernel()
    starts, stored = race_tables.turn_rolls(rules)
    for a in range(k):
        for b in range(k):
            args = (a, b, 1.0 - solved.w[b, a], k, solved.w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor,
                    m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv)  # fmt: skip
            top, _value, _slope, roll = kernel["turn_values"](*args)
            top_r, roll_r = kernel["turn_rolls"](*args)
            assert top_r == top, (a, b)
            assert np.array_equal(roll_r, roll[:top]), (a, b)
            i = a * k + b
            assert starts[i + 1] - starts[i] == top
            assert np.array_equal(stored[starts[i] : starts[i + 1]], roll[:top, 1:].astype(np.float32)), (a, b)


@pytest.mark.parametrize(
    "spec",
    [SMALL, {"base": "standard", "opening": 0, "min_bank": 200, "single_five": 100, "target": 500}],
    ids=["standard-1000", "no-opening-min-bank-200-grid-100"],
)
def test_final_turn_rolling_read_off_its_tables_is_the_sum_over_outcomes_to_the_last_bit(spec):
    """The judge values rolling in the final turn by `final_roll` (a lookup in y or z) instead
    of summing the roll's outcomes: the two must agree exactly at every state the tables
    cover, and the lookup must decline (-1) only where they do not."""
    rules = Ruleset.from_value(spec)
    m, ft = race.race_moves(rules), race.final_turn(rules)
    kernel = race.kernel()
    sure = kernel["sure_rolls"](m.roll_lo, m.r_prob, m.opt_lo)
    rng = random.Random(7)
    states = set()
    for o in (0, 1):  # the edges (level with the lead, at the level that wins, the cap), and a sample
        for d in {0, 1, 2, ft.d_cap - 1, ft.d_cap, ft.d_cap + 1, *rng.sample(range(3, ft.d_cap - 1), 8)}:
            win = int(ft.win_level[o, min(d, ft.d_cap)])
            for p in {0, d - 1, d, d + 1, win - 1, win, win + 1, rng.randrange(d + m.max_dv + 3)}:
                states.update((o, d, p, n) for n in range(1, 7) if p >= 0)
    read = declined = 0
    for o, d, p, n in sorted(states):
        summed = 0.0
        for k in range(m.roll_lo[n], m.roll_lo[n + 1]):
            top = 0.0
            for opt in range(m.opt_lo[k], m.opt_lo[k + 1]):
                v = kernel["final_value"](o, d, p + m.o_dv[opt], m.o_next[opt], ft.y, ft.z, ft.win_level, ft.tie_ok,
                                          ft.d_cap)  # fmt: skip
                top = max(top, v)
            summed += m.r_prob[k] * top
        looked = kernel["final_roll"](o, d, p, n, ft.y, ft.z, ft.win_level, ft.tie_ok, ft.d_cap, sure)
        if looked == -1.0:
            declined += 1
            assert d < ft.d_cap and ft.tie_ok[o, d] and p == d, (o, d, p, n)
        else:
            read += 1
            assert looked == summed, (o, d, p, n)
    assert read > declined > 0


def test_more_points_can_hurt_so_no_keep_is_pruned():
    """At target 300 (opening 500) a total reaching the target hands the other player a final
    turn with a fair chance: a player at 50 with 150 in the turn and 3 dice is better off
    with the keep worth 50 than the one worth 100 (the brute force found it)."""
    rules = Ruleset.from_value({"base": "standard", "target": 300})
    solved = race.Race(race.solve_table(rules))
    view = solved.turn(50, 0)
    assert view.value(4, 3) > view.value(5, 3) + 1e-3


def test_every_pair_satisfies_its_own_equations():
    rules = Ruleset.from_value(SMALL)
    table = race.solve_table(rules)
    solved = race.Race(table)
    k = solved.n_levels
    for a in range(k):
        for b in range(k):
            view = solved.turn(a * 50, b * 50)
            assert abs(view.value(0, 6) - table.w[a, b]) < 1e-12
            assert abs(view.farkle_value() - (1.0 - table.w[b, a])) < 1e-15
    assert ((table.w > 0) & (table.w < 1)).all()
    assert 0.5 < table.w[0, 0] < 0.6  # moving first is an advantage


def test_final_turn_is_a_race_for_points():
    rules = Ruleset.builtin("standard")
    ft = race.final_turn(rules)
    for opened in (0, 1):
        chances = ft.catch_up[opened, 1 : ft.d_cap]
        assert (np.diff(chances) <= 1e-15).all()  # more to catch up, less chance
    assert ft.catch_up[1, ft.d_cap - 1] < race.CATCH_UP_EPS * 10
    # banking in the final turn: above the leader wins, level ties, below loses
    assert ft.bank(True, 10, 11) == 1.0 and ft.bank(True, 10, 10) == 0.5 and ft.bank(True, 10, 9) == 0.0
    # the unopened trailer must reach the opening too: a lead of 50 needs 500 in the turn
    assert ft.value(False, 1, 0, 6) == pytest.approx(ft.value(False, 9, 0, 6))
    assert ft.value(False, 1, 0, 6) > ft.value(False, 10, 0, 6)


def test_refusals_are_one_line_and_name_the_ruleset():
    penalty = Ruleset.from_value({"base": "standard", "farkle_penalty": 500})
    assert "farkle penalty" in race.refusal(penalty)
    with pytest.raises(race.RaceUnsolved):
        race.check(penalty)
    huge = Ruleset.from_value({"base": "standard", "single_five": 51, "target": 100000})
    message = race.refusal(huge)
    assert message is not None and "budget" in message and "\n" not in message
    assert race.refusal(Ruleset.builtin("standard")) is None


def test_refusal_reads_a_rounds_knob_and_a_null_target_when_they_exist():
    """`rounds` and a null `target` come with another branch: read with getattr, so the
    refusal works as soon as the knobs exist."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class WithRounds(Ruleset):
        rounds: int | None = None

    assert "rounds" in race.refusal(WithRounds(rounds=10))
    assert "no target" in race.refusal(dataclasses.replace(Ruleset(), target=None))


def test_shipped_tables_load_and_are_the_fixed_point_of_their_own_equations():
    """Each shipped entry, re-solved from the entries with a larger sum of totals (which it
    depends on), comes out the same: the table reproduces itself. A sample of pairs, the
    first player's among them, so the check runs in seconds."""
    rng = random.Random(7)
    for name in race_tables.SHIPPED:
        rules = Ruleset.builtin(name)
        table = race_tables.load(rules)
        assert table is not None, f"{name}: no shipped table (farkle-logs rules solve {name})"
        assert race_tables.decode(race_tables.encode(table), rules) is not None
        k = race.levels(rules)
        m, ft = race.race_moves(rules), race.final_turn(rules)
        solve_pair = race.kernel()["solve_pair"]
        pairs = [(0, 0), (0, 1), (k - 1, k - 1)] + [tuple(sorted(rng.sample(range(k), 2))) for _ in range(6)]
        for a, b in pairs:
            w = table.w.copy()
            x, y, bound, _ = solve_pair(
                a, b, 0.5, race.FIXED_POINT_TOL, k, w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor,
                m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv,
            )  # fmt: skip
            assert abs(x - table.w[a, b]) < 1e-12 and abs(y - table.w[b, a]) < 1e-12, (name, a, b)


def test_shipped_tables_are_the_bytes_rules_solve_writes_today():
    """A shipped file written before a change of the ruleset's text or of the table's
    metadata (a new knob, say) still loads, yet `rules solve NAME` would no longer write it
    byte for byte: re-encoding what was loaded must give the shipped bytes."""
    for name in race_tables.SHIPPED:
        rules = Ruleset.builtin(name)
        shipped = (files("pipeline.solved") / "data" / f"{name}.npz").read_bytes()
        assert race_tables.encode(race_tables.load(rules)) == shipped, f"regenerate: farkle-logs rules solve {name}"


def test_rules_solve_writes_a_table_that_loads_and_is_the_same_each_time(tmp_path):
    runner = CliRunner()
    spec = json.dumps(SMALL)
    first = runner.invoke(app, ["rules", "solve", spec, "--out", str(tmp_path / "a.npz")])
    second = runner.invoke(app, ["rules", "solve", spec, "--out", str(tmp_path / "b.npz")])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    rules = Ruleset.from_value(SMALL)
    table = race_tables.decode((tmp_path / "a.npz").read_bytes(), rules)
    assert table is not None and table.w[0, 0] == race.solve_table(rules).w[0, 0]
    assert f"first player wins {table.w[0, 0]:.3%}" in first.output
    assert race_tables.decode((tmp_path / "a.npz").read_bytes(), Ruleset.builtin("standard")) is None
    # the headline beside it, the same each time, with the table's first-player figure
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    written = json.loads((tmp_path / "a.json").read_text())
    assert {k: written[k] for k in ("rules", "headline")} == {
        "rules": rules.to_json(),
        "headline": race.headline(table),
    }
    assert written["headline"]["first_player"] == table.w[0, 0]
    assert written["turn"] == solve(rules).headline() and len(written["farkle_odds"]) == 6


def test_shipped_headlines_are_those_of_the_shipped_tables():
    """What `rules show` reads of a built-in is what its table gives, byte for byte as `rules
    solve NAME` writes it (rerun it when the table or the headline's fields change)."""
    for name in race_tables.SHIPPED:
        rules = Ruleset.builtin(name)
        table = race_tables.load(rules)
        expected = shipped_headlines.sidecar(rules, race.headline(table))
        path = shipped_headlines.sidecar_path(race_tables.shipped_path(name))
        assert path.read_bytes() == expected, f"{name}: rerun farkle-logs rules solve {name}"
        assert shipped_headlines.shipped_headline(rules) == race.headline(table)
    assert shipped_headlines.shipped_headline(Ruleset.from_value(SMALL)) is None


@pytest.mark.parametrize("name", race_tables.SHIPPED)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_rules_show_of_a_builtin_prints_from_its_sidecar_what_the_solvers_give(name, fmt, monkeypatch):
    """A built-in's turn figures and farkle odds are read from the file shipped beside its
    table (no solve): `rules show` prints the same, byte for byte, as when they are worked out."""
    import pipeline.strategy
    from pipeline.rules import describe

    runner = CliRunner()
    shipped = runner.invoke(app, ["rules", "show", name, "-f", fmt])
    monkeypatch.setattr(shipped_headlines, "shipped_turn", lambda _rules: None)
    solved = runner.invoke(app, ["rules", "show", name, "-f", fmt])
    assert shipped.exit_code == solved.exit_code == 0, shipped.output + solved.output
    assert shipped.stdout == solved.stdout
    monkeypatch.undo()
    monkeypatch.setattr(pipeline.strategy, "solve", lambda *_: pytest.fail("the turn was solved"))
    monkeypatch.setattr(describe, "odds_rows", lambda *_: pytest.fail("the odds were worked out"))
    assert runner.invoke(app, ["rules", "show", name, "-f", fmt]).stdout == shipped.stdout


def test_a_sidecar_without_the_turn_figures_or_for_other_rules_is_not_read(tmp_path, monkeypatch):
    rules = Ruleset.builtin("standard")
    fake = tmp_path / "standard.npz"
    monkeypatch.setattr(shipped_headlines, "shipped_path", lambda _name: fake)
    headline = {"first_player": 0.5, "players": 2}
    fake.with_suffix(".json").write_text(json.dumps({"rules": rules.to_json(), "headline": headline}))
    assert shipped_headlines.shipped_turn(rules) is None and shipped_headlines.shipped_headline(rules) == headline
    written = json.loads(shipped_headlines.sidecar(rules, headline))
    written["farkle_odds"] = written["farkle_odds"][1:]  # a die count missing
    fake.with_suffix(".json").write_text(json.dumps(written))
    assert shipped_headlines.shipped_turn(rules) is None
    fake.with_suffix(".json").write_bytes(shipped_headlines.sidecar(Ruleset.from_value(SMALL), headline))
    assert shipped_headlines.shipped_turn(rules) is None


def test_rules_show_reads_a_builtin_from_its_headline_and_ignores_one_for_other_rules(tmp_path, monkeypatch):
    """With the table gone, the shipped headline still gives the figure; a headline written
    for other rules is not believed."""
    rules = Ruleset.builtin("standard")
    expected = shipped_headlines.shipped_headline(rules)
    monkeypatch.setattr(race_tables, "load", lambda _rules: None)
    monkeypatch.setattr(race_tables, "load_or_solve", lambda *_: pytest.fail("the table was read"))
    shown = json.loads(CliRunner().invoke(app, ["rules", "show", "standard", "-f", "json"]).stdout)
    assert expected is not None and shown["win_probability"] == expected
    # the rules are compared as rules: a sidecar written before a knob existed still holds
    older = json.loads(rules.to_json())
    older.pop("rounds")  # a knob the file does not name is at its default
    fake = tmp_path / "standard.npz"
    fake.with_suffix(".json").write_text(json.dumps({"rules": json.dumps(older), "headline": expected}))
    monkeypatch.setattr(shipped_headlines, "shipped_path", lambda _name: fake)
    assert shipped_headlines.shipped_headline(rules) == expected
    assert shipped_headlines.sidecar_path(fake) == tmp_path / "standard.json"
    assert shipped_headlines.sidecar_path(tmp_path / "t.json") == tmp_path / "t.json.json"
    other = shipped_headlines.sidecar(Ruleset.from_value(SMALL), {"first_player": 0.25, "players": 2})
    fake.with_suffix(".json").write_bytes(other)
    assert shipped_headlines.shipped_headline(rules) is None


def test_rules_show_gives_the_first_player_advantage():
    runner = CliRunner()
    result = runner.invoke(app, ["rules", "show", "standard", "-f", "json"])
    assert result.exit_code == 0, result.output
    win = json.loads(result.output)["win_probability"]
    assert 0.0 <= win["first_player"] <= 1.0
    assert win["first_player"] == race_tables.load(Ruleset.builtin("standard")).w[0, 0]
    text = runner.invoke(app, ["rules", "show", "standard"]).output
    assert f"first player wins {win['first_player']:.3%} under best play by both, two players" in text


def test_rules_show_of_a_penalty_ruleset_says_why_there_is_no_figure():
    runner = CliRunner()
    result = runner.invoke(app, ["rules", "show", '{"base":"standard","farkle_penalty":500}', "-f", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["win_probability"] is None
    assert "farkle penalty" in result.stderr


def test_advise_lists_every_choice_and_marks_the_best():
    runner = CliRunner()
    spec = json.dumps(SMALL)
    result = runner.invoke(app, ["advise", "--rules", spec, "--scores", "500,900", "--roll", "115234", "-f", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    keeps = {tuple(c["dice"]): c for c in out["choices"]}
    assert set(keeps) == {(1,), (5,), (1, 1), (1, 5), (1, 1, 5)}
    best = max(c["win_probability"] for c in out["choices"])
    assert out["win_probability"] == best
    assert [c["best"] for c in out["choices"]].count(True) == 1
    solved = race_tables.race(Ruleset.from_value(SMALL))
    view = solved.turn(500, 900)
    assert keeps[(1, 1)]["win_probability"] == pytest.approx(view.value(4, 4), abs=1e-15)
    # the turn start: only rolling, worth the table's entry
    start = json.loads(runner.invoke(app, ["advise", "--rules", spec, "--scores", "500,900", "-f", "json"]).stdout)
    assert [c["choice"] for c in start["choices"]] == ["roll"]
    assert start["win_probability"] == pytest.approx(solved.w[10, 18], abs=1e-12)


def test_advise_in_the_final_turn_never_banks_behind_the_leader():
    solved = race_tables.race(Ruleset.from_value(SMALL))
    advice = advise(solved, None, 500, 1100, turn_points=450, dice=2)
    assert advice.final_turn
    bank = next(c for c in advice.choices if c.kind == "bank")
    assert bank.chance == 0.0 and advice.best.kind == "roll"
    ahead = advise(solved, None, 500, 1100, turn_points=650, dice=2)
    assert next(c for c in ahead.choices if c.kind == "bank").chance == 1.0
    level = advise(solved, None, 500, 1100, turn_points=600, dice=1)
    assert next(c for c in level.choices if c.kind == "bank").chance == 0.5


def test_advise_bad_input_is_one_line_exit_2():
    runner = CliRunner()
    for args in (
        ["--scores", "500"],
        ["--scores", "500,900", "--roll", "1179"],
        ["--scores", "520,900"],
        ["--scores", "10000,900"],
        ["--scores", "500,900", "--roll", "115", "--dice", "4"],
    ):
        result = runner.invoke(app, ["advise", "--rules", json.dumps(SMALL), *args])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("error:") == 1
    penalty = runner.invoke(app, ["advise", "--rules", '{"base":"standard","farkle_penalty":500}', "--scores", "0,0"])
    assert penalty.exit_code == 2 and "farkle penalty" in penalty.output

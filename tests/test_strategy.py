"""The single-turn solver (issue 8, phase 1): hand-checkable states, the Bellman equations
re-checked through the public keep API (every legal keep, nothing pruned), the cap, the
precision, the bot that plays the policy, the Arrow export and `rules show`.

Figures checked against a number are derived here by hand, never copied from a run."""

from __future__ import annotations

import decimal
import json
import random
import statistics
from fractions import Fraction
from math import factorial

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.rules import Ruleset, dice_key, farkle_probability, score_table
from pipeline.strategy import BANK, MODEL_NOTE, ROLL, PolicyBot, minimum_cap, solve, solve_uncached
from pipeline.strategy.solver import moves

STANDARD = Ruleset.builtin("standard")
PLAYMONSTER = Ruleset.builtin("playmonster")
ZERO_FIVE = Ruleset.from_value({"single_five": 0})  # rules.md: a lone 5 worth 0 is no combination
# three pairs plus every 3-run: every roll of six dice scores (f_6 = 0)
SAFE_SIX = Ruleset.from_value({"partial_straights": {"123": 300, "234": 300, "345": 300, "456": 300}})
HIGH_FLOORS = Ruleset.from_value({"opening": 1000, "min_bank": 300, "n_of_a_kind": "doubling"})
NO_OPENING = Ruleset.from_value({"opening": 0})
KNOBS = [STANDARD, PLAYMONSTER, ZERO_FIVE, SAFE_SIX, HIGH_FLOORS, NO_OPENING]


def ids(rules: Ruleset) -> str:
    return rules.name if not rules.name.startswith("custom") else rules.to_json()[:60]


def rolls_of(rules: Ruleset, n: int):
    """Every multiset roll of n dice as (faces, exact probability)."""
    for row in score_table(rules).rows:
        if row.n_dice == n:
            faces = tuple(int(c) for c in row.dice)
            ways = factorial(n)
            for face in set(faces):
                ways //= factorial(faces.count(face))
            yield faces, Fraction(ways, 6**n)


# ---- hand-checkable states -----------------------------------------------------------------
@pytest.mark.parametrize("opened", [True, False])
def test_one_die_left_with_1000_points_banks(opened):
    p = solve(STANDARD)
    # One die: a 1 (+100) or a 5 (+50) is hot dice, anything else (4 in 6) a farkle.
    by_hand = (p.value(1100, 6, opened) + p.value(1050, 6, opened)) / 6
    assert p.roll_value(1000, 1, opened) == pytest.approx(by_hand, abs=1e-9)
    # Rolling on would need V(~1100, 6) near 3000; six dice add about one turn's value (~600).
    assert p.value(1100, 6, opened) < 1100 + 2 * p.turn_value(True)
    assert p.bank_value(1000, 1, opened) == 1000
    assert p.roll_value(1000, 1, opened) < 1000
    assert p.best_action(1000, 1, opened) == BANK
    assert p.action_loss(1000, 1, opened, ROLL) == pytest.approx(1000 - by_hand)
    assert p.action_loss(1000, 1, opened, BANK) == 0


@pytest.mark.parametrize("opened", [True, False])
def test_six_dice_with_50_points_rolls(opened):
    p = solve(STANDARD)
    # Any non-farkle roll (211 in 216) lets you keep >= 50 more; banking 100 afterwards is
    # a lower bound when opened, so rolling is worth at least 211/216 * 100 > 50.
    assert p.roll_value(50, 6, opened) >= 211 / 216 * 100 > 50
    assert p.bank_value(50, 6, opened) == (50 if opened else 0)
    assert p.best_action(50, 6, opened) == ROLL


def test_unopened_below_opening_banking_is_worth_nothing():
    p = solve(STANDARD)
    assert p.bank_value(450, 1, False) == 0 and p.best_action(450, 1, False) == ROLL
    assert p.bank_value(450, 1, True) == 450 and p.best_action(450, 1, True) == BANK
    assert p.bank_value(500, 1, False) == 500
    for n in range(1, 7):
        assert p.bank_threshold(n, False) >= 500
    h = solve(HIGH_FLOORS)
    assert h.floor(True) == 300 and h.floor(False) == 1000
    assert h.bank_value(250, 1, True) == 0 and h.bank_value(300, 1, True) == 300
    assert h.bank_value(950, 1, False) == 0


def test_no_opening_makes_opened_irrelevant():
    p = solve(NO_OPENING)
    assert p.turn_value(False) == p.turn_value(True)
    assert p.headline()["bank_threshold"]["opened"] == p.headline()["bank_threshold"]["not_opened"]
    # and the opened figures do not depend on the opening knob at all
    assert p.turn_value(True) == solve(STANDARD).turn_value(True)


def test_values_beyond_cap_follow_the_closed_form():
    p = solve(STANDARD)
    # one die beyond the cap: bank after any keep, so roll = (1 - 2/3) p + (100 + 50) / 6
    for points in (p.cap, p.cap + 250, 10 * p.cap):
        assert p.roll_value(points, 1, True) == pytest.approx(points / 3 + 25)
        assert p.best_action(points, 1, True) == BANK


def test_turn_value_is_rolling_six_dice_from_zero_and_solve_is_cached():
    p = solve(STANDARD)
    assert solve(STANDARD) is p
    assert p.turn_value(True) == p.roll_value(0, 6, True)
    assert p.bank_value(0, 6, True) == 0
    # not opened is worse (a floor can only take options away)
    assert 0 < p.turn_value(False) < p.turn_value(True)
    assert solve(PLAYMONSTER).turn_value(True) < p.turn_value(True)  # three 1s worth 300, not 1000


@pytest.mark.parametrize("rules", KNOBS, ids=ids)
def test_value_never_falls_with_more_points_and_never_below_banking(rules):
    p = solve(rules)
    g = p.granularity
    for opened in (False, True):
        for n in range(1, 7):
            values = [p.value(k * g, n, opened) for k in range(p.cap // g + 5)]
            assert all(b >= a - 1e-9 for a, b in zip(values, values[1:]))
            assert all(v >= p.bank_value(k * g, n, opened) for k, v in enumerate(values))


def test_knobs_order_the_figures():
    # a lone 5 worth 0 is not a combination (rules.md, "Values"): a roll of 5s and
    # non-scoring dice is a farkle, so the turn is worth less than with 5s at 25 or 50
    evs = [solve(Ruleset.from_value({"single_five": v})).turn_value(True) for v in (0, 25, 50)]
    assert evs[0] < evs[1] < evs[2]
    assert solve(ZERO_FIVE).farkle[0] == pytest.approx(float(farkle_probability(1, ZERO_FIVE)))
    assert farkle_probability(1, ZERO_FIVE) == Fraction(5, 6)  # only a 1 scores
    assert solve(ZERO_FIVE).granularity == 100
    assert solve(Ruleset.from_value({"single_five": 25})).granularity == 25


def test_rolls_that_cannot_farkle_are_never_banked():
    assert farkle_probability(6, SAFE_SIX) == 0
    p = solve(SAFE_SIX)
    assert p.bank_threshold(6, True) is None
    assert p.best_action(10 * p.cap, 6, True) == ROLL
    assert p.roll_value(10 * p.cap, 6, True) > 10 * p.cap
    assert p.bank_threshold(5, True) is not None


# ---- Bellman equations through the public API (every legal keep, nothing pruned) -----------
@pytest.mark.parametrize("rules", KNOBS, ids=ids)
def test_bellman_equations_hold(rules):
    p = solve(rules)
    g = p.granularity
    rnd = random.Random(8)
    samples = {0, g, p.cap - g, p.cap, p.cap + 7 * g, (rules.opening // g) * g}
    samples |= {rnd.randrange(p.cap // g) * g for _ in range(2)}
    rolls = {n: list(rolls_of(rules, n)) for n in range(1, 7)}
    for opened in (False, True):
        for points in sorted(samples):
            for n in range(1, 7):
                expected = 0.0
                bust = Fraction(0)
                for faces, prob in rolls[n]:
                    keeps = p.keep_values(points, faces, opened)
                    if not keeps:
                        bust += prob
                        continue
                    expected += float(prob) * max(v for _, v in keeps)
                assert bust == farkle_probability(n, rules)
                assert p.roll_value(points, n, opened) == pytest.approx(expected, abs=1e-8), (points, n, opened)


def test_keep_values_lists_every_legal_keep_best_first():
    p = solve(STANDARD)
    keeps = p.keep_values(0, (1, 1, 5, 2, 3, 4), True)
    assert sorted(k for k, _ in keeps) == [(1,), (1, 1), (1, 1, 5), (1, 5), (5,)]
    values = [v for _, v in keeps]
    assert values == sorted(values, reverse=True)
    assert dict(keeps)[(1,)] == p.value(100, 5, True)
    assert dict(keeps)[(1, 1, 5)] == p.value(250, 3, True)
    assert p.best_keep(0, (5, 1, 1, 2, 3, 4), True) == keeps[0]
    assert p.keep_loss(0, (1, 1, 5, 2, 3, 4), keeps[0][0], True) == 0
    assert p.keep_loss(0, (1, 1, 5, 2, 3, 4), (5,), True) > 0
    # hot dice: keeping all of 1,1,5,5,5,5 rolls six again (four 5s + a pair of 1s = 1500)
    assert dict(p.keep_values(0, (1, 1, 5, 5, 5, 5), True))[(1, 1, 5, 5, 5, 5)] == p.value(1500, 6, True)
    assert p.keep_values(300, (2, 2, 3, 3, 4, 6), True) == [] and p.best_keep(0, (2, 3), True) is None
    with pytest.raises(ValueError, match="not a legal keep"):
        p.keep_loss(0, (1, 1, 5, 2, 3, 4), (1, 2), True)


def test_bad_states_are_rejected():
    p = solve(STANDARD)
    for points in (-50, 75, 1.5, True):
        with pytest.raises(ValueError, match="multiple of 50"):
            p.roll_value(points, 3, True)
    for dice in (0, 7):
        with pytest.raises(ValueError, match="dice left"):
            p.bank_value(100, dice, True)
    with pytest.raises(ValueError, match="action"):
        p.action_loss(100, 3, True, "pass")


# ---- the cap -------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", [STANDARD, PLAYMONSTER, ZERO_FIVE, SAFE_SIX], ids=ids)
def test_raising_the_cap_changes_nothing(rules):
    base = solve_uncached(rules)
    # Beyond the cap the large-p values are p + D_n: D_n = 0 (bank) unless n dice cannot
    # farkle. With D_n = 0 the figures are the same bit for bit; SAFE_SIX's D_6 comes from
    # an iteration, so there it is the same to the iteration's tolerance.
    exact = all(f > 0 for f in base.farkle)
    same = (lambda a, b: a == b) if exact else (lambda a, b: a == pytest.approx(b, rel=1e-12, abs=1e-9))
    for factor in (2, 3):
        bigger = solve_uncached(rules, cap=factor * base.cap)
        head, head2 = base.headline(), bigger.headline()
        assert head2["bank_threshold"] == head["bank_threshold"]
        assert same(head2["expected_turn_value"], head["expected_turn_value"])
        for opened in (False, True):
            points, bank, roll = base.states(opened)
            _, bank2, roll2 = bigger.states(opened)
            assert bank2[: len(points)] == bank
            assert same(sum(roll2[: len(points)], []), sum(roll, []))


def test_cap_is_where_banking_becomes_provably_best():
    m = moves(STANDARD)
    assert m.farkle[0] == Fraction(2, 3) and m.farkle[5] == Fraction(5, 216)
    p = solve(STANDARD)
    # one die alone needs p * 2/3 > (100 + 50) / 6, i.e. p > 37.5; six dice need far more
    assert p.cap > minimum_cap(STANDARD) > 37.5
    assert p.cap % p.granularity == 0
    # the cap is not slack: just below the six-dice threshold rolling is still right, so a
    # cap that forced a bank there would change the figures; such caps are refused
    t6 = p.bank_threshold(6, True)
    assert t6 <= p.cap and p.best_action(t6 - p.granularity, 6, True) == ROLL
    with pytest.raises(ValueError, match="cap"):
        solve_uncached(STANDARD, cap=t6 - p.granularity)
    with pytest.raises(ValueError, match="multiple"):
        solve_uncached(STANDARD, cap=p.cap + 25)


def test_float_figures_agree_with_a_40_digit_solve():
    context = decimal.Context(prec=40)

    def num(x):
        if isinstance(x, Fraction):
            return context.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
        return decimal.Decimal(x)

    with decimal.localcontext(context):
        precise = solve_uncached(STANDARD, num=num)
    p = solve(STANDARD)
    for opened in (False, True):
        _, _, roll = p.states(opened)
        s = precise._by_opened[opened]
        worst = max(
            abs(decimal.Decimal(r) - s.roll[i * 6 + n]) for i, row in enumerate(roll) for n, r in enumerate(row)
        )
        assert worst < decimal.Decimal("1e-9")


# ---- a bot that plays the policy -----------------------------------------------------------
@pytest.mark.parametrize("rules", [STANDARD, PLAYMONSTER], ids=ids)
@pytest.mark.parametrize("opened", [True, False])
def test_policy_bot_earns_the_solved_value(rules, opened):
    p = solve(rules)
    bot = PolicyBot(p)
    rng = random.Random(2026 + opened)
    banked = [bot.play_turn(rng, opened).banked for _ in range(100_000)]
    mean = statistics.fmean(banked)
    half_width = 3.29 * statistics.stdev(banked) / len(banked) ** 0.5  # 99.9 % interval
    assert abs(mean - p.turn_value(opened)) < half_width, (mean, p.turn_value(opened), half_width)


def test_policy_bot_scores_no_loss_and_a_fixed_bar_bot_does():
    p = solve(STANDARD)
    values = score_table(STANDARD).value
    rng = random.Random(7)
    bot = PolicyBot(p)
    decisions = 0
    for _ in range(1500):
        for d in bot.play_turn(rng, True).decisions:
            if d.kept is None:
                continue
            decisions += 1
            assert p.keep_loss(d.points_before, d.roll, d.kept, True) == 0
            assert p.action_loss(d.points, d.dice_left, True, d.action) == 0
    assert decisions > 3000
    # a bot that keeps every scoring die and banks at 300 gives points away
    loss = 0.0
    for _ in range(300):
        points, dice = 0, 6
        while True:
            roll = tuple(rng.randint(1, 6) for _ in range(dice))
            keeps = p.keep_values(points, roll, True)
            if not keeps:
                break
            kept = max(keeps, key=lambda kv: len(kv[0]))[0]
            loss += p.keep_loss(points, roll, kept, True)
            points += values[dice_key(kept)]
            dice = 6 if len(kept) == dice else dice - len(kept)
            action = BANK if points >= 300 else ROLL
            loss += p.action_loss(points, dice, True, action)
            if action == BANK:
                break
    assert loss > 0


# ---- export ----------------------------------------------------------------------------------
def test_arrow_export_has_every_state_and_joins():
    import polars as pl

    p = solve(STANDARD)
    table = p.to_arrow()
    assert table.num_rows == 2 * 6 * (p.cap // 50)
    assert table.schema.names == ["points", "dice_left", "opened", "bank_value", "roll_value", "value", "best_action"]
    meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    assert meta["model"] == MODEL_NOTE and json.loads(meta["rules"]) == STANDARD.to_dict()
    assert int(meta["cap"]) == p.cap and json.loads(meta["headline"])["cap"] == p.cap
    frame = pl.from_arrow(table)
    decisions = pl.DataFrame(
        {
            "points": [1000, 50, 450, 300],
            "dice_left": [1, 6, 1, 2],
            "opened": [True, False, False, True],
            "action": [ROLL, BANK, BANK, ROLL],
        }
    ).with_columns(pl.col("dice_left").cast(pl.Int8))
    joined = decisions.join(frame, on=["points", "dice_left", "opened"], how="left").with_columns(
        loss=pl.col("value") - pl.when(pl.col("action") == BANK).then("bank_value").otherwise("roll_value")
    )
    assert joined["value"].null_count() == 0
    for row in joined.iter_rows(named=True):
        assert row["loss"] == pytest.approx(
            p.action_loss(row["points"], row["dice_left"], row["opened"], row["action"])
        )
        assert row["best_action"] == p.best_action(row["points"], row["dice_left"], row["opened"])


# ---- rules show ------------------------------------------------------------------------------
def test_rules_show_prints_the_headline_figures_as_a_single_turn_model():
    runner = CliRunner()
    p = solve(PLAYMONSTER)
    text = runner.invoke(app, ["rules", "show", "playmonster"])
    assert text.exit_code == 0, text.output
    out = text.stdout
    assert "single-turn model" in out and "farkle penalties" in out
    ev_line = next(line for line in out.splitlines() if "expected turn value" in line)
    assert f"{p.turn_value(False):,.1f}" in ev_line and f"{p.turn_value(True):,.1f}" in ev_line
    one_die = next(line for line in out.splitlines() if "1 die left" in line)
    assert f"{p.bank_threshold(1, False):,}" in one_die and f"{p.bank_threshold(1, True):,}" in one_die
    data = json.loads(runner.invoke(app, ["rules", "show", "playmonster", "-f", "json"]).stdout)
    strategy = data["strategy"]
    assert strategy["model"] == MODEL_NOTE
    assert strategy["expected_turn_value"] == {"not_opened": p.turn_value(False), "opened": p.turn_value(True)}
    assert strategy["bank_threshold"]["opened"] == {str(n): p.bank_threshold(n, True) for n in range(1, 7)}
    never = runner.invoke(app, ["rules", "show", SAFE_SIX.to_json()])
    assert never.exit_code == 0, never.output
    assert next(line for line in never.stdout.splitlines() if "6 dice left" in line).count("never") == 2

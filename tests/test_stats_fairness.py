"""Fair dice give bust rates inside their intervals around the exact odds; loaded dice do not.

Two datasets:
- SYNTHETIC rolls written straight to Parquet: 240,000 rolls of fair dice from a seeded
  `random.Random`, each marked farkle or not with the rules engine's score table, as ingest
  would. Deterministic, so "the exact rate lies inside every Wilson interval" is checked
  as stated; the same with dice loaded against 1s and 5s must be flagged.
- SIMULATED logs (pipeline.simulate, fair dice) through ingest: the whole pipeline; checked
  with a margin (|z| < 3.5 for every dice count) so that a change of the simulator's random
  stream cannot make the test fail by chance.
"""

from __future__ import annotations

import random

import pytest

from pipeline.rules import Ruleset, dice_key, farkle_probability, score_table
from pipeline.stats import Filters, compute
from pipeline.stats.fixtures import write_dataset

STANDARD = Ruleset.builtin("standard")
ROLLS_PER_COUNT = 40_000


def roll_dataset(root, weights: list[float] | None, seed: int = 20261129):
    rng = random.Random(seed)
    farkle = score_table(STANDARD).farkle
    rolls = []
    for n in range(1, 7):
        for i in range(ROLLS_PER_COUNT):
            dice = rng.choices(range(1, 7), weights=weights, k=n) if weights else [rng.randint(1, 6) for _ in range(n)]
            rolls.append(
                dict(
                    game_id=f"g{i % 500}",
                    player=f"p{i % 4}",
                    dice=dice,
                    dice_count=n,
                    scored=not farkle[dice_key(dice)],
                )
            )
    games = [
        dict(game_id=f"g{i}", ruleset=STANDARD.to_json(), ruleset_name="standard", complete=True) for i in range(500)
    ]
    return write_dataset(root, {"games": games, "rolls": rolls})


def overall(table):
    return {r["dice"]: r for r in table.to_pylist() if r["scope"] == "overall"}


def test_fair_dice_stay_inside_their_intervals(tmp_path):
    t = compute(roll_dataset(tmp_path / "fair", None), Filters(), ["bust", "dice"])
    rows = overall(t["bust_rate_by_dice_left"])
    assert sorted(rows) == [1, 2, 3, 4, 5, 6]
    for n, row in rows.items():
        assert row["rolls"] == ROLLS_PER_COUNT
        assert row["exact_rate"] == pytest.approx(float(farkle_probability(n, STANDARD)))
        assert row["wilson_lo"] <= row["exact_rate"] <= row["wilson_hi"], row
        assert row["off"] is False
        assert row["wilson_hi"] - row["wilson_lo"] < 0.01  # 40,000 rolls pin the rate down
    fairness = [r for r in t["dice_fairness"].to_pylist() if r["scope"] == "overall"][0]
    assert fairness["p_value"] > 0.001


def test_loaded_dice_are_flagged(tmp_path):
    # 1s and 5s (the scoring singles) come up half as often as fair
    t = compute(roll_dataset(tmp_path / "loaded", [1, 2, 2, 2, 1, 2]), Filters(), ["bust", "dice"])
    rows = overall(t["bust_rate_by_dice_left"])
    assert all(row["off"] for row in rows.values()), rows
    assert all(row["bust_rate"] > row["exact_rate"] for row in rows.values())
    fairness = [r for r in t["dice_fairness"].to_pylist() if r["scope"] == "overall"][0]
    assert fairness["p_value"] < 1e-12


def test_simulated_fair_games_match_the_exact_odds(tmp_path):
    from pipeline.ingest.run import ingest
    from pipeline.simulate import simulate

    simulate(tmp_path / "logs.jsonl", 250, 99, rules=(STANDARD,))
    ingest([str(tmp_path / "logs.jsonl")], tmp_path / "ds")
    rows = overall(compute(tmp_path / "ds", Filters(), ["bust"])["bust_rate_by_dice_left"])
    assert sorted(rows) == [1, 2, 3, 4, 5, 6]
    for n, row in rows.items():
        assert row["exact_rate"] == pytest.approx(float(farkle_probability(n, STANDARD)))
        assert row["rolls"] > 1000
        assert abs(row["z"]) < 3.5, row

"""Issue 8, phase 2: simulated bots judged by `stats --section decisions-quality`.

One-player games only: in a game of several players every bot (the `optimal` one too) rolls
on in the final round until it is ahead of everyone (docs/simulate.md), a multi-turn choice
outside the single-turn model, which would then rightly be charged a loss. Alone, a game ends
at the bank that reaches the target, so every choice is a single-turn one.
"""

from __future__ import annotations

import pytest

from pipeline.ingest.run import ingest
from pipeline.simulate import simulate
from pipeline.stats import compute

BOTS = ("optimal", "threshold", "keep_all", "cautious", "keep_min", "greedy")


@pytest.fixture(scope="module")
def quality(tmp_path_factory):
    root = tmp_path_factory.mktemp("bots")
    out = {}
    for bot in BOTS:
        logs = root / f"{bot}.jsonl"
        simulate(logs, 40, 11, players=(1, 1), bots=[bot])
        ingest([str(logs)], root / bot)
        tables = compute(root / bot, sections=["decisions-quality"])
        out[bot] = tables["decision_quality"].to_pylist()[0] | {"blunder_rows": tables["blunders"].num_rows}
    return out


def test_the_policy_bot_loses_nothing(quality):
    q = quality["optimal"]
    assert q["choices"] > 1000 and q["not_judged"] == 0 and q["judged"] == q["choices"]
    assert q["loss_points"] == pytest.approx(0, abs=1e-6)
    assert q["optimal"] == q["judged"] and q["blunders"] == 0 and q["blunder_rows"] == 0


def test_bots_rank_by_mean_loss_as_their_strategies_say(quality):
    """Expected order, from docs/simulate.md's bots and the solver's thresholds (standard,
    opened: bank from 350 / 300 / 450 / 1,050 / 3,100 / 18,400 with 1..6 dice left; not
    opened: 500 for 1-3 dice):

    - `optimal` plays the policy: 0.
    - near it, `threshold` (bars 300 300 400 1000 2000 3000, close to the policy's for 1-4
      dice; keeps the best value less 75 per die, so it drops a lone 5 as the policy often
      does) and `keep_all` (bars 350 500 800 1500 2500 3000: close with 1-2 dice, but it keeps
      every scoring die, giving up dice to roll): ~13-16 points per choice;
    - far from it, each with one gross habit: `cautious` banks at 300 with 4-6 dice left,
      where the policy rolls on to 1,050-18,400 (a bank of 300 with six dice gives up ~550);
      `greedy` rolls 1-3 dice up to 1,000-2,000 where the policy banks from 300-450 (rolling
      one die at 1,000 gives up ~475); `keep_min` keeps one combination, a lone 5 out of
      5 5 5 6 6 6 (~2,500 lost): ~32-43 per choice.

    The two groups are asserted with a margin; within a group the order moves with the seed."""
    mean = {bot: q["mean_loss"] for bot, q in quality.items()}
    assert mean["optimal"] == pytest.approx(0, abs=1e-9)
    near = ("threshold", "keep_all")
    far = ("cautious", "greedy", "keep_min")
    assert all(0 < mean[b] < 25 for b in near), mean
    assert all(mean[b] > 28 for b in far), mean
    assert max(mean[b] for b in near) * 1.5 < min(mean[b] for b in far), mean
    # the habits show where the model says they should
    assert quality["cautious"]["mean_action_loss"] > quality["cautious"]["mean_keep_loss"]
    assert quality["greedy"]["mean_action_loss"] > quality["threshold"]["mean_action_loss"] * 3
    assert quality["keep_min"]["mean_keep_loss"] > quality["keep_min"]["mean_action_loss"] * 3

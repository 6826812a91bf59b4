"""A bot that plays a solved policy for one turn: the check that the solver's figures are
what its own play earns. Dice come from a `random.Random` the caller seeds."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pipeline.rules.table import dice_key, score_table
from pipeline.strategy.solver import BANK, Policy


@dataclass(frozen=True)
class Decision:
    """One roll of a turn and what the bot did: `kept` is None on a farkle; `action` is
    "bank" or "roll", taken with `points` in the turn and `dice_left` dice to roll."""

    points_before: int
    roll: tuple[int, ...]
    kept: tuple[int, ...] | None
    points: int
    dice_left: int
    action: str | None


@dataclass
class Turn:
    banked: int  # points banked (0: farkle, or banked below the floor)
    decisions: list[Decision] = field(default_factory=list)


class PolicyBot:
    """Takes the best keep of every roll and then the best of bank and roll, by the policy."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self._values = score_table(policy.rules).value
        self._keep_memo: dict[tuple[int, int, bool], tuple[int, ...] | None] = {}

    def keep(self, points: int, roll: tuple[int, ...], opened: bool) -> tuple[int, ...] | None:
        memo_key = (points, dice_key(roll), opened)
        if memo_key not in self._keep_memo:
            best = self.policy.best_keep(points, roll, opened)
            self._keep_memo[memo_key] = None if best is None else best[0]
        return self._keep_memo[memo_key]

    def play_turn(self, rng: random.Random, opened: bool) -> Turn:
        turn = Turn(0)
        points, dice = 0, 6
        while True:
            roll = tuple(rng.randint(1, 6) for _ in range(dice))
            kept = self.keep(points, roll, opened)
            if kept is None:
                turn.decisions.append(Decision(points, roll, None, points, dice, None))
                return turn
            before = points
            points += self._values[dice_key(kept)]  # type: ignore[operator]  # a keep: every die scores
            dice = 6 if len(kept) == dice else dice - len(kept)
            action = self.policy.best_action(points, dice, opened)
            turn.decisions.append(Decision(before, roll, kept, points, dice, action))
            if action == BANK:
                turn.banked = int(self.policy.bank_value(points, dice, opened))
                return turn

"""Advice at one moment of a two-player game: every choice with its winning chance.

The moment is the mover's banked total, the other's, the turn points and the dice left to
roll, and optionally the dice just rolled. Without a roll the choices are bank and roll (at
the turn start, with no points, only the roll); with one, every legal keep of it, each worth
the chance of the state it leads to (then banking or rolling on at best). Beside it the
single-turn view: what maximising this turn's expected points would do
(`pipeline.strategy.solver`), for a player who wants to see where the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from pipeline.errors import UserError
from pipeline.rules import play
from pipeline.rules.table import dice_key, score_table, sub_keys
from pipeline.rules.scoring import counts_to_dice
from pipeline.strategy.race import MODEL_NOTE, Race, keep_choices
from pipeline.strategy.solver import BANK, ROLL, TOL, Policy

#: Two choices whose chances differ by less than this are equally good.
CHANCE_TOL = 1e-12


class AdviceError(UserError, ValueError):
    """A position `advise` cannot be asked about (dice left, roll and turn points disagree)."""


@dataclass(frozen=True)
class Choice:
    kind: str  # "bank", "roll" or "keep"
    dice: tuple[int, ...] | None  # the kept dice (keep)
    points_after: int  # turn points after the choice (a keep adds its value)
    dice_after: int | None  # dice left to roll after a keep
    chance: float  # the mover's winning chance after it, under best play by both
    expected_points: float | None  # the single-turn value of the same choice (None: not solved)
    best: bool = False

    def label(self) -> str:
        return "keep " + " ".join(map(str, self.dice or ())) if self.kind == "keep" else self.kind


@dataclass
class Advice:
    rules_name: str
    scores: tuple[int, int]
    turn_points: int
    dice: int
    roll: tuple[int, ...] | None
    final_turn: bool
    chance: float  # the mover's winning chance now, under best play
    choices: list[Choice] = field(default_factory=list)
    farkle: bool = False
    single_turn_best: str | None = None  # the single-turn model's choice, when solved
    note: str = MODEL_NOTE

    @property
    def best(self) -> Choice | None:
        return next((c for c in self.choices if c.best), None)

    def differs(self) -> bool:
        best = self.best
        return best is not None and self.single_turn_best is not None and self.single_turn_best != best.label()


def advise(
    race: Race,
    policy: Policy | None,
    mine: int,
    theirs: int,
    turn_points: int = 0,
    dice: int = 6,
    roll: Sequence[int] | None = None,
) -> Advice:
    """Advice for the mover with `mine` banked against `theirs` (AdviceError on a state the
    game cannot be in: points off the grid, the mover past the target, a roll of other than
    `dice` dice, points in hand at a turn start)."""
    if not 1 <= dice <= 6:
        raise AdviceError(f"dice left must be 1..6, got {dice}")
    if roll is not None and len(roll) != dice:
        raise AdviceError(f"the roll has {len(roll)} dice but {dice} are left to roll")
    if turn_points == 0 and dice != 6 and roll is None:
        raise AdviceError("with no turn points the turn starts with six dice")
    try:  # the race's own checks of the totals are, here, the user's input
        view = race.turn(mine, theirs)
        p = race.level(turn_points, "turn points")
    except ValueError as error:
        raise AdviceError(str(error)) from None
    opened = mine > 0
    out = Advice(race.rules.name, (mine, theirs), turn_points, dice, tuple(roll) if roll else None, view.final, 0.0)
    if roll is None:
        choices = []
        if p > 0:
            choices.append(
                Choice(BANK, None, turn_points, None, view.bank(p), _points(policy, BANK, turn_points, dice, opened))
            )
        choices.append(
            Choice(ROLL, None, turn_points, None, view.roll(p, dice), _points(policy, ROLL, turn_points, dice, opened))
        )
        if policy is not None:
            out.single_turn_best = policy.best_action(turn_points, dice, opened) if p > 0 else ROLL
    else:
        keeps = keep_choices(view, p, dice, roll)
        if not keeps:
            out.farkle = True
            out.chance = view.farkle_value()
            return out
        values = score_table(race.rules).value
        single = {}
        if policy is not None:
            single = dict(policy.keep_values(turn_points, roll, opened))
            best_dice = policy.keep_values(turn_points, roll, opened)[0][0]
            out.single_turn_best = "keep " + " ".join(map(str, best_dice))
        choices = []
        for kept, chance in keeps:
            v = values[dice_key(kept)] or 0
            after = play.dice_to_roll(dice, len(kept))
            choices.append(Choice("keep", kept, turn_points + v, after, chance, single.get(kept)))
    best = max(c.chance for c in choices)
    marked = False
    for i, c in enumerate(choices):
        if not marked and c.chance >= best - CHANCE_TOL:
            choices[i] = Choice(c.kind, c.dice, c.points_after, c.dice_after, c.chance, c.expected_points, True)
            marked = True
    out.choices = choices
    out.chance = best
    return out


def _points(policy: Policy | None, action: str, points: int, dice: int, opened: bool) -> float | None:
    if policy is None:
        return None
    if action == BANK:
        return policy.bank_value(points, dice, opened)
    return policy.roll_value(points, dice, opened)


def legal_keeps(rules, roll: Sequence[int]) -> list[tuple[int, ...]]:
    """Every legal keep of `roll` (for messages)."""
    table = score_table(rules)
    return [counts_to_dice(play.key_counts(s)) for s in sub_keys()[dice_key(roll)] if table.value[s] is not None]


__all__ = ["Advice", "Choice", "advise", "TOL"]

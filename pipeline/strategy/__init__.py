"""Strategy: the exact single-turn solver and what it says about decisions.

`solve(rules)` gives a `Policy`, cached per ruleset: expected turn values, bank-vs-roll values
for every (turn points, dice left, opened) state, the value of every legal keep of a roll and
the loss of any decision. It is a single-turn model (`MODEL_NOTE`): farkle penalties and the
race to the target are outside it.
"""

from pipeline.strategy.play import Decision, PolicyBot, Turn
from pipeline.strategy.solver import (
    BANK,
    MODEL_NOTE,
    ROLL,
    TOL,
    Policy,
    default_cap,
    minimum_cap,
    solve,
    solve_uncached,
)

__all__ = [
    "BANK",
    "Decision",
    "PolicyBot",
    "Turn",
    "MODEL_NOTE",
    "ROLL",
    "TOL",
    "Policy",
    "default_cap",
    "minimum_cap",
    "solve",
    "solve_uncached",
]

"""Bot strategies: which keep to take and when to bank.

Each bot is a keep style for the keeps it rolls on from (see `dice.KEEP_STYLES`; when it
banks it takes the highest-value keep) plus a table of the turn points it wants
before banking, by the number of dice it would roll next (6 after hot dice). The game loop
adds what every bot obeys: never bank below the opening threshold or `min_bank` (it rolls
on instead), and in the final round bank only once ahead of everyone (a bot with
`settles_for_tie` banks on a tie too). The strategies differ on purpose, so stats can tell
them apart by their bank-vs-roll rates.
"""
from __future__ import annotations

from dataclasses import dataclass

NEVER = 10**12


@dataclass(frozen=True)
class Bot:
    name: str
    keep: str  # a dice.KEEP_STYLES value
    bank_at: tuple[int, ...]  # index = dice left to roll (1..6); 0 unused
    settles_for_tie: bool
    about: str


def _at(one: int, two: int, three: int, four: int, five: int, six: int) -> tuple[int, ...]:
    return (NEVER, one, two, three, four, five, six)


BOTS: dict[str, Bot] = {
    bot.name: bot
    for bot in (
        Bot(
            "threshold",
            "smart",
            _at(300, 300, 400, 1000, 2000, 3000),
            False,
            "drops a lone 5 to roll more dice; banks once the turn reaches a bar that rises with the dice left",
        ),
        Bot(
            "cautious",
            "all",
            _at(300, 300, 300, 300, 300, 300),
            True,
            "keeps every scoring die; banks as soon as it has 300 and may bank; takes a tie in the final round",
        ),
        Bot(
            "greedy",
            "smart",
            _at(1000, 1500, 2000, 2500, 3000, 4000),
            False,
            "drops a lone 5 to roll more dice; keeps rolling until the turn is big",
        ),
        Bot(
            "keep_all",
            "all",
            _at(350, 500, 800, 1500, 2500, 3000),
            False,
            "keeps every scoring die; banks with few dice left",
        ),
        Bot(
            "keep_min",
            "min",
            _at(300, 400, 600, 1000, 2000, 3000),
            False,
            "keeps one combination (fewest dice) to roll as many dice as it can; banks on the best keep",
        ),
    )
}

BOT_NAMES: tuple[str, ...] = tuple(BOTS)

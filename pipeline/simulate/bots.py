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
from functools import lru_cache
from typing import TYPE_CHECKING

from pipeline.rules import Ruleset, counts_key, dice_counts
from pipeline.rules.play import dice_to_roll

NEVER = 10**12

if TYPE_CHECKING:
    from pipeline.strategy.race import TurnView


@dataclass(frozen=True)
class Bot:
    name: str
    keep: str  # a dice.KEEP_STYLES value
    bank_at: tuple[int, ...]  # index = dice left to roll (1..6); 0 unused
    settles_for_tie: bool
    about: str
    policy: bool = False  # keep and bank-or-roll from pipeline.strategy's exact policy
    race: bool = False  # keep and bank-or-roll by the two-player winning chance (pipeline.strategy.race)


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

BOTS["optimal"] = Bot(
    "optimal",
    "best",
    _at(NEVER, NEVER, NEVER, NEVER, NEVER, NEVER),
    False,
    "plays pipeline.strategy's exact single-turn policy: the keep and the bank-or-roll that "
    "maximise the points banked this turn (opt-in: --bots)",
    policy=True,
)

BOTS["winprob"] = Bot(
    "winprob",
    "best",
    _at(NEVER, NEVER, NEVER, NEVER, NEVER, NEVER),
    False,
    "plays the two-player winning-chance policy (pipeline.strategy.race): the keep and the bank-or-roll "
    "that maximise its chance of winning the game, final round included (two-player games; opt-in: --bots)",
    policy=True,
    race=True,
)

BOT_NAMES: tuple[str, ...] = tuple(BOTS)
#: The mix drawn from by default; `optimal` and `winprob` are opt-in (they solve the ruleset first).
DEFAULT_BOTS: tuple[str, ...] = tuple(name for name in BOTS if not BOTS[name].policy)


class PolicyPlayer:
    """The exact single-turn policy as the game loop asks it: for (turn points, roll, opened),
    the keep to take and whether to bank after it. Answers are memoised per ruleset."""

    def __init__(self, rules: Ruleset):
        from pipeline.strategy import BANK, solve

        self._bank = BANK
        self.policy = solve(rules)
        self.rules = rules
        self._memo: dict[tuple[int, int, bool], tuple[tuple[list[int], int, int], bool]] = {}

    def decide(self, points: int, key: int, roll: list[int], opened: bool) -> tuple[tuple[list[int], int, int], bool]:
        """((kept dice, value, dice kept), bank after it?) for a roll that scores."""
        memo_key = (points, key, opened)
        hit = self._memo.get(memo_key)
        if hit is None:
            from pipeline.rules import score_table

            best = self.policy.best_keep(points, roll, opened)
            assert best is not None  # asked only about a roll that scores
            dice, _ = best
            value = score_table(self.rules).value[counts_key(dice_counts(dice))]
            assert value is not None  # the policy keeps only dice that all score
            left = dice_to_roll(len(roll), len(dice))
            bank = self.policy.best_action(points + value, left, opened) == self._bank
            hit = self._memo[memo_key] = ((sorted(dice), value, len(dice)), bank)
        return hit


@lru_cache(maxsize=8)
def policy_player(rules: Ruleset) -> PolicyPlayer:
    return PolicyPlayer(rules)


class RacePlayer:
    """The two-player winning-chance policy as the game loop asks it: for the mover's and the
    other's banked totals, the turn points, the roll and whether the mover has opened, the
    keep to take and whether to bank after it (on equal chances it banks). Each pair of
    totals' turn is solved once per game run."""

    def __init__(self, rules: Ruleset):
        from pipeline.solved.tables import race

        self.race = race(rules)
        self.rules = rules
        self._views: dict[tuple[int, int], TurnView] = {}

    def decide(self, mine: int, theirs: int, points: int, roll: list[int]) -> tuple[tuple[list[int], int, int], bool]:
        from pipeline.rules import score_table
        from pipeline.strategy.race import keep_choices

        view = self._views.get((mine, theirs))
        if view is None:
            if len(self._views) > 4096:
                self._views.clear()
            view = self._views[(mine, theirs)] = self.race.turn(mine, theirs)
        g = self.race.granularity
        dice = keep_choices(view, points // g, len(roll), roll)[0][0]
        value = score_table(self.rules).value[counts_key(dice_counts(dice))]
        assert value is not None  # a keep choice uses only dice that all score
        left = dice_to_roll(len(roll), len(dice))
        after = (points + value) // g
        bank = view.bank(after) >= view.roll(after, left)
        return (sorted(dice), value, len(dice)), bank


@lru_cache(maxsize=8)
def race_player(rules: Ruleset) -> RacePlayer:
    return RacePlayer(rules)

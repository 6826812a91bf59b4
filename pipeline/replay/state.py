"""Per-game and per-turn replay state: what the engine must remember between events.

Kept small on purpose: memory grows with the number of open games, never with input
size. Two ledgers run side by side: the *claimed* one follows the log (replay goes on from
each claim, so one mistake is reported once) and the *corrected* one scores the dice.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol

from pipeline.model import DecisionRecord, RollRecord
from pipeline.replay.melds import KeptDice
from pipeline.rules import Ruleset
from pipeline.rules.play import NO_ROUND_LIMIT, NO_TARGET, NOBODY
from pipeline.rules.table import ScoreTable

NO_ROLL, ROLLED, KEPT = "no_roll", "rolled", "kept"


@dataclass(slots=True)
class TraceStep:
    """One line of an audit timeline: what happened at an event and what it was worth."""

    seq: int
    player: str | None
    type: str
    dice: tuple[int, ...] | None
    claimed: int | None
    worth: int | None
    total: int | None
    code: str | None = None


@dataclass(slots=True)
class TurnState:
    player: str
    turn: int  # this player's turn number, 1-based
    start_seq: int
    ts: str | None
    banked_before: int  # claimed total before the turn
    opened_before: bool
    # both corrected banked totals as the turn opens (the winning-chance state): the
    # player's, and in a game of two players the other's (None otherwise)
    start_total: int = 0
    other_start_total: int | None = None
    phase: str = NO_ROLL
    rolls: int = 0
    hot_dice: int = 0
    last_roll: tuple[int, ...] | None = None
    last_roll_key: int = 0  # counts_key of the latest roll
    last_roll_seq: int | None = None
    last_roll_scored: bool = True
    kept_from_roll: int = 0  # dice kept from the latest roll, as logged
    really_kept: tuple[int, ...] = ()  # dice of the latest roll already kept (really in it)
    roll_pending: RollRecord | None = None  # the latest roll, emitted when its keep is known
    awaiting_after_bust: bool = False  # the latest roll scored nothing: next event decides
    went_past_bust: bool = False  # the turn went on after a roll that scored nothing
    keeps: list[KeptDice] = field(default_factory=list)
    claimed_sum: int = 0
    corrected_sum: int = 0
    decision_pending: DecisionRecord | None = None  # after a keep, waiting for bank or roll
    trace: list[TraceStep] = field(default_factory=list)
    flagged: bool = False  # a finding fell inside this turn: keep its trace


@dataclass(slots=True)
class GameState:
    game_id: str
    players: tuple[str, ...]
    rules: Ruleset
    table: ScoreTable
    order: int  # position of first appearance, for stable output
    last_seq: int
    last_event: Any  # the last Event read for this game: end-of-input findings point at it
    first_ts: str | None = None
    last_ts: str | None = None
    events: int = 0
    next_player: int = 0  # index into players of whose turn comes next
    turn: TurnState | None = None
    turns_played: dict[str, int] = field(default_factory=dict)
    claimed_total: dict[str, int] = field(default_factory=dict)
    corrected_total: dict[str, int] = field(default_factory=dict)
    opened: dict[str, bool] = field(default_factory=dict)  # any bank replayed (findings)
    opened_corrected: dict[str, bool] = field(default_factory=dict)
    streak: dict[str, int] = field(default_factory=dict)  # claimed farkles in a row
    streak_corrected: dict[str, int] = field(default_factory=dict)
    target: int = NO_TARGET  # the ruleset's target as play.py takes it
    rounds: int = NO_ROUND_LIMIT  # the ruleset's round limit as play.py takes it
    reached: int = NOBODY  # seat of the first player whose claimed total reached the target
    final_owed: list[int] = field(default_factory=list)  # per seat: 1 while a final-round turn is owed
    final_left: int = 0  # final-round turns still owed
    over: bool = False  # final round played out
    ended: bool = False  # game_end replayed
    end_reason: str | None = None  # the first game_end's reason: "finished" or "abandoned"
    end_winner: object = None
    end_scores: dict[str, int] | None = None
    findings: int = 0
    timeline: list[list[TraceStep]] = field(default_factory=list)  # turns with findings


# ---- games out of memory ----------------------------------------------------------------------
class GameSpill(Protocol):
    """Where a Replayer with more games than it keeps in memory puts the others: bytes by
    game id, each with its order of first appearance (the audit gives one on disk)."""

    def put(self, game_id: str, order: int, state: bytes) -> None: ...

    def take(self, game_id: str) -> bytes | None:
        """The game's bytes, removed; None if it is not here."""
        ...

    def take_in_order(self) -> Iterator[tuple[int, bytes]]:
        """Every game's (order, bytes), by order, removed as they go."""
        ...

    def __len__(self) -> int: ...


class StateCodec:
    """GameState to bytes and back (pickle), without copying what games share: a game's
    ruleset (and its game_start's) is written as its number in this codec's list, its score
    table not at all (looked up again when read). One codec per Replayer: the numbers are
    its own. The state goes as a list of its fields: pickle's C code does the rest."""

    def __init__(self) -> None:
        self.rulesets: list[Ruleset] = []
        self._number: dict[int, int] = {}  # id(ruleset) -> its number (the list keeps it alive)

    def dumps(self, game: GameState) -> bytes:
        values = [getattr(game, name) for name in _GAME_FIELDS]
        values[_RULES] = self._ruleset_number(game.rules)
        values[_TABLE] = None
        event = game.last_event
        event_rules = None
        if event is not None and getattr(event, "rules", None) is not None:
            event_rules = self._ruleset_number(event.rules)
            event = copy.copy(event)
            event.rules = None
            values[_LAST_EVENT] = event
        return pickle.dumps((values, event_rules), pickle.HIGHEST_PROTOCOL)

    def loads(self, data: bytes) -> GameState:
        from pipeline.rules.table import score_table

        values, event_rules = pickle.loads(data)
        rules = self.rulesets[values[_RULES]]
        values[_RULES], values[_TABLE] = rules, score_table(rules)
        if event_rules is not None:
            values[_LAST_EVENT].rules = self.rulesets[event_rules]
        return GameState(*values)

    def _ruleset_number(self, rules: Ruleset) -> int:
        number = self._number.get(id(rules))
        if number is None:
            number = self._number[id(rules)] = len(self.rulesets)
            self.rulesets.append(rules)
        return number


_GAME_FIELDS = [f.name for f in dataclasses.fields(GameState)]
_RULES, _TABLE, _LAST_EVENT = (_GAME_FIELDS.index(name) for name in ("rules", "table", "last_event"))

"""Per-game and per-turn replay state: what the engine must remember between events.

Kept small on purpose: memory grows with the number of open games, never with input
size. Two ledgers run side by side: the *claimed* one follows the log (replay goes on from
each claim, so one mistake is reported once) and the *corrected* one scores the dice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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

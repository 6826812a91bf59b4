"""The records that flow through the pipeline: read → replay → write → query.

One definition shared by the reader, the replay engine, the audit output, ingest and the
simulator, so a field means the same thing everywhere. Replay may add fields to these
records; renaming or removing one breaks ingest's Parquet schemas (pipeline/dataset/tables.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EVENT_TYPES = ("game_start", "roll", "keep", "bank", "farkle", "game_end")
TURN_EVENT_TYPES = ("roll", "keep", "bank", "farkle")

# Finding codes in the order log-format.md lists them; severity is error except these.
WARNING_CODES = frozenset({"game_incomplete"})
FINDING_CODES = (
    "bad_json",
    "bad_event",
    "unknown_game",
    "seq_error",
    "play_after_game_over",
    "wrong_player",
    "missed_farkle",
    "missing_keep",
    "wrong_dice_count",
    "kept_not_rolled",
    "non_scoring_kept",
    "cross_roll_meld",
    "scoring_error",
    "bank_mismatch",
    "bank_below_opening",
    "bank_below_minimum",
    "total_mismatch",
    "false_farkle",
    "penalty_error",
    "final_score_mismatch",
    "wrong_winner",
    "missing_turn_end",
    "game_incomplete",
    "sheet_points_mismatch",
    "sheet_total_mismatch",
    "sheet_extra_turn",
    "sheet_missing_turn",
)


@dataclass(slots=True)
class Event:
    """One valid log line. Fields a type does not carry are None; unknown fields go to `extra`."""

    game_id: str
    seq: int
    type: str
    file: str
    line: int
    ts: str | None = None
    player: str | None = None
    dice: tuple[int, ...] | None = None
    points: int | None = None
    total: int | None = None
    players: tuple[str, ...] | None = None
    rules: Any = None  # game_start: the validated pipeline.rules.Ruleset, None if the field is absent
    rules_raw: Any = None  # game_start: the `rules` value exactly as logged (name or object)
    winner: str | tuple[str, ...] | None = None
    scores: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class BadLine:
    """A line that is not a valid event: kept, explained, never replayed.

    `code` is `bad_json` or `bad_event`; game_id/seq/player are filled only when they could
    be read. `raw` is the line's text (cut by whoever stores it).
    """

    file: str
    line: int
    code: str
    reason: str
    raw: str
    game_id: str | None = None
    seq: int | None = None
    player: str | None = None


@dataclass(slots=True)
class Finding:
    """One audit finding, exactly the fields of log-format.md."""

    game_id: str | None
    seq: int | None
    file: str | None
    line: int | None
    player: str | None
    code: str
    severity: str
    message: str
    claimed: int | float | None = None
    expected: int | float | None = None
    ts: str | None = None  # the event's timestamp when it had one; not part of the audit JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "file": self.file,
            "line": self.line,
            "player": self.player,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "claimed": self.claimed,
            "expected": self.expected,
        }


def severity_of(code: str) -> str:
    return "warning" if code in WARNING_CODES else "error"


@dataclass(slots=True)
class GameResult:
    """Claimed vs corrected outcome of one game (log-format.md, Corrected scores).

    Winners are always lists of names (one unless a tie), never a bare string, so every
    output and table has one type: `winner_claimed` is the first game_end's winner and None
    for a game without game_end; `winner_corrected` the players with the highest corrected
    total, in `players` order.
    """

    game_id: str
    players: tuple[str, ...]
    ruleset: Any  # pipeline.rules.Ruleset
    claimed: dict[str, int]
    corrected: dict[str, int]
    winner_claimed: list[str] | None
    winner_corrected: list[str] | None
    complete: bool
    first_ts: str | None = None
    last_ts: str | None = None
    events: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "claimed": dict(self.claimed),
            "corrected": dict(self.corrected),
            "winner_claimed": self.winner_claimed,
            "winner_corrected": self.winner_corrected,
            "complete": self.complete,
        }


@dataclass(slots=True)
class TurnRecord:
    """One turn as replayed: the unit of turn value, scoresheet rows and hot-dice counts."""

    game_id: str
    player: str
    turn: int  # 1-based count of this player's turns
    start_seq: int
    end_seq: int | None  # seq of the bank/farkle that ended it (see end_implied); None if left open
    rolls: int
    hot_dice: int
    outcome: str  # "bank", "farkle" or "open" (cut off)
    claimed_points: int  # claimed bank points; 0 for a farkle
    corrected_points: int
    dice_left: int | None  # dice not kept when the turn ended (None if no roll)
    claimed_total: int | None  # player's claimed banked total after the turn
    corrected_total: int  # player's corrected banked total after the turn
    ts: str | None = None
    # The ending line was lost and replay supplied the end the log implies (log-format.md,
    # "a lost turn end"): end_seq is then the seq of the roll that revealed it, the first
    # event of the next turn.
    end_implied: bool = False


@dataclass(slots=True)
class RollRecord:
    """One roll: the base of bust rates by dice left and of dice fairness."""

    game_id: str
    seq: int
    player: str
    turn: int
    roll_in_turn: int  # 1-based
    dice: tuple[int, ...]
    dice_count: int
    scored: bool  # False: the roll is a farkle (no scoring die)
    best_value: int  # value of the roll's best keep (0 if farkle)
    kept: tuple[int, ...] | None = None  # dice kept from it, if a keep followed
    kept_claimed: int | None = None
    kept_value: int | None = None  # corrected value of the keep
    ts: str | None = None
    points_before: int = 0  # corrected turn points before this roll (what the dice gave so far)
    opened: bool = False  # whether the player had opened (any bank replayed) before this turn


@dataclass(slots=True)
class DecisionRecord:
    """A bank-or-roll choice made after a keep."""

    game_id: str
    seq: int  # seq of the keep the choice followed
    player: str
    turn: int
    dice_left: int  # dice that would be rolled next (6 after hot dice)
    turn_points: int  # claimed turn points so far, this keep included
    banked_total: int  # player's claimed banked total before this turn
    opponents_best: int  # best claimed banked total among the other players
    opened: bool  # whether the player had opened before this turn
    choice: str  # "bank" or "roll"
    farkled: bool | None = None  # for a roll: whether that roll scored nothing
    ts: str | None = None
    turn_points_corrected: int = 0  # turn points so far by the dice, this keep included


@dataclass(slots=True)
class FileProblem:
    """A whole input went wrong (cannot be opened, gzip stream truncated or corrupt).

    Lines read before the break were still yielded; this record says where reading stopped
    so a user knows which part of the file was never checked. `line` is the line being read
    when the file broke (None if the file could not be opened at all).
    """

    file: str
    line: int | None
    reason: str

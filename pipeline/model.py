"""The records that flow through the pipeline: read → replay → write → query.

One definition shared by the reader, the replay engine, the audit output, ingest and the
simulator, so a field means the same thing everywhere. Replay may add fields to these
records; renaming or removing one breaks ingest's Parquet schemas (pipeline/dataset/tables.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

EVENT_TYPES = ("game_start", "roll", "keep", "bank", "farkle", "game_end")

ERROR, WARNING = "error", "warning"
# The rows of log-format.md's Findings table: the event (or place) a code is given on.
ANY_LINE, ROLL, KEEP, BANK, FARKLE, GAME_END, END_OF_INPUT, SCORESHEET = (
    "any line",
    "roll",
    "keep",
    "bank",
    "farkle",
    "game_end",
    "end of input",
    "scoresheet",
)


class Code(StrEnum):
    """Every finding code, in the order log-format.md lists them: its severity and meaning.

    The one registry: `FINDING_CODES`, severities, the precedence rows (`PRECEDENCE`), the
    fast kernel's code numbers (`Code.id`) and the injector's codes come from it, and the
    docs' tables are tested against it. A member is its plain string ("seq_error"), so
    findings serialise exactly as before.
    """

    BAD_JSON = "bad_json", "the line is not strict JSON"
    BAD_EVENT = "bad_event", "JSON, but not a valid event (a field, a die, the type, ts or the ruleset)"
    UNKNOWN_GAME = "unknown_game", "an event of a game with no valid game_start before it"
    SEQ_ERROR = "seq_error", "a seq gap, repeat or step back, a game_start not at seq 1, or a second game_start"
    PLAY_AFTER_GAME_OVER = "play_after_game_over", "an event after the final round was played out or after game_end"
    WRONG_PLAYER = "wrong_player", "an event by a player whose turn it is not, or by a name not in players"
    MISSED_FARKLE = "missed_farkle", "the turn went on after a roll that scored nothing"
    MISSING_KEEP = "missing_keep", "a roll or a bank with no keep since the latest roll"
    WRONG_DICE_COUNT = "wrong_dice_count", "a roll of other than the dice left to roll"
    KEPT_NOT_ROLLED = "kept_not_rolled", "kept dice the latest roll did not have, or a keep with no roll before it"
    NON_SCORING_KEPT = "non_scoring_kept", "no split of the keep uses every kept die"
    CROSS_ROLL_MELD = "cross_roll_meld", "a claim that scores dice of different rolls as one combination"
    SCORING_ERROR = "scoring_error", "a keep claimed at other than its value"
    BANK_MISMATCH = "bank_mismatch", "bank points other than the sum of the turn's claimed keeps"
    BANK_BELOW_OPENING = "bank_below_opening", "a bank below the opening threshold by a player not yet opened"
    BANK_BELOW_MINIMUM = "bank_below_minimum", "a bank below min_bank"
    TOTAL_MISMATCH = "total_mismatch", "a bank's total other than the previous claimed total plus its points"
    FALSE_FARKLE = "false_farkle", "a farkle declared when the roll before it scored, or with no roll before it"
    PENALTY_ERROR = "penalty_error", "a farkle's total other than the total after any penalty due"
    FINAL_SCORE_MISMATCH = "final_score_mismatch", "a game_end score other than that player's last claimed total"
    WRONG_WINNER = "wrong_winner", "a game_end before the final round was played out, or naming other winners"
    MISSING_TURN_END = "missing_turn_end", "a turn with no bank or farkle: a lost line, or a log that ends inside it"
    GAME_INCOMPLETE = "game_incomplete", "a game whose log ends without a game_end", WARNING
    SHEET_POINTS_MISMATCH = "sheet_points_mismatch", "a scoresheet row's points other than the turn's corrected ones"
    SHEET_TOTAL_MISMATCH = "sheet_total_mismatch", "a scoresheet row's total other than the corrected total then"
    SHEET_EXTRA_TURN = "sheet_extra_turn", "a scoresheet row of a turn never played, a duplicate or a game not logged"
    SHEET_MISSING_TURN = "sheet_missing_turn", "a turn played in a scoresheet's game that has no row"

    def __new__(cls, value: str, meaning: str, severity: str = ERROR) -> "Code":
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        member.severity = severity
        member.id = len(cls.__members__) + 1  # 1, 2, ...: the kernel's number for it (0: none)
        return member

    meaning: str
    severity: str
    id: int

    @property
    def rows(self) -> tuple[str, ...]:
        """The rows of the Findings table the code is in (missed_farkle is in three)."""
        return tuple(row for row, codes in PRECEDENCE.items() if self in codes)


#: log-format.md's Findings table: per row, its codes in precedence order. An event gets at
#: most one finding, the first code of its row that applies ("any line" comes first for
#: every event).
PRECEDENCE: dict[str, tuple[Code, ...]] = {
    ANY_LINE: (
        Code.BAD_JSON,
        Code.BAD_EVENT,
        Code.UNKNOWN_GAME,
        Code.SEQ_ERROR,
        Code.PLAY_AFTER_GAME_OVER,
        Code.WRONG_PLAYER,
    ),
    ROLL: (Code.MISSING_TURN_END, Code.MISSED_FARKLE, Code.MISSING_KEEP, Code.WRONG_DICE_COUNT),
    KEEP: (Code.MISSED_FARKLE, Code.KEPT_NOT_ROLLED, Code.NON_SCORING_KEPT, Code.CROSS_ROLL_MELD, Code.SCORING_ERROR),
    BANK: (
        Code.MISSED_FARKLE,
        Code.MISSING_KEEP,
        Code.CROSS_ROLL_MELD,
        Code.BANK_MISMATCH,
        Code.BANK_BELOW_OPENING,
        Code.BANK_BELOW_MINIMUM,
        Code.TOTAL_MISMATCH,
    ),
    FARKLE: (Code.FALSE_FARKLE, Code.PENALTY_ERROR),
    GAME_END: (Code.FINAL_SCORE_MISMATCH, Code.WRONG_WINNER),
    END_OF_INPUT: (Code.MISSING_TURN_END, Code.GAME_INCOMPLETE),
    SCORESHEET: (
        Code.SHEET_POINTS_MISMATCH,
        Code.SHEET_TOTAL_MISMATCH,
        Code.SHEET_EXTRA_TURN,
        Code.SHEET_MISSING_TURN,
    ),
}

#: The codes in log-format.md's order, as plain strings.
FINDING_CODES: tuple[str, ...] = tuple(code.value for code in Code)
WARNING_CODES = frozenset(code.value for code in Code if code.severity == WARNING)
#: The codes a log itself can carry (the scoresheet codes compare a sheet with a log).
LOG_CODES: tuple[Code, ...] = tuple(code for code in Code if SCORESHEET not in code.rows)


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
    # keep: the turn's claimed running total after it, logged instead of `points` (the
    # claim is then the difference from the turn's earlier claimed keeps; log-format.md)
    turn_points: int | None = None
    reason: str | None = None  # game_end: "finished" or "abandoned" as logged (None: absent, finished)


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
    # the line's `type` when it is one of the event types: a rejected game_start is named
    # in its game's first unknown_game message
    type: str | None = None


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


def as_code(code: str) -> Code:
    """The registry's member for a code's string; ValueError for a string that is no code."""
    return Code(code)  # type: ignore[call-arg]  # a value lookup, not the members' __new__


def severity_of(code: str) -> str:
    """The severity of a code, given as a Code or its string."""
    return as_code(code).severity


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
    # how the first game_end says the game ended: "finished" or "abandoned"; None without one
    ended: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "claimed": dict(self.claimed),
            "corrected": dict(self.corrected),
            "winner_claimed": self.winner_claimed,
            "winner_corrected": self.winner_corrected,
            "complete": self.complete,
            "ended": self.ended,
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
    outcome: str  # "bank", "farkle" or "open" (cut off, or forfeited at an abandoned game_end)
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
    kept_claimed: int | None = None  # the keep's claimed points (a running total's difference)
    kept_value: int | None = None  # corrected value of the keep
    ts: str | None = None
    points_before: int = 0  # corrected turn points before this roll (what the dice gave so far)
    opened: bool = False  # whether the player had opened (any bank replayed) before this turn
    kept_turn_points: int | None = None  # the keep's claimed running total, when logged so
    start_total: int = 0  # the player's corrected banked total at the turn's start
    other_start_total: int | None = None  # two players: the other's then; None otherwise
    roll_key: int = 0  # dice keys (pipeline.rules.play.dice_key) of `dice` and `kept`
    kept_key: int | None = None


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
    start_total: int = 0  # as in RollRecord
    other_start_total: int | None = None
    # the roll the keep was taken from, as its RollRecord stands (None: no roll this turn)
    from_roll_key: int | None = None  # dice keys (pipeline.rules.play.dice_key)
    from_kept_key: int | None = None
    from_points_before: int | None = None


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

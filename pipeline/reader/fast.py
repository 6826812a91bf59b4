"""The decoder structs: every msgspec Struct that decodes and type-checks log lines in C.

Ingest reads millions of lines and has about a microsecond and a half of Python per event,
so the common line (a known type, its own fields, nothing extra, plain integers) is
checked entirely by msgspec and turned into an Event with one call. The field types below
are shared by two decoders: one tagged Struct per event type (`decode_event`, the reader's
fast path) and `TurnLine` (the bulk decode of roll/keep/bank/farkle lines by ingest and
audit). They are deliberately
stricter than the contract: `3.0` for an integer, duplicate players or a ruleset object
make a decoder give up, and `validate.py` (the reference, with the messages) decides. So a
fast path can only ever accept a subset of what the reference accepts, and tests hold it
to that.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec
from msgspec import UNSET, Meta

from pipeline.model import Event
from pipeline.reader.validate import END_REASONS, INT64_MAX, INT64_MIN
from pipeline.rules import Ruleset, RulesetError

Name = Annotated[str, Meta(min_length=1)]
Seq = Annotated[int, Meta(ge=1, le=INT64_MAX)]
Int = Annotated[int, Meta(ge=INT64_MIN, le=INT64_MAX)]
Dice = Annotated[tuple[Annotated[int, Meta(ge=1, le=6)], ...], Meta(min_length=1, max_length=6)]
Players = Annotated[tuple[Name, ...], Meta(min_length=1)]
Winner = Union[Name, Annotated[tuple[Name, ...], Meta(min_length=1)]]


# A default of None on a non-optional type: an absent field decodes to None, an explicit
# null is a type error (and so goes to the reference check, which rejects it).
# `ts` is matched by parse_line, not here: a msgspec `pattern` costs twice a direct match.
class _Base(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    game_id: Name
    seq: Seq
    ts: str = None  # type: ignore[assignment]


class GameStart(_Base, tag="game_start", kw_only=True):
    players: Players
    rules: Any = UNSET

    def event(self, file: str, line: int) -> Event | None:
        players = self.players
        if len(set(players)) != len(players):
            return None
        raw = self.rules
        if raw is UNSET:
            rules = raw = None
        else:
            try:
                rules = Ruleset.from_value(raw)
            except RulesetError:
                return None
        return Event(
            self.game_id,
            self.seq,
            "game_start",
            file,
            line,
            self.ts,
            None,
            None,
            None,
            None,
            players,
            rules,
            raw,
            None,
            None,
            {},
        )


class Roll(_Base, tag="roll", kw_only=True):
    player: Name
    dice: Dice

    def event(self, file: str, line: int) -> Event | None:
        return Event(
            self.game_id,
            self.seq,
            "roll",
            file,
            line,
            self.ts,
            self.player,
            self.dice,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            {},
        )


class Keep(_Base, tag="keep", kw_only=True):
    player: Name
    dice: Dice
    points: Int = None  # type: ignore[assignment]
    turn_points: Int = None  # type: ignore[assignment]

    def event(self, file: str, line: int) -> Event | None:
        if (self.points is None) == (self.turn_points is None):  # exactly one: the reference says why
            return None
        return Event(
            self.game_id,
            self.seq,
            "keep",
            file,
            line,
            self.ts,
            self.player,
            self.dice,
            self.points,
            None,
            None,
            None,
            None,
            None,
            None,
            {},
            self.turn_points,
        )


class Bank(_Base, tag="bank", kw_only=True):
    player: Name
    points: Int
    total: Int

    def event(self, file: str, line: int) -> Event | None:
        return Event(
            self.game_id,
            self.seq,
            "bank",
            file,
            line,
            self.ts,
            self.player,
            None,
            self.points,
            self.total,
            None,
            None,
            None,
            None,
            None,
            {},
        )


class Farkle(_Base, tag="farkle", kw_only=True):
    player: Name
    total: Int = None  # type: ignore[assignment]

    def event(self, file: str, line: int) -> Event | None:
        return Event(
            self.game_id,
            self.seq,
            "farkle",
            file,
            line,
            self.ts,
            self.player,
            None,
            None,
            self.total,
            None,
            None,
            None,
            None,
            None,
            {},
        )


class GameEnd(_Base, tag="game_end", kw_only=True):
    winner: Winner = None  # type: ignore[assignment]
    scores: dict[Name, Int] = None  # type: ignore[assignment]
    reason: str = None  # type: ignore[assignment]

    def event(self, file: str, line: int) -> Event | None:
        reason = self.reason
        if reason is not None and reason not in END_REASONS:
            return None
        if reason != "abandoned" and (self.winner is None or self.scores is None):
            return None  # a finished game names its winner and scores: the reference says so
        return Event(
            self.game_id,
            self.seq,
            "game_end",
            file,
            line,
            self.ts,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            self.winner,
            self.scores,
            {},
            None,
            reason,
        )


decode_event = msgspec.json.Decoder(Union[GameStart, Roll, Keep, Bank, Farkle, GameEnd]).decode


class TurnLine(msgspec.Struct, forbid_unknown_fields=True):
    """A roll/keep/bank/farkle line as ingest's bulk decode checks it. A default of None on
    a non-optional type: absent decodes to None, an explicit null is an error (→ reference)."""

    game_id: Name
    seq: Seq
    type: str
    ts: str = None  # type: ignore[assignment]
    player: Name = None  # type: ignore[assignment]
    dice: Dice = None  # type: ignore[assignment]
    points: Int = None  # type: ignore[assignment]
    total: Int = None  # type: ignore[assignment]
    turn_points: Int = None  # type: ignore[assignment]

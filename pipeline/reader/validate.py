"""The reference check of one decoded line: an Event, or a BadLine that says what is wrong.

This is the readable, complete statement of log-format.md's event rules, written for the
person who gets the message: every rejection names the field and shows the value. The fast
path in `fast.py` accepts only events this module would accept, and builds the same Event;
whatever it is unsure about comes here. Types follow JSON Schema: `true` is not an integer,
`3.0` is (stored as 3). Integers must fit in 64 bits so ingest can always store them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pipeline.model import EVENT_TYPES, BadLine, Event
from pipeline.reader.timestamps import is_rfc3339
from pipeline.rules import Ruleset, RulesetError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

COMMON_FIELDS = ("game_id", "seq", "type", "ts")
# Fields each type carries (beyond COMMON_FIELDS), in the order they are checked; the set
# tells which fields of a line are the event's own and which go to `extra`.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "game_start": ("players", "rules"),
    "roll": ("player", "dice"),
    "keep": ("player", "dice", "points", "turn_points"),
    "bank": ("player", "points", "total"),
    "farkle": ("player", "total"),
    "game_end": ("winner", "scores", "reason"),
}
#: game_end's `reason` values: the first is what an absent reason means.
END_REASONS = ("finished", "abandoned")
KNOWN_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(COMMON_FIELDS + fields) for kind, fields in TYPE_FIELDS.items()
}
_MISSING = object()
_JSON_KIND = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


class Invalid(Exception):
    """One reason a line is not a valid event; its text is the BadLine reason."""


def check_object(obj: Any, raw: bytes, file: str, line: int) -> Event | BadLine:
    """Validate a decoded JSON value; never raises."""
    if type(obj) is not dict:
        kind = _JSON_KIND.get(type(obj), type(obj).__name__)
        return _bad(raw, file, line, f"a JSON {kind} is not an event: each line must be a JSON object")
    try:
        return _event(obj, file, line)
    except Invalid as exc:
        game_id, seq, player, type_ = _identity(obj)
        return BadLine(file, line, "bad_event", str(exc), line_text(raw), game_id, seq, player, type_)


def _event(obj: dict[str, Any], file: str, line: int) -> Event:
    game_id = _name(obj, "game_id")
    seq = _integer(obj, "seq", minimum=1)
    kind = obj.get("type", _MISSING)
    if kind is _MISSING:
        raise Invalid("missing field 'type'")
    if type(kind) is not str or kind not in TYPE_FIELDS:
        raise Invalid(f"unknown type {show(kind)}: types are {', '.join(EVENT_TYPES)}")
    ts = obj.get("ts")
    if "ts" in obj and not (type(ts) is str and is_rfc3339(ts)):
        if type(ts) is str and is_rfc3339(ts.replace(":60", ":59", 1)):
            raise Invalid(f"'ts' has a leap second (second 60) at other than 23:59:60 UTC: {show(ts)}")
        raise Invalid(f"'ts' is not an RFC 3339 date-time such as 2026-01-02T03:04:05Z: {show(ts)}")
    event = Event(game_id, seq, kind, file, line, ts)
    _FILL[kind](obj, event)
    known = KNOWN_FIELDS[kind]
    event.extra = {key: value for key, value in obj.items() if key not in known}
    return event


# ---- per type: fill the event's own fields, in log-format.md's order ------------------
def _fill_game_start(obj: dict[str, Any], event: Event) -> None:
    event.players = _players(obj)
    if "rules" in obj:
        raw = obj["rules"]
        try:
            event.rules = Ruleset.from_value(raw)
        except RulesetError as exc:
            raise Invalid(f"invalid 'rules': {exc}") from None
        event.rules_raw = raw


def _fill_roll(obj: dict[str, Any], event: Event) -> None:
    event.player = _name(obj, "player", "roll")
    event.dice = _dice(obj, "roll")


def _fill_keep(obj: dict[str, Any], event: Event) -> None:
    event.player = _name(obj, "player", "keep")
    event.dice = _dice(obj, "keep")
    if "turn_points" in obj:
        if "points" in obj:
            raise Invalid(
                "a keep has both 'points' and 'turn_points': give the keep's own points or the "
                "turn's running total, not both"
            )
        event.turn_points = _integer(obj, "turn_points", "keep")
    elif "points" in obj:
        event.points = _integer(obj, "points", "keep")
    else:
        raise Invalid("missing field 'points' for a keep (or 'turn_points', the turn's running total)")


def _fill_bank(obj: dict[str, Any], event: Event) -> None:
    event.player = _name(obj, "player", "bank")
    event.points = _integer(obj, "points", "bank")
    event.total = _integer(obj, "total", "bank")


def _fill_farkle(obj: dict[str, Any], event: Event) -> None:
    event.player = _name(obj, "player", "farkle")
    if "total" in obj:
        event.total = _integer(obj, "total", "farkle")


def _fill_game_end(obj: dict[str, Any], event: Event) -> None:
    abandoned = False
    if "reason" in obj:
        reason = obj["reason"]
        if type(reason) is not str or reason not in END_REASONS:
            raise Invalid(f"'reason' must be \"finished\" or \"abandoned\", got {show(reason)}")
        event.reason = reason
        abandoned = reason == "abandoned"
    winner = None if abandoned else _require(obj, "winner", "game_end")
    if abandoned:  # an abandoned game may name no winner (absent or null)
        winner = obj.get("winner")
    if winner is None and abandoned:
        event.winner = None
    elif type(winner) is list:
        if not winner:
            raise Invalid("'winner' is an empty list: name the winner, or every tied player")
        for name in winner:
            _check_name(name, "each name in 'winner'")
        event.winner = tuple(winner)
    else:
        event.winner = _check_name(winner, "'winner'", "a non-empty string or a list of names")
    if abandoned and "scores" not in obj:  # an abandoned game may give no scores
        return
    scores = _require(obj, "scores", "game_end")
    if type(scores) is not dict:
        raise Invalid(f"'scores' must be an object {{name: total}}, got {show(scores)}")
    checked = {}
    for name, total in scores.items():
        if not name:
            raise Invalid("'scores' has an empty player name")
        checked[name] = _as_int64(total, f"'scores' value for {show(name)}")
    event.scores = checked


_FILL = {
    "game_start": _fill_game_start,
    "roll": _fill_roll,
    "keep": _fill_keep,
    "bank": _fill_bank,
    "farkle": _fill_farkle,
    "game_end": _fill_game_end,
}


# ---- field checks ----------------------------------------------------------------------
def _require(obj: dict[str, Any], field: str, kind: str | None = None) -> Any:
    value = obj.get(field, _MISSING)
    if value is _MISSING:
        raise Invalid(f"missing field {field!r}" + (f" for a {kind}" if kind else ""))
    return value


def _name(obj: dict[str, Any], field: str, kind: str | None = None) -> str:
    return _check_name(_require(obj, field, kind), repr(field))


def _check_name(value: Any, what: str, expected: str = "a non-empty string") -> str:
    if type(value) is not str or not value:
        raise Invalid(f"{what} must be {expected}, got {show(value)}")
    return value


def _integer(obj: dict[str, Any], field: str, kind: str | None = None, minimum: int | None = None) -> int:
    value = _require(obj, field, kind)
    number = as_int64(value)
    if number is None or (minimum is not None and number < minimum):
        expected = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise Invalid(f"{field!r} must be {expected}, got {show(value)}")
    return number


def _as_int64(value: Any, what: str) -> int:
    number = as_int64(value)
    if number is None:
        raise Invalid(f"{what} must be an integer, got {show(value)}")
    return number


def _dice(obj: dict[str, Any], kind: str) -> tuple[int, ...]:
    dice = _require(obj, "dice", kind)
    if type(dice) is not list:
        raise Invalid(f"'dice' must be a list of 1 to 6 dice, got {show(dice)}")
    if not dice:
        raise Invalid(f"'dice' is empty: a {kind} has 1 to 6 dice")
    if len(dice) > 6:
        raise Invalid(f"'dice' has {len(dice)} dice: a {kind} has at most 6")
    faces = []
    for die in dice:
        face = as_int64(die)
        if face is None:
            raise Invalid(f"die {show(die)} in 'dice' is not an integer")
        if not 1 <= face <= 6:
            raise Invalid(f"die {show(die)} in 'dice' is outside 1..6")
        faces.append(face)
    return tuple(faces)


def _players(obj: dict[str, Any]) -> tuple[str, ...]:
    players = _require(obj, "players", "game_start")
    if type(players) is not list or not players:
        raise Invalid(f"'players' must be a non-empty list of names, got {show(players)}")
    seen = set()
    for name in players:
        _check_name(name, "each name in 'players'")
        if name in seen:
            raise Invalid(f"'players' names {show(name)} twice: names must be distinct")
        seen.add(name)
    return tuple(players)


def as_int64(value: Any) -> int | None:
    """JSON Schema's integer (3 and 3.0 are, true and 3.5 are not), within 64 bits."""
    if type(value) is int:
        number = value
    elif type(value) is float and value.is_integer():
        number = int(value)
    else:
        return None
    return number if INT64_MIN <= number <= INT64_MAX else None


def _identity(obj: dict[str, Any]) -> tuple[str | None, int | None, str | None, str | None]:
    """game_id, seq, player and type of a rejected line, each only if it can be read: the
    seq whenever it is a JSON integer (0 and negative ones too, log-format.md; one beyond
    64 bits cannot be stored and is left out), game_id and player when they are non-empty
    strings, the type when it is one of the event types."""
    game_id = obj.get("game_id")
    if type(game_id) is not str or not game_id:
        game_id = None
    seq = as_int64(obj.get("seq"))
    player = None
    kind = obj.get("type")
    if type(kind) is not str or kind not in ("game_start", "game_end"):
        player = obj.get("player")
        if type(player) is not str or not player:
            player = None
    if type(kind) is not str or kind not in TYPE_FIELDS:
        kind = None
    return game_id, seq, player, kind


# ---- shared with the JSON error path ------------------------------------------------------
def show(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it (JSON), strings in single quotes like field names."""
    text = repr(value) if type(value) is str else msgspec.json.encode(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def line_text(raw: bytes | str) -> str:
    """BadLine.raw: the line as text, undecodable bytes shown as U+FFFD."""
    if isinstance(raw, str):  # callers holding text (tests, converters) may pass it as is
        return raw.rstrip("\r\n")
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")


def _bad(raw: bytes, file: str, line: int, reason: str) -> BadLine:
    return BadLine(file, line, "bad_event", reason, line_text(raw))

"""Rulesets: the house-rule knobs of rules.md, validated once so scoring never has to.

A ruleset arrives from three places (a log's `rules` field, a ruleset file, the CLI) and all
three use the same names, so one parser serves them all. Every rejection raises
`RulesetError` naming the knob and what it accepts, because a user fixing a ruleset file
needs to know which line to change.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from pipeline.limits import TOO_DEEP, TOO_MANY_DIGITS
from pipeline.errors import UserError

N_OF_A_KIND_MODES = ("flat", "doubling", "linear")

#: Upper bounds of the numeric knobs (docs/rules.md, "Limits"). Generous for any real house
#: rule: the largest real table value is six of a kind = 10,000 and real targets are 2,000 to
#: 50,000. They keep every figure far inside 64 bits (a keep is worth at most 8 x MAX_POINTS,
#: under `doubling`), the simulator's games finite (its bots give up after 2,000 turns per
#: player) and the turn solver's state space, which follows the values, within its budget
#: for every ruleset on the usual grid of 50.
MAX_POINTS = 100_000  # every combination, `partial_straights` value, opening, min_bank, farkle_penalty
MAX_TARGET = 1_000_000  # a hundred times the standard 10,000
MAX_PENALTY_AFTER = 1_000  # farkles in a row; the usual 3
MAX_ROUNDS = 1_000  # rounds of a round-limited game; real "N-round modes" play 5 to 20
UPPER_BOUNDS: dict[str, int] = {
    "target": MAX_TARGET,
    "penalty_after": MAX_PENALTY_AFTER,
    "rounds": MAX_ROUNDS,
}  # others: MAX_POINTS


class RulesetError(UserError, ValueError):
    """A ruleset name, knob or knob value that rules.md does not allow."""


def _partial_straights_items(value: Mapping[str, int] | None) -> tuple[tuple[str, int], ...] | None:
    if value is None:
        return None
    return tuple(sorted(value.items()))


@dataclass(frozen=True)
class Ruleset:
    """Every knob of rules.md, under exactly the names and defaults of `standard`.

    `partial_straights` is held as a sorted tuple of (faces, points) so the ruleset stays
    hashable and can key caches; `to_dict` gives it back as an object. `base` records which
    built-in the ruleset was derived from, for display only: two rulesets with the same
    knobs are equal whatever their base.
    """

    single_one: int = 100
    single_five: int = 50
    three_ones: int = 1000
    n_of_a_kind: str = "flat"
    four_kind: int | None = None
    five_kind: int | None = None
    six_kind: int | None = None
    straight: int | None = 1500
    partial_straights: tuple[tuple[str, int], ...] | None = None
    three_pairs: int | None = 1500
    four_kind_plus_pair: int | None = 1500
    two_triplets: int | None = 2500
    split_kinds: bool = True
    opening: int = 500
    min_bank: int = 0
    farkle_penalty: int = 0
    penalty_after: int = 3
    target: int | None = 10000  # None: no target (then `rounds` is set)
    rounds: int | None = None  # None: no limit on rounds
    base: str = field(default="standard", compare=False)

    # ---- construction -------------------------------------------------------------
    @classmethod
    def builtin(cls, name: str) -> "Ruleset":
        try:
            return BUILTIN_RULESETS[name]
        except (KeyError, TypeError):
            raise RulesetError(
                f"unknown ruleset {_show(name)}{_closest(name, BUILTIN_RULESETS)}: "
                f"built-in rulesets are {', '.join(BUILTIN_RULESETS)}"
            ) from None

    @classmethod
    def from_value(cls, value: Any) -> "Ruleset":
        """Build from a log's `rules` value: a built-in name or `{"base": NAME, knob: value}`."""
        if isinstance(value, str):
            return cls.builtin(value)
        if isinstance(value, Ruleset):
            return value
        if not isinstance(value, Mapping):
            raise RulesetError(f"rules must be a ruleset name or an object, not {type(value).__name__}")
        overrides = dict(value)
        base_name = overrides.pop("base", "standard")
        if not isinstance(base_name, str):
            raise RulesetError(f"knob 'base' must be a built-in ruleset name ({', '.join(BUILTIN_RULESETS)})")
        base = cls.builtin(base_name)
        knobs = {}
        for name, raw in overrides.items():
            if name not in KNOB_NAMES:
                raise RulesetError(
                    f"unknown knob {_show(name)}{_closest(name, KNOB_NAMES)}: knobs are base, {', '.join(KNOB_NAMES)}"
                )
            knobs[name] = _validate_knob(name, raw)
        rules = dataclasses.replace(base, base=base_name, **knobs)
        if rules.target is None and rules.rounds is None:
            raise RulesetError(
                "knobs 'target' and 'rounds' are both null: a game needs a target, a round limit or both"
            )
        return rules

    @classmethod
    def from_json_text(cls, text: str) -> "Ruleset":
        try:
            value = json.loads(text)
        except RecursionError:
            raise RulesetError(f"ruleset is not valid JSON: {TOO_DEEP}") from None
        except ValueError as exc:  # JSONDecodeError, or an integer of more than 4300 digits
            raise RulesetError(f"ruleset is not valid JSON: {json_problem(exc)}") from None
        return cls.from_value(value)

    # ---- canonical form -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Canonical form: base plus every knob, stable key order (what ingest stores)."""
        out: dict[str, Any] = {"base": self.base}
        for name in KNOB_NAMES:
            value = getattr(self, name)
            if name == "partial_straights" and value is not None:
                value = dict(value)
            out[name] = value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False, separators=(",", ":"))

    @property
    def name(self) -> str:
        """The built-in name when the knobs match one exactly, else `custom (base X)`."""
        for builtin_name, builtin in BUILTIN_RULESETS.items():
            if builtin == self:
                return builtin_name
        return f"custom (base {self.base})"

    # ---- derived values used by scoring ---------------------------------------------
    def triple_value(self, face: int) -> int | None:
        return self.three_ones if face == 1 else face * 100

    def kind_value(self, face: int, n: int) -> int | None:
        """Points for n (3..6) equal dice of `face` taken as one set, None if not a combination."""
        if n == 3:
            return self.triple_value(face)
        fixed = {4: self.four_kind, 5: self.five_kind, 6: self.six_kind}[n]
        if fixed is not None:
            return fixed
        if self.n_of_a_kind == "flat":
            return {4: 1000, 5: 2000, 6: 3000}[n]
        triple = self.triple_value(face)
        if triple is None:
            return None
        factor = {"doubling": {4: 2, 5: 4, 6: 8}, "linear": {4: 2, 5: 3, 6: 4}}[self.n_of_a_kind][n]
        return factor * triple


KNOB_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Ruleset) if f.name != "base")

# rules.md, "Values": these combination knobs may be null (not a combination); the lone 1,
# the lone 5 and three 1s may not (0 is how a table switches them off).
_NULLABLE_POINTS = {
    "four_kind",
    "five_kind",
    "six_kind",
    "straight",
    "three_pairs",
    "four_kind_plus_pair",
    "two_triplets",
}
_COMBINATION_POINTS = {"single_one", "single_five", "three_ones"}
_POINTS = {"opening", "min_bank", "farkle_penalty"}
_POSITIVE = {"penalty_after"}
_POSITIVE_OR_NULL = {"target", "rounds"}  # null: no target / no round limit


def _as_int(value: Any) -> int | None:
    """JSON Schema's idea of an integer: 3 and 3.0 are, true and 3.5 are not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _validate_knob(name: str, value: Any) -> Any:
    if name in _NULLABLE_POINTS:
        if value is None:
            return None
        number = _as_int(value)
        if number is None or number < 0:
            raise RulesetError(f"knob {name!r} must be an integer >= 0 or null (not a combination), got {_show(value)}")
        return _at_most(f"knob {name!r}", number, UPPER_BOUNDS.get(name, MAX_POINTS), value)
    if name in _COMBINATION_POINTS:
        number = _as_int(value)
        if number is None or number < 0:
            raise RulesetError(
                f"knob {name!r} must be an integer >= 0 (0: not a combination; null is not allowed), got {_show(value)}"
            )
        return _at_most(f"knob {name!r}", number, UPPER_BOUNDS.get(name, MAX_POINTS), value)
    if name in _POINTS:
        number = _as_int(value)
        if number is None or number < 0:
            raise RulesetError(f"knob {name!r} must be an integer >= 0 (0 turns it off), got {_show(value)}")
        return _at_most(f"knob {name!r}", number, UPPER_BOUNDS.get(name, MAX_POINTS), value)
    if name in _POSITIVE:
        number = _as_int(value)
        if number is None or number < 1:
            raise RulesetError(f"knob {name!r} must be an integer >= 1, got {_show(value)}")
        return _at_most(f"knob {name!r}", number, UPPER_BOUNDS.get(name, MAX_POINTS), value)
    if name in _POSITIVE_OR_NULL:
        if value is None:
            return None
        number = _as_int(value)
        if number is None or number < 1:
            meaning = "no target" if name == "target" else "no round limit"
            raise RulesetError(f"knob {name!r} must be an integer >= 1 or null ({meaning}), got {_show(value)}")
        return _at_most(f"knob {name!r}", number, UPPER_BOUNDS[name], value)
    if name == "n_of_a_kind":
        if value not in N_OF_A_KIND_MODES:
            raise RulesetError(f"knob 'n_of_a_kind' must be one of {', '.join(N_OF_A_KIND_MODES)}, got {_show(value)}")
        return value
    if name == "split_kinds":
        if not isinstance(value, bool):
            raise RulesetError(f"knob 'split_kinds' must be true or false, got {_show(value)}")
        return value
    if name == "partial_straights":
        return _validate_partial_straights(value)
    raise RulesetError(f"unknown knob {name!r}")  # pragma: no cover - KNOB_NAMES guards


def json_problem(exc: ValueError) -> str:
    """A parser's complaint, in words for the user (Python's advice on digits is not for them)."""
    return TOO_MANY_DIGITS if "digits" in str(exc) and "limit" in str(exc) else str(exc)


def _at_most(what: str, number: int, limit: int, given: Any) -> int:
    if number > limit:
        raise RulesetError(f"{what} must be at most {limit:,} (see the limits in docs/rules.md), got {_show(given)}")
    return number


def _closest(name: Any, known: Iterable[str]) -> str:
    """' (did you mean standard?)' for a near miss such as 'standrad' or 'Standard', else ''."""
    if not isinstance(name, str):
        return ""
    import difflib

    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f" (did you mean {lowered[close[0]]}?)" if close else ""


def _show(value: Any, limit: int = 60) -> str:
    """A knob value for a message: short, whatever the input (a 1 MB string, an integer of
    5,000 digits, a list nested 900 deep)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        text = "(a value too large to show)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _validate_partial_straights(value: Any) -> tuple[tuple[str, int], ...] | None:
    allowed = "a run of 3 to 5 consecutive faces written in order, e.g. \"12345\" or \"23456\""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RulesetError(
            f"knob 'partial_straights' must be null or an object of {{faces: points}}, got {_show(value)}"
        )
    items: dict[str, int] = {}
    for faces, points in value.items():
        if not _is_run(faces):
            raise RulesetError(f"knob 'partial_straights' key {_show(faces)} is not {allowed}")
        number = _as_int(points)
        if number is None or number < 0:
            raise RulesetError(
                f"knob 'partial_straights' value for {_show(faces)} must be an integer >= 0, got {_show(points)}"
            )
        items[faces] = _at_most(f"knob 'partial_straights' value for {faces!r}", number, MAX_POINTS, points)
    return _partial_straights_items(items) if items else None


def _is_run(faces: Any) -> bool:
    if not isinstance(faces, str) or not 3 <= len(faces) <= 5 or not (faces.isascii() and faces.isdigit()):
        return False
    digits = [int(c) for c in faces]
    return digits[0] >= 1 and digits[-1] <= 6 and all(b == a + 1 for a, b in zip(digits, digits[1:]))


STANDARD = Ruleset()
PLAYMONSTER = dataclasses.replace(STANDARD, three_ones=300, base="playmonster")
BUILTIN_RULESETS: dict[str, Ruleset] = {"standard": STANDARD, "playmonster": PLAYMONSTER}

BUILTIN_DESCRIPTIONS: dict[str, str] = {
    "standard": "the common table: three 1s = 1000, 4/5/6 of a kind = 1000/2000/3000, opening 500",
    "playmonster": "PlayMonster rule sheet (2016): as standard but three 1s = 300",
}

"""What a valid `ts` is: an RFC 3339 date-time, checked by one regular expression.

The whole rule (calendar included: 2026-02-30 and 2025-02-29 are rejected, 2024-02-29 is
not) lives in one pattern so the schema in schemas/event.schema.json can carry the very
same text; tests/test_event_schema.py holds the two equal. A regex beats datetime parsing
here because it is one C call per event, and ingest's budget is about a microsecond.

Decisions where RFC 3339 leaves room: `T`/`t` and `Z`/`z` are accepted (its ABNF is
case-insensitive); a space instead of `T` is not; fractional seconds of any length are; a
leap second (`:60`) is not, because no timestamp type downstream (Python, Arrow, DuckDB)
can hold it and ingest would fail on a line the reader had let through.
"""

from __future__ import annotations

import re

_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_DATE = (
    r"(?:[0-9]{4}-(?:"
    r"(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    rf"|{_LEAP_YEAR}-02-29)"
)
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
_OFFSET = r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"

# ECMA-262 form, as JSON Schema's `pattern` wants it ([0-9], not \d: Python's \d matches
# every Unicode digit).
TS_PATTERN = rf"^{_DATE}[Tt]{_TIME}{_OFFSET}$"

# Python's `$` also matches before a final newline; `\Z` does not.
TS_PYTHON_PATTERN = TS_PATTERN[:-1] + r"\Z"

# The compiled matcher itself, not wrapped in a function: the fast path calls it per event.
match_ts = re.compile(TS_PYTHON_PATTERN).match


def is_rfc3339(value: str) -> bool:
    """True for a well-formed RFC 3339 date-time such as 2026-01-02T03:04:05.5+01:00."""
    return match_ts(value) is not None


# ---- storing: text -> UTC instants ---------------------------------------------------------
# Python's datetime (and so every reader of the dataset through Python: pyarrow's to_pylist,
# DuckDB's fetchall, the report) holds 0001-01-01 to 9999-12-31 only. A valid `ts` within a
# day of those edges, with an offset, is an instant outside them (0001-01-01T00:00:00+01:00
# is 0000-12-31T23:00Z): it is stored clamped to the edge, which keeps its order and its
# meaning (such values are sentinels: "the beginning", "never"); the exact text stays in the
# log at the event's source_file:source_line. docs/reliability.md says so.
UTC_MIN_US = -62135596800_000_000  # 0001-01-01T00:00:00Z, microseconds since the epoch
UTC_MAX_US = 253402300799_999_999  # 9999-12-31T23:59:59.999999Z

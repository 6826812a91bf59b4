"""What a valid `ts` is: an RFC 3339 date-time, checked by one regular expression.

The whole rule (calendar included: 2026-02-30 and 2025-02-29 are rejected, 2024-02-29 is
not) lives in one pattern so the schema in schemas/event.schema.json can carry the very
same text; tests/test_event_schema.py holds the two equal. A regex beats datetime parsing
here because it is one C call per event, and ingest's budget is about a microsecond.

`T`/`t` and `Z`/`z` are accepted (its ABNF is case-insensitive), and so is a space instead
of the `T` (RFC 3339, section 5.6, allows it); fractional seconds of any length are. A leap
second (second 60) is valid where one can occur: at 23:59:60 UTC, whatever the offset it
is written with (`2016-12-31T23:59:60Z`, `2017-01-01T00:59:60+01:00`). No timestamp type
downstream (Python, Arrow, DuckDB) holds second 60, so ingest stores such an instant as
the last microsecond before it (23:59:59.999999 UTC) and the text stays in the log. One
pattern cannot tie the time to its offset, so a leap second is the one case outside
TS_PATTERN: `is_rfc3339` checks it apart, and the fast paths, which match TS_PATTERN only,
leave such a line to the reader.
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
_LEAP_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:60(?:\.[0-9]+)?"
_OFFSET = r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"

# ECMA-262 form, as JSON Schema's `pattern` wants it ([0-9], not \d: Python's \d matches
# every Unicode digit). Every valid `ts` but a leap second.
TS_PATTERN = rf"^{_DATE}[Tt ]{_TIME}{_OFFSET}$"
# What the JSON Schema carries: TS_PATTERN, or second 60 at any time (a pattern cannot
# check that a leap second falls at 23:59:60 UTC; the schema's description says so).
TS_SCHEMA_PATTERN = rf"^{_DATE}[Tt ](?:{_TIME}|{_LEAP_TIME}){_OFFSET}$"

# Python's `$` also matches before a final newline; `\Z` does not.
TS_PYTHON_PATTERN = TS_PATTERN[:-1] + r"\Z"

# The compiled matcher itself, not wrapped in a function: the fast path calls it per event.
# It matches every valid `ts` but a leap second (`is_rfc3339` is the whole rule).
match_ts = re.compile(TS_PYTHON_PATTERN).match

_match_leap = re.compile(
    rf"^{_DATE}[Tt ]([01][0-9]|2[0-3]):([0-5][0-9]):60(?:\.[0-9]+)?(?:[Zz]|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))\Z"
).match


def is_rfc3339(value: str) -> bool:
    """True for a well-formed RFC 3339 date-time such as 2026-01-02T03:04:05.5+01:00."""
    return match_ts(value) is not None or is_leap_second(value)


def is_leap_second(value: str) -> bool:
    """A valid `ts` at second 60: its time, less its offset, is 23:59 UTC."""
    m = _match_leap(value)
    if m is None:
        return False
    hour, minute, sign, off_hour, off_minute = m.groups()
    local = int(hour) * 60 + int(minute)
    offset = 0 if sign is None else (1 if sign == "+" else -1) * (int(off_hour) * 60 + int(off_minute))
    return (local - offset) % (24 * 60) == 23 * 60 + 59


def without_leap_second(value: str) -> str:
    """A valid `ts` as ingest stores it: second 60 becomes the last microsecond before it
    (same minute, same offset), so the instant sorts just before the next minute; any
    other text is returned as it is."""
    if len(value) > 19 and value[16:19] == ":60" and is_leap_second(value):
        end = 19
        if end < len(value) and value[end] == ".":
            end += 1
            while end < len(value) and value[end].isdigit():
                end += 1
        return value[:16] + ":59.999999" + value[end:]
    return value


# ---- storing: text -> UTC instants ---------------------------------------------------------
# Python's datetime (and so every reader of the dataset through Python: pyarrow's to_pylist,
# DuckDB's fetchall, the report) holds 0001-01-01 to 9999-12-31 only. A valid `ts` within a
# day of those edges, with an offset, is an instant outside them (0001-01-01T00:00:00+01:00
# is 0000-12-31T23:00Z): it is stored clamped to the edge, which keeps its order and its
# meaning (such values are sentinels: "the beginning", "never"); the exact text stays in the
# log at the event's source_file:source_line. docs/reliability.md says so.
UTC_MIN_US = -62135596800_000_000  # 0001-01-01T00:00:00Z, microseconds since the epoch
UTC_MAX_US = 253402300799_999_999  # 9999-12-31T23:59:59.999999Z

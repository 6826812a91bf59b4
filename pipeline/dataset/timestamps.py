"""`ts` texts as the dataset's timestamp column: the one text -> UTC conversion.

The reader has already checked every text (pipeline.reader.timestamps); what remains here
is Arrow's bulk cast, with the calendar's edges clamped so no valid text is ever refused.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset.tables import TS
from pipeline.reader.timestamps import UTC_MAX_US, UTC_MIN_US, is_rfc3339, without_leap_second


def to_utc_array(values) -> "pa.Array":
    """Valid `ts` texts (or None) -> timestamp[us, UTC], never raising for any of them.

    Fractional seconds beyond microseconds are cut (Arrow cannot hold them), instants
    beyond year 1..9999 are clamped to its edges (above), a leap second is stored as the
    last microsecond before it (pipeline.reader.timestamps), and a text that is not a valid
    `ts` at all (the reader never lets one through) becomes null."""
    text = pa.array(values, pa.string())
    if text.null_count == len(text):
        return pa.nulls(len(text), TS)
    try:  # the common column: Arrow reads every text as it is (a space for the 'T' too)
        stamps = text.cast(TS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        stamps = _normalized(text)
    micros = stamps.cast(pa.int64())
    low, high = pc.min_max(micros).values()
    if low.is_valid and (low.as_py() < UTC_MIN_US or high.as_py() > UTC_MAX_US):
        micros = pc.min_element_wise(
            pc.max_element_wise(micros, UTC_MIN_US, skip_nulls=False), UTC_MAX_US, skip_nulls=False
        )
        stamps = micros.cast(TS)
    return stamps


def _normalized(text: "pa.Array") -> "pa.Array":
    """The texts Arrow refuses as they are, made castable: a lower-case 't' or 'z', a leap
    second, more than six digits of a second. Several passes over every text, many times the
    cast alone: only a column that needs them pays (docs/performance.md)."""
    text = pc.utf8_upper(text)  # RFC 3339 allows 't' and 'z'
    if pc.any(pc.match_substring_regex(text, "^.{10} ")).as_py():  # a space for the 'T'
        text = pc.replace_substring_regex(text, "^(.{10}) ", "\\1T")
    if pc.any(pc.match_substring_regex(text, "^.{16}:60")).as_py():  # leap seconds
        text = pa.array([v if v is None else without_leap_second(v) for v in text.to_pylist()], pa.string())
    try:
        return text.cast(TS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        text = pc.replace_substring_regex(text, r"(\.[0-9]{6})[0-9]+", r"\1")
        try:
            return text.cast(TS)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return pa.array([_one_utc(v) for v in text.to_pylist()], pa.int64()).cast(TS)


def _one_utc(value: str | None) -> int | None:
    """Microseconds since the epoch of one text Arrow could not cast with the others."""
    if value is None or not is_rfc3339(value):
        return None
    try:
        return pa.array([value]).cast(TS).cast(pa.int64())[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None

"""One line of bytes → Event, BadLine or nothing (a blank line).

Strict JSON: msgspec rejects NaN, Infinity, trailing garbage and invalid UTF-8 itself, so
the only work here is choosing the path (fast.py first, validate.py when it gives up) and
turning a decoder error into a sentence a person can act on.

Two limits (pipeline.limits) are enforced here, off the hot path: a line the reader cut
short for its length (`LongLine`) and a value nested deeper than MAX_JSON_DEPTH are both
`bad_json`. The decoders recurse per level, so a line nested thousands deep raises
RecursionError from inside them; that is caught and reported like any other bad line.
"""

from __future__ import annotations

import re

import msgspec

from pipeline.limits import MAX_JSON_DEPTH, TOO_DEEP, TOO_MANY_DIGITS, format_bytes
from pipeline.model import BadLine, Event
from pipeline.reader.fast import decode_event
from pipeline.reader.lines import LONG_LINE_HEAD, LongLine
from pipeline.reader.sniff import OLD_MAC_FIX
from pipeline.reader.timestamps import match_ts
from pipeline.reader.validate import check_object, line_text

_decode_any = msgspec.json.Decoder().decode
_ValidationError = msgspec.ValidationError
_MsgspecError = msgspec.MsgspecError


def parse_line(raw: bytes, file: str, line: int) -> Event | BadLine | None:
    """Never raises: a line that is not a valid event comes back as a BadLine.

    `raw` is the line's bytes as read (a str is accepted too, for callers holding text).
    """
    try:
        fast = decode_event(raw)
        ts = fast.ts
        if ts is None or match_ts(ts) is not None:
            event = fast.event(file, line)
            if event is not None:
                return event
    except _ValidationError:
        pass  # well-formed JSON the fast path does not take: the reference check decides
    except _MsgspecError as exc:
        return _bad_json(raw, file, line, exc)
    except RecursionError:
        return _too_deep(raw, file, line)
    try:
        obj = _decode_any(raw)
    except _MsgspecError as exc:
        return _bad_json(raw, file, line, exc)
    except RecursionError:
        return _too_deep(raw, file, line)
    if _may_nest_too_deep(raw) and nesting_exceeds(obj, MAX_JSON_DEPTH):
        return _too_deep(raw, file, line)
    return check_object(obj, raw, file, line)


def is_blank(raw: bytes) -> bool:
    """Empty or only whitespace: skipped, but still counted in line numbers."""
    return not raw or raw.isspace()


def _may_nest_too_deep(raw: bytes | str) -> bool:
    """Cheap pre-check (two C scans): each level of nesting needs its own bracket."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH


def nesting_exceeds(value, limit: int) -> bool:
    """True if arrays and objects nest more than `limit` levels deep (the top level is 1).
    Iterative, so it is safe on any value the decoder could build."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


def _too_deep(raw: bytes, file: str, line: int) -> BadLine:
    return BadLine(file, line, "bad_json", "not valid JSON: " + TOO_DEEP, line_text(raw))


def long_line_reject(file: str, line: int, size: int, head: bytes, limit: int) -> BadLine:
    """The reject of a line over the length limit: every reader of logs (iter_lines here,
    any other splitter) makes it with this, so the message and the kept text are the same."""
    reason = f"line is {size:,} bytes, over the limit of {format_bytes(limit)}; raise it with --max-line-bytes"
    return BadLine(file, line, "bad_json", reason + _line_endings_hint(head), line_text(head[:LONG_LINE_HEAD]))


_CR_BETWEEN_OBJECTS = re.compile(rb"\}[ \t]*\r[ \t]*\{")


def _line_endings_hint(raw: bytes | str) -> str:
    """What to do about a line that is several events ended by carriage returns alone (a
    file that is not sniffed, such as stdin, reaches the parser whole). `raw` may be text
    (parse_line takes a str too)."""
    head = raw[:LONG_LINE_HEAD]
    if isinstance(head, str):
        head = head.encode("utf-8", "surrogateescape")
    if _CR_BETWEEN_OBJECTS.search(head) is None:
        return ""
    return f"; its events are separated by carriage returns (\\r) alone, old Mac line endings: {OLD_MAC_FIX}"


def _bad_json(raw: bytes, file: str, line: int, exc: Exception) -> BadLine | None:
    if type(raw) is LongLine:  # holds no bytes: see lines.LongLine
        return long_line_reject(file, line, raw.size, raw.head, raw.limit)
    if is_blank(raw):
        return None
    reason = "not valid JSON: " + json_error(raw, exc) + _line_endings_hint(raw)
    return BadLine(file, line, "bad_json", reason, line_text(raw))


def json_error(raw: bytes, exc: Exception) -> str:
    """msgspec's message, reworded where it would puzzle a reader of the log."""
    try:
        if not isinstance(raw, str):
            raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"invalid UTF-8 (byte 0x{raw[bad.start]:02x} at offset {bad.start})"
    message = str(exc)
    if message.startswith("JSON is malformed: "):
        message = message[len("JSON is malformed: ") :]
    if message.startswith("invalid character (byte "):
        at = int(message[len("invalid character (byte ") : -1])
        data = raw.encode() if isinstance(raw, str) else raw
        for word, start in ((b"-Infinity", at - 1), (b"Infinity", at), (b"NaN", at)):
            if start >= 0 and data.startswith(word, start):
                return f"{word.decode()} is not a JSON number (byte {start})"
    if message == "Input data was truncated":
        return "the line ends in the middle of a value (cut off, or a bad escape)"
    if message.startswith(("Number out of range", "Integer value out of range")):
        return TOO_MANY_DIGITS
    return message

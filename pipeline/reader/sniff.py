"""What a file looks like, from its first bytes: JSON Lines, or something given by mistake.

A scoresheet CSV, a README, a Parquet file or a saved report passed as a log used to become
hundreds of `bad_json` findings, one per line, burying the one thing the user needs to
hear: this is not a log. `sniff_file` reads at most SNIFF_BYTES (decompressing gzip) and
says what the file looks like; `pipeline.reader.inputs` calls it for every regular file before
audit or ingest reads it, so both skip such a file with one sentence instead.

The test is deliberately lenient towards logs: a file is JSON Lines as soon as one of its
first lines starts like a JSON object, so a log whose first line is damaged is still read
(and its bad lines reported one by one, as before). Only files in which no early line
could be an event are judged to be something else. Nothing here raises: a file that cannot
be read or decompressed is left to the reader, which reports it with its line number.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

SNIFF_BYTES = 64 * 1024
# The two prefixes every reader of logs treats specially, defined here only: gzip data is
# decompressed whatever the file's name, and a UTF-8 byte order mark at the start is dropped.
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
SNIFF_LINES = 20  # non-blank lines looked at

LOG = "jsonl"
EMPTY = "empty"
BLANK = "blank"

# Magic numbers of binary formats people keep next to their logs.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PAR1", "a Parquet file (a table of a dataset, not a log)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PK\x03\x04", "a zip archive (unpack it first)"),
    (b"BZh", "a bzip2 file (decompress it first, or gzip it)"),
    (b"\xfd7zXZ\x00", "an xz file (decompress it first, or gzip it)"),
    (b"\x28\xb5\x2f\xfd", "a zstd file (decompress it first, or gzip it)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
)
_SCORESHEET_HEADER = ["game_id", "turn", "player", "points", "total"]  # log-format.md, Scoresheets
# A file whose lines end in a carriage return alone (classic Mac OS, some old exporters): the
# readers split on newlines only, so all of it would be one line, one huge bad_json.
OLD_MAC = "text with old Mac line endings (each line ends in a carriage return, \\r, and none in a newline)"
OLD_MAC_FIX = "convert them to newlines, for example with `tr '\\r' '\\n' < FILE > FILE.jsonl`"


@dataclass(frozen=True)
class Sniff:
    """`kind`: "jsonl", "empty" or "blank" (read it), or what else it is (skip it);
    `looks_like` and `hint` make the sentence the user reads."""

    kind: str
    looks_like: str = ""
    hint: str = ""

    @property
    def is_log(self) -> bool:
        return self.kind in (LOG, EMPTY, BLANK)

    def describe(self) -> str:
        """'no events: the file is empty', or 'this looks like ..., not JSON Lines: hint'."""
        if self.kind == EMPTY:
            return "no events: the file is empty"
        if self.kind == BLANK:
            return "no events: the file holds only blank lines"
        if self.kind == LOG:
            return "JSON Lines"
        text = f"this looks like {self.looks_like}, not JSON Lines (one JSON event per line)"
        return f"{text}: {self.hint}" if self.hint else text


def starts_with(path: str | Path, prefix: bytes) -> bool:
    """Whether the file at `path` begins with `prefix` (GZIP_MAGIC, UTF8_BOM); raises OSError."""
    from pipeline.storage import open_binary

    with open_binary(path) as f:
        return f.read(len(prefix)) == prefix


def sniff_file(path: str | Path) -> Sniff:
    """What the file at `path` looks like (gzip decompressed); unreadable: treated as a log."""
    from pipeline.storage import open_binary

    try:
        with open_binary(path) as f:
            head = f.read(SNIFF_BYTES)
            complete = len(head) < SNIFF_BYTES or not f.read(1)
    except OSError:
        return Sniff(LOG)
    if head.startswith(GZIP_MAGIC):
        return _sniff_gzip(path)
    return sniff_bytes(head, complete)


def _sniff_gzip(path: str | Path) -> Sniff:
    import gzip

    from pipeline.storage import open_binary

    try:
        with open_binary(path) as raw, gzip.open(raw, "rb") as f:
            head = f.read(SNIFF_BYTES)
            complete = len(head) < SNIFF_BYTES or not f.read(1)
    except (OSError, EOFError, zlib.error):
        return Sniff(LOG)  # a broken gzip is the reader's to report, with its line
    return sniff_bytes(head, complete)


def sniff_bytes(head: bytes, complete: bool) -> Sniff:
    """What a file starting with `head` looks like; `complete`: `head` is the whole file."""
    if not head:
        return Sniff(EMPTY)
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return Sniff("binary", what)
    if head.startswith(GZIP_MAGIC):
        return Sniff("binary", "a gzip file inside a gzip file (decompress it once)")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # Windows editors save "Unicode" text so
        return Sniff("binary", "UTF-16 text", "save it as UTF-8")
    if b"\x00" in head[:8192]:
        return Sniff("binary", "a binary file")
    if b"\n" not in head and head.count(b"\r") >= 2:
        return Sniff("old-mac", OLD_MAC, OLD_MAC_FIX)
    text = head.decode("utf-8", errors="replace")
    if not complete:  # the last line may be cut in the middle of a character
        text = text[: text.rfind("\n") + 1] or text
    if text.count("\ufffd") > max(8, len(text) // 50):
        return Sniff("binary", "a binary file (it is not UTF-8 text)")
    lines = [line.strip().lstrip("\ufeff").strip() for line in text.splitlines()]
    lines = [line for line in lines if line][:SNIFF_LINES]
    if not lines:
        return Sniff(BLANK) if complete else Sniff(LOG)
    if lines[0] in ("[", "{"):  # a pretty-printed JSON document, whatever its lines hold
        return Sniff(
            "json",
            "one JSON document spread over several lines",
            "write one event object per line (for example with `jq -c '.[]'`)",
        )
    if any(_starts_like_an_object(line) for line in lines):
        return Sniff(LOG)
    return _other_text(lines)


def _starts_like_an_object(line: str) -> bool:
    """`{"game_id": ...` or any `{...` with more than the brace: a log line, maybe damaged.
    A lone `{` opens a pretty-printed JSON document instead."""
    return line.startswith("{") and len(line) > 1


def _other_text(lines: list[str]) -> Sniff:
    first = lines[0]
    lower = first.lower()
    if (
        lower.startswith("<!doctype html")
        or lower.startswith("<html")
        or (first.startswith("<") and any("<html" in line.lower() or "<body" in line.lower() for line in lines))
    ):
        return Sniff("html", "an HTML page (a report written by `farkle-logs report` is one)")
    if first.startswith("<"):
        return Sniff("xml", "an XML or HTML document")
    if re.fullmatch(r"\[\[?[A-Za-z0-9_.\- \"']+\]\]?", first):
        return Sniff("text", "a TOML or INI configuration file")
    if first.startswith("["):
        if len(lines) > 1 and all(line.startswith("[") and line.endswith("]") for line in lines):
            return Sniff("json", "lines of JSON arrays", "each line must be one event object, {...}")
        return Sniff(
            "json",
            "a JSON array" if len(lines) == 1 else "one JSON document spread over several lines",
            "write one event object per line (for example with `jq -c '.[]'`)",
        )
    if [cell.strip().strip('"').lower() for cell in first.split(",")] == _SCORESHEET_HEADER:
        return Sniff("scoresheet", "a scoresheet CSV", "pass it with --scoresheet")
    if "," in first and sum("," in line for line in lines) >= (len(lines) + 1) // 2:
        return Sniff("csv", "a CSV file")
    if "\t" in first and all("\t" in line for line in lines[:5]):
        return Sniff("csv", "a tab-separated table")
    return Sniff("text", "plain text (a README or notes)")

"""Fast JSONL output: plain, gzip (by the `.gz` suffix) or stdout, byte-for-byte reproducible.

Games are encoded whole with msgspec (`encode_lines`) and written in ~1 MiB chunks, so memory
does not grow with the number of games. Gzip output has no name and mtime 0 in its header,
so the same seed gives the same bytes.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import BinaryIO, cast

import msgspec

from pipeline.files import open_output

_encoder = msgspec.json.Encoder()
encode_lines = _encoder.encode_lines
encode = _encoder.encode

GZIP_LEVEL = 6
FLUSH_BYTES = 1 << 20


class LineWriter:
    """Counts lines so callers know the line number each event lands on (1-based)."""

    def __init__(self, target: str | Path | BinaryIO, gzip_level: int = GZIP_LEVEL):
        self._close: list[BinaryIO] = []
        if isinstance(target, (str, Path)) and str(target) == "-":
            raw: BinaryIO = sys.stdout.buffer
            name = "-"
        elif isinstance(target, (str, Path)):
            raw = cast(BinaryIO, open_output(target))  # a regular file or a new name: never a link or a device
            self._close.append(raw)
            name = str(target)
        else:
            raw = target
            name = getattr(target, "name", "")
        if isinstance(name, str) and name.endswith(".gz"):
            raw = cast(BinaryIO, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=gzip_level))
            self._close.insert(0, raw)
        self._out = raw
        self._buf: list[bytes] = []
        self._size = 0
        self.lines = 0  # lines written so far

    def write_events(self, events: list[dict]) -> None:
        """Valid events (dicts), in order."""
        self._add(encode_lines(events), len(events))

    def write_items(self, items: list) -> None:
        """Events (dicts) and pre-encoded lines (bytes, no newline), in order."""
        self._add(b"".join((e if isinstance(e, bytes) else encode(e)) + b"\n" for e in items), len(items))

    def _add(self, chunk: bytes, lines: int) -> None:
        self.lines += lines
        self._buf.append(chunk)
        self._size += len(chunk)
        if self._size >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._buf:
            self._out.write(b"".join(self._buf))
            self._buf.clear()
            self._size = 0

    def close(self) -> None:
        self.flush()
        for f in self._close:
            f.close()
        if not self._close:
            self._out.flush()

    def __enter__(self) -> "LineWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""Bytes → numbered lines, for plain and gzip input alike, without ever crashing on a file.

Lines are split on b"\\n" only, by hand over large chunks rather than with `readline`, for
three reasons: a line of any length works (no buffer limit, no quadratic joining); a gzip
stream that breaks still gives up every complete line before the break, which `readline`
on a GzipFile loses; and the split happens in C, a chunk at a time.

gzip is recognised by its magic bytes, whatever the name, and decompressed with zlib
directly: concatenated members (`cat a.gz b.gz`) are read through, trailing zero padding
is ignored (as gzip(1) does), and the output per step is bounded, so a small file that
inflates to gigabytes is read in pieces. A UTF-8 byte order mark at the start of the data
is dropped (RFC 8259 allows a parser to ignore it; Windows tools write one).

A line longer than `max_line_bytes` (default `pipeline.limits.MAX_LINE_BYTES`, 1 MiB) is
never joined: from the moment it passes the limit only its first LONG_LINE_HEAD bytes are
kept and the rest is counted, so one 2 GiB line costs a few MiB of memory, and it comes out
as a `LongLine` that `parse_line` turns into a reject naming its size. This is a contract
for every reader of logs (tests hold `iter_lines`, `read_events` and the CLI to it): another
splitter keeps it by honouring the same `max_line_bytes` and making its rejects with
`parse.long_line_reject`.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import BinaryIO, Iterator

from pipeline.reader.inputs import InputError, InputSource
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import FileProblem
from pipeline.reader.sniff import GZIP_MAGIC, UTF8_BOM

CHUNK = 1 << 20  # bytes read at a time
INFLATE_STEP = 4 << 20  # at most this much decompressed output per zlib call
SALVAGE_STEP = 64  # compressed bytes per step when recovering the text before damage
#: Bytes kept of a line over the limit: 4 x 64 KiB (+4), so that its text, cut at 64 KiB
#: characters where it is stored (rejects.raw), is always marked as cut.
LONG_LINE_HEAD = 4 * (64 << 10) + 4


class LongLine(bytes):
    """A line over the length limit, as `iter_lines` yields it in place of its bytes.

    It is an empty bytes object on purpose: nothing can decode it as data by mistake (a
    prefix of a long line may well be valid JSON), while code that only looks at lines as
    bytes still works. `size` is the whole line's length in bytes, `head` its first
    LONG_LINE_HEAD bytes, `limit` the limit it broke.
    """

    size: int
    head: bytes
    limit: int

    def __new__(cls, size: int, head: bytes, limit: int) -> "LongLine":
        line = super().__new__(cls, b"")
        line.size, line.head, line.limit = size, head, limit
        return line

    def __repr__(self) -> str:
        return f"LongLine(size={self.size}, limit={self.limit})"

    def __reduce__(self):  # pickles as itself, so a line can cross a process boundary like bytes
        return (LongLine, (self.size, self.head, self.limit))


class Broken(Exception):
    """The input stops making sense here; the text says why."""


def iter_lines(source: InputSource, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes without the newline) for each non-blank line.

    Numbers count from 1 in the decompressed data, blank lines included. Nothing raises
    for bad data: if the file cannot be opened or its gzip stream breaks, the lines before
    the break are yielded and `source.problem` says where and why. The counters on
    `source` are final when the iteration ends. A line longer than `max_line_bytes` comes
    out as a `LongLine` (whatever its content: even only spaces), read past in bounded memory.
    """
    if max_line_bytes < 1:
        raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes}")
    try:
        stream = source.open()
    except (OSError, InputError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else (exc.strerror or str(exc))
        source.problem = FileProblem(source.name, None, f"cannot read: {reason}")
        return
    hasher = hashlib.sha256()
    lineno = blank = 0
    pending: list[bytes] = []  # pieces of a line that has not ended yet
    pending_len = 0
    long: _LongSoFar | None = None  # the line being read past, once it broke the limit
    finished = False
    try:
        for chunk in data_chunks(stream, source, hasher):
            source.data_bytes += len(chunk)
            parts = chunk.split(b"\n")
            tail = parts.pop()
            if long is not None:  # reading past a long line: its end, if in this chunk
                if not parts:
                    long.add(tail)
                    continue
                long.add(parts[0])
                lineno += 1
                yield lineno, long.line(max_line_bytes)
                long = None
                del parts[0]  # that line's end, counted just above
            elif parts and pending:
                if pending_len + len(parts[0]) > max_line_bytes:
                    lineno += 1
                    yield lineno, _LongSoFar(pending, parts[0]).line(max_line_bytes)
                    del parts[0]
                else:
                    pending.append(parts[0])
                    parts[0] = b"".join(pending)
                pending = []
                pending_len = 0
            if len(chunk) > max_line_bytes and max(map(len, parts), default=0) > max_line_bytes:
                for raw in parts:  # the rare chunk holding a whole line over the limit
                    lineno += 1
                    if len(raw) > max_line_bytes:
                        yield lineno, LongLine(len(raw), raw[:LONG_LINE_HEAD], max_line_bytes)
                    elif not raw or raw.isspace():
                        blank += 1
                    else:
                        yield lineno, raw
            else:
                for raw in parts:  # the hot loop: no line here can be over the limit
                    lineno += 1
                    if not raw or raw.isspace():  # parse.is_blank, inlined: once per line
                        blank += 1
                    else:
                        yield lineno, raw
            if tail:
                if long is None and pending_len + len(tail) <= max_line_bytes:
                    pending.append(tail)
                    pending_len += len(tail)
                elif long is None:
                    long = _LongSoFar(pending, tail)
                    pending = []
                    pending_len = 0
                else:
                    long.add(tail)
        if long is not None:  # a last line without a newline is still a line
            lineno += 1
            yield lineno, long.line(max_line_bytes)
            long = None
        elif pending:
            lineno += 1
            raw = b"".join(pending)
            if raw.isspace():
                blank += 1
            else:
                yield lineno, raw
        finished = True
    except Broken as exc:
        lost = long.size if long is not None else pending_len
        where = f"line {lineno + 1} was cut after {lost} bytes" if lost else f"after line {lineno}"
        source.problem = FileProblem(source.name, lineno + 1, f"{exc}: {where}; the rest of the file was not read")
        finished = True
    except OSError as exc:
        source.problem = FileProblem(source.name, lineno + 1, f"read error: {exc.strerror or exc}")
    finally:
        source.lines = lineno
        source.blank_lines = blank
        if finished:
            drain(stream, source, hasher)
            finish_hashes(source, hasher)
        if not source.is_stdin:
            stream.close()


def finish_hashes(source: InputSource, hasher) -> None:
    """Record the input's hashes once it has been read to its end: `sha256` of the bytes as
    stored, and, when nothing stopped the reading, `content_sha256` of the decompressed bytes
    (the stored ones for a plain file, so a plain log and the same log gzipped hash alike)."""
    source.sha256 = hasher.hexdigest()
    if source.problem is not None:
        return
    if source.gzip and source._content is not None:
        source.content_sha256, source.content_bytes = source._content[0].hexdigest(), source._content[1]
    else:
        source.content_sha256, source.content_bytes = source.sha256, source.raw_bytes


class _LongSoFar:
    """A line known to be over the limit, while the reader goes on to its end: its size so
    far and its first LONG_LINE_HEAD bytes, nothing more."""

    def __init__(self, pieces: list[bytes], piece: bytes):
        self.size = 0
        self.head = b""
        for p in pieces:
            self.add(p)
        self.add(piece)

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        if len(self.head) < LONG_LINE_HEAD:
            self.head += piece[: LONG_LINE_HEAD - len(self.head)]

    def line(self, limit: int) -> LongLine:
        return LongLine(self.size, self.head, limit)


def data_chunks(stream: BinaryIO, source: InputSource, hasher) -> Iterator[bytes]:
    """The decompressed data, BOM removed; counts and hashes the raw bytes on the way."""
    head, raw = _peek(_raw_chunks(stream, source, hasher), len(GZIP_MAGIC))
    source.gzip = head.startswith(GZIP_MAGIC)
    data = _chain(head, raw)
    if source.gzip:
        data = _hashed(_gunzip(data), source)
    head, data = _peek(data, len(UTF8_BOM))
    if head.startswith(UTF8_BOM):
        head = head[len(UTF8_BOM) :]
    if head:
        yield head
    yield from data


def _hashed(chunks: Iterator[bytes], source: InputSource) -> Iterator[bytes]:
    """The decompressed chunks, hashed and counted on the way (`finish_hashes` reads them)."""
    hasher = hashlib.sha256()
    source._content = [hasher, 0]
    for chunk in chunks:
        hasher.update(chunk)
        source._content[1] += len(chunk)
        yield chunk


def _peek(chunks: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """At least `size` bytes from the front (fewer only at the end), and the rest."""
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= size:
            break
    return head, chunks


def _chain(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from rest


def _raw_chunks(stream: BinaryIO, source: InputSource, hasher) -> Iterator[bytes]:
    read = getattr(stream, "read1", stream.read)
    while chunk := read(CHUNK):
        hasher.update(chunk)
        source.raw_bytes += len(chunk)
        yield chunk


def _gunzip(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Inflate one or more gzip members; raise Broken where the stream stops making sense."""
    inflater = None  # None between members
    for data in chunks:
        while True:
            if inflater is None:
                data = data.lstrip(b"\0")  # zero padding after a member, as gzip(1) allows
                if not data:
                    break
                inflater = zlib.decompressobj(wbits=31)
            before = inflater.copy()
            try:
                out = inflater.decompress(data, INFLATE_STEP)
            except zlib.error as exc:
                yield from _salvage(before, data)
                raise Broken(f"gzip data is corrupt ({exc})") from None
            if out:
                yield out
            if inflater.eof:
                data = inflater.unused_data
                inflater = None
            else:
                data = inflater.unconsumed_tail
                if not data and len(out) < INFLATE_STEP:
                    break  # needs more input (a full step may still hold output back)
    if inflater is not None:
        raise Broken("gzip stream is truncated (the file ends inside the compressed data)")


def _salvage(inflater, data: bytes) -> Iterator[bytes]:
    """Whatever inflates before the damage: zlib drops a failing call's output whole, so
    the input of that call is fed again from the saved state, a few bytes at a time."""
    for start in range(0, len(data), SALVAGE_STEP):
        try:
            out = inflater.decompress(data[start : start + SALVAGE_STEP])
        except zlib.error:
            return
        if out:
            yield out
        if inflater.eof:
            return


def drain(stream: BinaryIO, source: InputSource, hasher) -> None:
    """Hash what was left unread after a break, so sha256 always covers the whole file."""
    try:
        for _ in _raw_chunks(stream, source, hasher):
            pass
    except OSError:  # pragma: no cover - the read error is already reported
        pass


def file_digests(source: InputSource) -> list[tuple[int, str]]:
    """(size, sha256) of a regular file's stored bytes and, when it reads to its end, of its
    decompressed bytes (the same pair for a plain file), read now from its start in one pass;
    neither `source` nor the file changes. Empty when the file cannot be read."""
    if source.path is None:
        return []
    probe = InputSource(source.name, path=source.path, regular=True)
    hasher = hashlib.sha256()
    try:
        with open(source.path, "rb") as stream:
            try:
                for _ in data_chunks(stream, probe, hasher):
                    pass
            except Broken as exc:
                probe.problem = FileProblem(source.name, None, str(exc))
                drain(stream, probe, hasher)
    except OSError:
        return []
    finish_hashes(probe, hasher)
    found = [(probe.raw_bytes, str(probe.sha256))]
    if probe.content_sha256 is not None and probe.content_bytes is not None and probe.gzip:
        found.append((probe.content_bytes, probe.content_sha256))
    return found


def gzip_size_hint(path) -> int | None:
    """The decompressed size modulo 2**32 that a gzip file's last member records (ISIZE), or
    None for a file that is not gzip. Only a hint: a file of several members records the last
    one's size, and padding or damage can make it anything."""
    try:
        with open(path, "rb") as fh:
            if fh.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
                return None
            size = fh.seek(0, 2)
            if size < 18:
                return None
            fh.seek(size - 4)
            return int.from_bytes(fh.read(4), "little")
    except OSError:
        return None

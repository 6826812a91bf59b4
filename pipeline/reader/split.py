"""Blocks of whole lines and byte ranges of a file: the splitter for readers in bulk.

`pipeline.reader.lines.iter_lines` gives one line at a time; the bulk readers (ingest's
parse tasks, the fast audit's pass 1, Spark's tasks) want many lines at once, cut here by
the same rules: lines numbered from 1 in the decompressed data, blank lines included, split
on b"\\n" only, a last line without a newline still a line, a UTF-8 BOM at the file's start
dropped, gzip decompressed by the same helpers (a broken stream gives up its complete lines
and a FileProblem).

- `split_source`: one input (any kind) → `Block`s of whole lines, each with the number of
  its first line; it hashes the stored bytes for the manifest on the way. A line longer than
  `max_line` bytes is never held whole: its first `RAW_LIMIT` bytes are kept for the reject,
  the rest skipped up to the next newline in bounded memory, and it is handed on as an
  already made BadLine.
- `plain_blocks`: the bytes from an offset of a plain file, in reads whose size the caller
  chooses (the fast audit's two processes rebalance their ranges as they go).
- `line_start`, `range_data`, `lines_starting_in`: byte ranges of a plain file, where a line
  belongs to the range its first byte is in.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, field, replace
from typing import Iterator

from pipeline.reader.inputs import InputError, InputSource
from pipeline.model import BadLine, FileProblem
from pipeline.limits import MAX_LINE_BYTES  # the default line-length cap (bytes, newline excluded)
from pipeline.reader.lines import Broken, data_chunks, drain, finish_hashes
from pipeline.reader.sniff import GZIP_MAGIC, UTF8_BOM, starts_with
from pipeline.storage import open_binary

BLOCK_BYTES = 8 << 20  # a parse task's share of input; bigger blocks hold more memory per worker
# ... and at most about this many lines (a block ends once it holds this many, so it has at
# most twice as many): the parse stage holds a few hundred bytes per line, and 8 MiB of
# `{}` or of blank lines is millions of lines. A log's lines are longer: its blocks end at
# BLOCK_BYTES first.
BLOCK_LINES = 1 << 16
RAW_LIMIT = 64 * 1024  # rejects.raw keeps at most this many characters of a line
HEAD_BYTES = 4 * RAW_LIMIT + 4  # kept of an over-long line: enough for RAW_LIMIT + 1 characters


@dataclass
class Block:
    """Whole lines of one input: `data` ends with b"\\n" (a missing final newline is added).

    A block of a plain file also knows where its data lies (`path`, `offset`): sent to a
    worker process, it travels as that place (`detached`) and the worker reads the bytes
    back from the file (`attached`), from the page cache, instead of the main process
    pickling 8 MiB through a pipe per block (CPU on both sides of the pipe). The CRC-32 of
    the bytes travels with it, so the worker parses exactly the bytes this process hashed
    for the manifest: a file rewritten in place meanwhile, even to the same size, stops the
    run instead of mixing old and new lines under a hash of neither."""

    source: int  # index of the input in the run's reading order
    name: str
    first_line: int  # number of the first line of `data`
    data: bytes
    long_lines: list[BadLine] = field(default_factory=list)  # over-long lines just before `data`
    path: str | None = None  # the plain file `data` was read from (None: gzip, stdin)
    offset: int = 0  # where `data` starts in that file
    size: int = -1  # detached: len(data); -1 while the data is here
    crc: int = 0  # detached: CRC-32 of data, to check what the worker reads back

    @property
    def lines(self) -> int:
        return self.data.count(b"\n") + len(self.long_lines)

    def detached(self) -> "Block":
        """This block without its bytes, if they can be read back from a plain file (a block
        of only over-long lines has no bytes to leave behind)."""
        if self.path is None or self.size >= 0 or not self.data:
            return self
        return replace(self, data=b"", size=len(self.data), crc=zlib.crc32(self.data))

    def attached(self) -> "Block":
        """This block with its bytes, read back from its file if it was detached. Raises
        InputError if the file no longer holds the same lines there (it changed while being
        ingested: the run stops and nothing is committed)."""
        if self.size < 0:
            return self
        with open(self.path, "rb") as fh:  # type: ignore[arg-type]
            fh.seek(self.offset)
            data = fh.read(self.size)
        if len(data) == self.size - 1 and not data.endswith(b"\n"):
            data += b"\n"  # the file's last line had no newline: split_source added one
        if len(data) != self.size or zlib.crc32(data) != self.crc:
            raise InputError(
                self.name, "the file changed while it was being ingested; nothing was committed, ingest it again"
            )
        return replace(self, data=data, size=-1, crc=0)


def too_long(file: str, line: int, size: int, head: bytes, max_line: int) -> BadLine:
    """The reject of a line over the cap; `head`: its first bytes (HEAD_BYTES are kept).
    Made by the reader's one constructor, so `audit` and `ingest` say the same words."""
    from pipeline.reader.parse import long_line_reject  # the decoders: only for a line this long

    return long_line_reject(file, line, size, head, max_line)


def _line_bounded(chunk: bytes, block_lines: int) -> Iterator[tuple[bytes, int]]:
    """`chunk` and its count of newlines, or, when it holds more than `block_lines` lines,
    slices of `block_lines` bytes (each holds at most that many newlines) and theirs: a block
    can then end within it. The caller keeps the counts, so each byte is counted once: the
    splitter runs in the main process, ahead of every worker (docs/performance.md)."""
    newlines = chunk.count(b"\n")
    if newlines <= block_lines:
        yield chunk, newlines
        return
    for start in range(0, len(chunk), block_lines):
        piece = chunk[start : start + block_lines]
        yield piece, piece.count(b"\n")


def split_source(
    source: InputSource,
    index: int,
    block_bytes: int = BLOCK_BYTES,
    max_line: int = MAX_LINE_BYTES,
    block_lines: int = BLOCK_LINES,
) -> Iterator[Block]:
    """Blocks of `source` in order, each ending once it holds `block_bytes` bytes or
    `block_lines` lines. Nothing raises for bad data: when the file cannot be read
    or its stream breaks, the blocks before the break come out and `source.problem` says
    where. `source.lines`, `raw_bytes` and `sha256` are final when the iteration ends
    (blank lines are counted by the parse stage)."""
    try:
        stream = source.open()
    except (OSError, InputError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else (exc.strerror or str(exc))
        source.problem = FileProblem(source.name, None, f"cannot read: {reason}")
        return
    block_bytes = max(block_bytes, max_line + 1)
    hasher = hashlib.sha256()
    name = source.name
    line = 1  # number of the next line to begin
    pending: list[bytes] = []  # data not yet cut into a block
    pending_size = 0
    pending_lines = 0  # newlines in pending
    pending_at = 0  # offset of pending's first byte in the data
    path = bom = None  # a plain file's path, and the bytes before its data (a BOM)
    long_lines: list[BadLine] = []  # over-long lines between the last block and `pending`
    skipping: tuple[int, bytes] | None = None  # (bytes so far, head) of an over-long line being skipped
    finished = False
    try:
        for piece in data_chunks(stream, source, hasher):
            if bom is None:  # the first chunk: gzip is known now
                bom = 0
                if source.path is not None and not source.gzip and os.path.isfile(source.path):
                    path = str(source.path)  # a regular plain file: blocks can be read back
                    bom = len(UTF8_BOM) if starts_with(path, UTF8_BOM) else 0
            for chunk, newlines in _line_bounded(piece, block_lines):
                chunk_at = source.data_bytes
                source.data_bytes += len(chunk)
                if skipping is not None:
                    cut = chunk.find(b"\n")
                    size, head = skipping
                    if len(head) < HEAD_BYTES:  # the reject keeps the line's head whatever the chunking
                        head += chunk[: min(len(chunk) if cut < 0 else cut, HEAD_BYTES - len(head))]
                    if cut < 0:
                        skipping = (size + len(chunk), head)
                        continue
                    long_lines.append(too_long(name, line, size + cut, head, max_line))
                    line += 1
                    skipping = None
                    chunk = chunk[cut + 1 :]
                    newlines -= 1  # the first one, at the cut
                    chunk_at += cut + 1
                    if not chunk:
                        continue
                if not pending:
                    pending_at = chunk_at
                pending.append(chunk)
                pending_size += len(chunk)
                pending_lines += newlines
                if pending_size < block_bytes and pending_lines < block_lines:
                    continue
                data = b"".join(pending)
                cut = data.rfind(b"\n")
                if cut >= 0:
                    yield Block(index, name, line, data[: cut + 1], long_lines, path, bom + pending_at)
                    line += pending_lines  # every newline of `data` is at or before the cut
                    long_lines = []
                    data = data[cut + 1 :]
                    pending_at += cut + 1
                if len(data) > max_line:  # no newline within the cap: skip this line
                    skipping, data = (len(data), data[:HEAD_BYTES]), b""
                pending, pending_size = ([data], len(data)) if data else ([], 0)
                pending_lines = 0  # what is left holds no newline
        if skipping is not None:
            long_lines.append(too_long(name, line, skipping[0], skipping[1], max_line))
            line += 1
        data = b"".join(pending)
        if data and not data.endswith(b"\n"):
            data += b"\n"  # a last line without a newline is still a line
        if data or long_lines:
            yield Block(index, name, line, data, long_lines, path, (bom or 0) + pending_at)
            line += data.count(b"\n")
        finished = True
    except Broken as exc:
        data = b"".join(pending)
        cut = data.rfind(b"\n")
        if cut >= 0 or long_lines:
            yield Block(index, name, line, data[: cut + 1], long_lines)
            line += data.count(b"\n", 0, cut + 1)
        lost = len(data) - (cut + 1) + (skipping[0] if skipping else 0)
        complete = line - 1
        where = f"line {complete + 1} was cut after {lost} bytes" if lost else f"after line {complete}"
        source.problem = FileProblem(name, complete + 1, f"{exc}: {where}; the rest of the file was not read")
        finished = True
    except OSError as exc:
        source.problem = FileProblem(name, line, f"read error: {exc.strerror or exc}")
    finally:
        source.lines = line - 1
        if finished:
            drain(stream, source, hasher)
            finish_hashes(source, hasher)
        if not source.is_stdin:
            stream.close()


class NotInBlocks(Exception):
    """This plain file cannot be read by `plain_blocks` (a line over the limit, a read
    error): read it by `iter_lines`, which makes the line a reject in bounded memory."""


def plain_blocks(
    path: str | os.PathLike, start: int, reads, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[bytes, int, int, int, int]]:
    """(block of whole lines without the final newline, number of its first line, number of
    its lines, offset of its first byte, offset of its end) for the bytes of a plain file
    from `start`, read up to `reads(pos)` at a time until that is no further than pos; lines
    are counted from 1 at `start`. Blank lines stay in. A read at the file's start is at
    least as long as a BOM (the one it drops).

    Raises NotInBlocks for a line longer than max_line_bytes or a read error. Every line but
    a block's first (carried over from the previous read) lies within one read: with
    max_line_bytes at least the largest read (the caller's condition for reading blocks)
    only that one needs measuring."""
    try:
        with open(path, "rb", buffering=0) as fh:
            fh.seek(start)
            pos = start  # where the next read starts
            begin = start  # where the carried line (or the next block) starts
            line = 1
            carry = b""
            first = start == 0
            while (stop := reads(pos)) > pos:
                data = fh.read(stop - pos)
                if not data:
                    break
                pos += len(data)
                if first:
                    first = False
                    if data.startswith(UTF8_BOM):
                        data = data[len(UTF8_BOM) :]
                        begin += len(UTF8_BOM)
                if carry:
                    # the one line that can be longer than a read: the carried one, completed
                    at = data.find(b"\n")
                    if len(carry) + (at if at >= 0 else len(data)) > max_line_bytes:
                        raise NotInBlocks
                    data = carry + data
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                block, carry = data[:cut], data[cut + 1 :]
                n = block.count(b"\n") + 1
                yield block, line, n, begin, begin + cut
                begin += cut + 1
                line += n
            if carry:
                if len(carry) > max_line_bytes:
                    raise NotInBlocks
                yield carry, line, carry.count(b"\n") + 1, begin, begin + len(carry)
    except OSError:
        raise NotInBlocks from None


# A range may not start at a byte the reader treats specially at a file's start.
_NOT_A_RANGE_START = (GZIP_MAGIC, UTF8_BOM)


def line_start(path: str | os.PathLike, offset: int, limit: int) -> int | None:
    """Start of the first line that begins after `offset` and before `limit`, or None where
    there is none or a range cannot start (its first bytes would be read as gzip or BOM)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        while offset < limit and (block := fh.read(1 << 16)):
            at = block.find(b"\n")
            if at >= 0:
                start = offset + at + 1
                if start >= limit:
                    return None
                fh.seek(start)
                first = fh.read(3)
                if not first or any(first.startswith(m) for m in _NOT_A_RANGE_START):
                    return None
                return start
            offset += len(block)
    return None


@dataclass
class RangeRead:
    """What `read_range` read: the whole lines starting in the range, and the span of the
    file's bytes the range covers [first, last) with their CRC-32, so the caller can check
    that these bytes are the ones it hashed (`hash_and_count_ranges` takes the same CRCs)."""

    data: bytes
    first: int
    last: int
    crc: int


def range_data(path: str | os.PathLike, start: int, end: int) -> bytes:
    """The whole lines that start in [start, end) of a plain file, each ending in b"\\n"
    (the last one completed past `end`; a BOM at the file's start dropped)."""
    return read_range(path, start, end).data


def read_range(path: str | os.PathLike, start: int, end: int) -> RangeRead:
    """`range_data`, with the span [first, end) of bytes it covers and their CRC-32: the
    bytes a driver's sequential pass can check (the tail read past `end` to complete the
    last line is the next range's own span)."""
    with open_binary(path) as fh:
        first = max(start - 1, 0)
        fh.seek(first)
        raw = fh.read(end - first)
        last, crc = first + len(raw), zlib.crc32(raw)
        if start > 0:
            cut = raw.find(b"\n")  # the line at `start` begins after the first newline at >= start - 1
            data = raw[cut + 1 :] if cut >= 0 else b""
            if not data:  # no line starts in this range
                return RangeRead(b"", first, last, crc)
        else:
            data = raw
            fh.seek(0)
            if fh.read(len(UTF8_BOM) + 1) == UTF8_BOM:
                return RangeRead(b"", first, last, crc)  # a file of only a BOM holds no line (iter_lines counts none)
            fh.seek(last)
        if not data.endswith(b"\n"):  # the range's last line runs on past `end`
            rest = []
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                cut = chunk.find(b"\n")
                piece = chunk[: cut + 1] if cut >= 0 else chunk
                rest.append(piece)
                if cut >= 0:
                    break
            data += b"".join(rest)
            if data and not data.endswith(b"\n"):
                data += b"\n"  # a last line without a newline is still a line
    if start == 0 and data.startswith(UTF8_BOM):  # after the first line is whole: a range may cut the BOM
        data = data[len(UTF8_BOM) :]
    return RangeRead(data, first, last, crc)


def lines_starting_in(path: str | os.PathLike, start: int, end: int) -> int:
    """Lines starting in [start, end): a line starts at 0 and after every newline but the
    file's last byte, so these are the newlines at [start - 1, end - 1), plus 1 at 0."""
    a, b = max(start - 1, 0), end - 1
    n = 1 if start == 0 else 0
    with open_binary(path) as fh:
        if start == 0 and fh.read(len(UTF8_BOM) + 1) == UTF8_BOM:
            return 0  # a file of only a BOM holds no line
        fh.seek(a)
        left = b - a
        while left > 0:
            chunk = fh.read(min(left, 8 << 20))
            if not chunk:
                break
            n += chunk.count(b"\n")
            left -= len(chunk)
    return n


def hash_and_count_ranges(path: str | os.PathLike, size: int, range_bytes: int) -> tuple[str, list[int], list[int]]:
    """The sha256 of a plain file's first `size` bytes and, for each range of `range_bytes`
    from its start, the lines starting in it (`lines_starting_in` of every range) and the
    CRC-32 of the bytes `read_range` reads for it ([start - 1, end), from 0 for the first), in
    one sequential read: the driver hashes a split file anyway, and counting its newlines on
    the way costs no second pass (nor a Spark job of its own); the CRCs let the driver check
    that its tasks read the bytes it hashed."""
    hasher = hashlib.sha256()
    counts: list[int] = []
    crcs: list[int] = []
    last = b""  # the byte before the range: a newline there starts a line at the range's start
    with open_binary(path) as fh:
        for start in range(0, size, range_bytes):
            data = fh.read(min(range_bytes, size - start))
            hasher.update(data)
            counts.append(data.count(b"\n", 0, max(len(data) - 1, 0)) + (1 if start == 0 else int(last == b"\n")))
            crcs.append(zlib.crc32(data, zlib.crc32(last)))
            last = data[-1:]
    if size == len(UTF8_BOM) and counts and last and lines_starting_in(path, 0, size) == 0:
        counts[0] = 0  # a file of only a BOM holds no line
    return hasher.hexdigest(), counts, crcs

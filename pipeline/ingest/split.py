"""Stage 1, split: one input → blocks of whole lines, each with the number of its first line.

The blocks are what the parse stage works on, one per task, on whichever core is free.
Splitting is the only stage that reads the input sequentially: it decompresses (a gzip
stream once, here), hashes the stored bytes for the manifest and counts newlines, all C
calls over megabytes at a time, so one core keeps up with the parsers.

Line numbers and the reading contract are those of `pipeline.reader.lines.iter_lines`
(numbered from 1 in the decompressed data, blank lines included; a broken gzip stream gives
up its complete lines and a FileProblem; a UTF-8 BOM is dropped): the same private helpers
do the decompressing. A line longer than `max_line` bytes is never held whole: the
splitter keeps its first `RAW_LIMIT` bytes for the reject, skips the rest up to the next
newline in bounded memory, and hands it on as an already made BadLine.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from typing import Iterator

from pipeline.reader.inputs import InputError, InputSource
from pipeline.model import BadLine, FileProblem
from pipeline.limits import MAX_LINE_BYTES  # the default line-length cap (bytes, newline excluded)
from pipeline.reader import lines as _lines
from pipeline.reader.parse import long_line_reject

BLOCK_BYTES = 8 << 20  # a parse task's share of input; bigger blocks hold more memory per worker
RAW_LIMIT = 64 * 1024  # rejects.raw keeps at most this many characters of a line
HEAD_BYTES = 4 * RAW_LIMIT + 4  # kept of an over-long line: enough for RAW_LIMIT + 1 characters


@dataclass
class Block:
    """Whole lines of one input: `data` ends with b"\\n" (a missing final newline is added).

    A block of a plain file also knows where its data lies (`path`, `offset`): sent to a
    worker process, it travels as that place (`detached`) and the worker reads the bytes
    back from the file (`attached`), from the page cache, instead of the main process
    pickling 8 MiB through a pipe per block (about 1 s of CPU on both sides for 331 MB)."""

    source: int  # index of the input in the run's reading order
    name: str
    first_line: int  # number of the first line of `data`
    data: bytes
    long_lines: list[BadLine] = field(default_factory=list)  # over-long lines just before `data`
    path: str | None = None  # the plain file `data` was read from (None: gzip, stdin)
    offset: int = 0  # where `data` starts in that file
    size: int = -1  # detached: len(data); -1 while the data is here
    newlines: int = 0  # detached: newlines in data, to check what the worker reads back

    @property
    def lines(self) -> int:
        return self.data.count(b"\n") + len(self.long_lines)

    def detached(self) -> "Block":
        """This block without its bytes, if they can be read back from a plain file (a block
        of only over-long lines has no bytes to leave behind)."""
        if self.path is None or self.size >= 0 or not self.data:
            return self
        return replace(self, data=b"", size=len(self.data), newlines=self.data.count(b"\n"))

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
        if len(data) != self.size or not data.endswith(b"\n") or data.count(b"\n") != self.newlines:
            raise InputError(
                self.name, "the file changed while it was being ingested; nothing was committed, ingest it again"
            )
        return replace(self, data=data, size=-1, newlines=0)


def too_long(file: str, line: int, size: int, head: bytes, max_line: int) -> BadLine:
    """The reject of a line over the cap; `head`: its first bytes (HEAD_BYTES are kept).
    Made by the reader's one constructor, so `audit` and `ingest` say the same words."""
    return long_line_reject(file, line, size, head, max_line)


def _starts_with_bom(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(_lines.UTF8_BOM)) == _lines.UTF8_BOM


def split_source(
    source: InputSource, index: int, block_bytes: int = BLOCK_BYTES, max_line: int = MAX_LINE_BYTES
) -> Iterator[Block]:
    """Blocks of `source` in order. Nothing raises for bad data: when the file cannot be read
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
    pending_at = 0  # offset of pending's first byte in the data
    path = bom = None  # a plain file's path, and the bytes before its data (a BOM)
    long_lines: list[BadLine] = []  # over-long lines between the last block and `pending`
    skipping: tuple[int, bytes] | None = None  # (bytes so far, head) of an over-long line being skipped
    finished = False
    try:
        for chunk in _lines._data_chunks(stream, source, hasher):
            if bom is None:  # the first chunk: gzip is known now
                bom = 0
                if source.path is not None and not source.gzip and os.path.isfile(source.path):
                    path = str(source.path)  # a regular plain file: blocks can be read back
                    bom = len(_lines.UTF8_BOM) if _starts_with_bom(path) else 0
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
                chunk_at += cut + 1
                if not chunk:
                    continue
            if not pending:
                pending_at = chunk_at
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size < block_bytes:
                continue
            data = b"".join(pending)
            cut = data.rfind(b"\n")
            if cut >= 0:
                yield Block(index, name, line, data[: cut + 1], long_lines, path, bom + pending_at)
                line += data.count(b"\n", 0, cut + 1)
                long_lines = []
                data = data[cut + 1 :]
                pending_at += cut + 1
            if len(data) > max_line:  # no newline within the cap: skip this line
                skipping, data = (len(data), data[:HEAD_BYTES]), b""
            pending, pending_size = ([data], len(data)) if data else ([], 0)
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
    except _lines._Broken as exc:
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
            _lines._drain(stream, source, hasher)
            source.sha256 = hasher.hexdigest()
        if not source.is_stdin:
            stream.close()

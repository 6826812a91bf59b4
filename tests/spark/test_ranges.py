"""Byte ranges of a plain log (pipeline.engines.spark.ingest): however a file is cut, the
ranges' lines, numbered from the counts the driver takes while hashing the file, are the
splitter's lines.

No Spark here: the range reader and the counting pass are plain functions over files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pipeline.engines.spark.ingest import _range_block
from pipeline.reader.split import hash_and_count_ranges, lines_starting_in, split_source
from pipeline.reader.inputs import InputSource

CONTENT = (
    b"\xef\xbb\xbf"
    + b'{"a": 1}\r\n'
    + b"\n"
    + b"x" * 37
    + b"\n\n  \n"
    + b'{"b": "\xff"}\n'
    + b"y" * 5
    + b"\nlast line without a newline"
)


def lines_of(blocks) -> list[tuple[int, bytes]]:
    out = []
    for block in blocks:
        for i, raw in enumerate(block.data.split(b"\n")[:-1]):
            out.append((block.first_line + i, raw))
    return out


@pytest.mark.parametrize("content", [CONTENT, CONTENT + b"\n", b"\n\n\n", b"one", b"\xef\xbb\xbf", b"\n"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 11, 64, 1000])
def test_ranges_give_the_splitters_lines(tmp_path: Path, content: bytes, size: int):
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    want = lines_of(split_source(InputSource("log.jsonl", path), 0))
    starts = list(range(0, len(content), size))
    sha256, counts, crcs = hash_and_count_ranges(path, len(content), size)
    assert sha256 == hashlib.sha256(content).hexdigest()
    assert counts == [lines_starting_in(path, s, min(s + size, len(content))) for s in starts]
    expected = [(max(s - 1, 0), min(s + size, len(content)), crc) for s, crc in zip(starts, crcs)]
    blocks, spans, line = [], [], 1
    for s, n in zip(starts, counts):
        block, span = _range_block(0, "log.jsonl", str(path), s, min(s + size, len(content)), line)
        blocks.append(block)
        spans.append(span)
        line += n
    assert lines_of(blocks) == want
    assert line - 1 == len(want)
    # every byte a task reads is a byte the driver hashed, and its CRC-32 says so
    assert spans == expected
    if len(content) > 1:
        flipped = bytearray(content)
        middle = len(content) // 2
        flipped[middle] ^= 0x20  # another byte in the middle: the same size
        path.write_bytes(bytes(flipped))
        k = next(i for i, (first, last, _) in enumerate(expected) if first <= middle < last)
        s = starts[k]
        _, span = _range_block(0, "log.jsonl", str(path), s, min(s + size, len(content)), 1)
        assert span != expected[k]  # the driver stops the run: the file changed while it was read

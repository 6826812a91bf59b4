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
    sha256, counts = hash_and_count_ranges(path, len(content), size)
    assert sha256 == hashlib.sha256(content).hexdigest()
    assert counts == [lines_starting_in(path, s, min(s + size, len(content))) for s in starts]
    blocks, line = [], 1
    for s, n in zip(starts, counts):
        blocks.append(_range_block(0, "log.jsonl", str(path), s, min(s + size, len(content)), line))
        line += n
    assert lines_of(blocks) == want
    assert line - 1 == len(want)

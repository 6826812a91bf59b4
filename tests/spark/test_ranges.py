"""Byte ranges of a plain log (pipeline.engines.spark.ingest): however a file is cut, the
ranges' lines, numbered from the counts of the ranges before, are the splitter's lines.

No Spark here: the two task functions are plain functions over Arrow batches and files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.engines.spark.ingest import _count_task, _range_block, _verify_spans
from pipeline.reader.inputs import InputError
from pipeline.reader.split import split_source
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


@pytest.mark.parametrize("content", [CONTENT, CONTENT + b"\n", b"\n\n\n", b"one"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 11, 64, 1000])
def test_ranges_give_the_splitters_lines(tmp_path: Path, content: bytes, size: int):
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    want = lines_of(split_source(InputSource("log.jsonl", path), 0))
    starts = list(range(0, len(content), size))
    rows = pa.RecordBatch.from_pylist(
        [{"source": 0, "path": str(path), "start": s, "end": min(s + size, len(content))} for s in starts]
    )
    counted = [r for b in _count_task(iter([rows])) for r in b.to_pylist()]
    counts = {r["start"]: r["lines"] for r in counted}
    spans = [(r["first"], r["last"], r["crc"]) for r in counted]
    blocks, line = [], 1
    for s in starts:
        block, span = _range_block(0, "log.jsonl", str(path), s, min(s + size, len(content)), line)
        blocks.append(block)
        spans.append(span)
        line += counts[s]
    assert lines_of(blocks) == want
    assert line - 1 == len(want)
    # every byte read by a task is a byte the driver hashes: it checks them in one pass
    assert _verify_spans(str(path), spans, "log.jsonl") == (
        len(content),
        __import__("hashlib").sha256(content).hexdigest(),
    )
    assert min(first for first, _, _ in spans) == 0 and max(last for _, last, _ in spans) == len(content)
    if len(content) > 1:
        flipped = bytearray(content)
        flipped[len(content) // 2] ^= 0x20  # another byte in the middle: the same size
        path.write_bytes(bytes(flipped))
        with pytest.raises(InputError, match="changed while it was being ingested"):
            _verify_spans(str(path), spans, "log.jsonl")

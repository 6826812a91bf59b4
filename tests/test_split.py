"""One splitter (pipeline.reader.split beside pipeline.reader.lines): every bulk way of cutting
a log (ingest's blocks, the fast audit's reads from an offset, Spark's byte ranges) gives
exactly the lines `iter_lines` gives, with the same numbers, whatever the cut points: CRLF
lines keep their "\\r", a BOM at the start is dropped, a last line without a newline is a
line, blank lines are counted."""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.reader.inputs import InputSource
from pipeline.reader.lines import iter_lines
from pipeline.reader.split import line_start, lines_starting_in, plain_blocks, range_data, split_source
from pipeline.reader.sniff import GZIP_MAGIC, UTF8_BOM

PIECES = st.sampled_from([b'{"a": 1}', b"x" * 9, b"", b"  ", b"\r", b'{"b": "\xff"}', b"y"])
CONTENTS = st.builds(
    lambda bom, lines, end: (UTF8_BOM if bom else b"") + b"\n".join(lines) + end,
    st.booleans(),
    st.lists(st.lists(PIECES, max_size=3).map(b"".join), max_size=12),
    st.sampled_from([b"", b"\n", b"\r\n"]),
)


def reference(path: Path) -> list[tuple[int, bytes]]:
    return list(iter_lines(InputSource(path.name, path=path)))


def non_blank(numbered) -> list[tuple[int, bytes]]:
    return [(n, raw) for n, raw in numbered if raw and not raw.isspace()]


def numbered(data: bytes, first: int) -> list[tuple[int, bytes]]:
    return [(first + i, raw) for i, raw in enumerate(data.split(b"\n"))]


def _write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    return path


@settings(max_examples=150, deadline=None)
@given(content=CONTENTS, size=st.integers(1, 40))
def test_every_bulk_splitter_gives_the_lines_iter_lines_gives(tmp_path_factory, content, size):
    path = _write(tmp_path_factory.mktemp("split"), content)
    want = reference(path)

    source = InputSource(path.name, path=path)
    blocks = [line for b in split_source(source, 0, block_bytes=size) for line in numbered(b.data[:-1], b.first_line)]
    assert non_blank(blocks) == want
    assert source.lines == (max(n for n, _ in blocks) if blocks else 0)

    reads = lambda pos: min(pos + max(size, len(UTF8_BOM)), len(content))  # noqa: E731
    parts = [line for b, first, n, _, _ in plain_blocks(path, 0, reads) for line in numbered(b, first)]
    assert non_blank(parts) == want

    ranges, line = [], 1
    for start in range(0, len(content), size):
        end = min(start + size, len(content))
        data = range_data(path, start, end)
        if data:
            ranges += numbered(data[:-1], line)
        line += lines_starting_in(path, start, end)
    assert non_blank(ranges) == want
    assert line - 1 == source.lines


@settings(max_examples=100, deadline=None)
@given(content=CONTENTS, offset=st.integers(0, 80))
def test_a_range_starts_only_where_a_line_starts(tmp_path_factory, content, offset):
    path = _write(tmp_path_factory.mktemp("start"), content)
    start = line_start(path, offset, len(content))
    if start is None:
        return
    assert offset < start < len(content) and content[start - 1 : start] == b"\n"
    assert b"\n" not in content[offset : start - 1]
    assert not content[start:].startswith((GZIP_MAGIC, UTF8_BOM))


def test_gzip_members_and_a_bom_split_as_the_reader_reads_them(tmp_path):
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip.compress(UTF8_BOM + b'{"a": 1}\r\n\n') + gzip.compress(b"two\nthree"))
    blocks = list(split_source(InputSource(path.name, path=path), 0, block_bytes=4))
    lines = [line for b in blocks for line in numbered(b.data[:-1], b.first_line)]
    assert non_blank(lines) == reference(path) == [(1, b'{"a": 1}\r'), (3, b"two"), (4, b"three")]
    assert all(b.path is None for b in blocks)  # gzip: never read back by offset


def test_only_the_sniffer_spells_the_magic_bytes():
    pipeline = Path(__file__).resolve().parents[1] / "pipeline"
    spelled = {
        str(p.relative_to(pipeline))
        for p in pipeline.rglob("*.py")
        if any(m in p.read_text(encoding="utf-8") for m in (r"\x1f\x8b", r"\xef\xbb\xbf"))
    }
    assert spelled == {"reader/sniff.py"}

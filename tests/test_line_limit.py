"""The line length limit (issue 11 item 4): a line over `max_line_bytes` is one bad_json
reject naming its size, read past in bounded memory; every other line is read as before.

The contract is held on the public reading functions (`iter_lines`, `read_events`) and the
CLI, so any new line splitter has to keep it. Expected values come from a reference model
written here (split on b"\\n", count, compare lengths), not from the reader.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.reader.inputs import InputSource
from pipeline.limits import MAX_LINE_BYTES, format_bytes, parse_size
from pipeline.model import BadLine, Event
from pipeline.reader import LongLine, iter_lines, long_line_reject, read_events
from pipeline.reader import lines as lines_module
from pipeline.reader.lines import LONG_LINE_HEAD

ROOT = Path(__file__).resolve().parents[1]
STANDARD = ROOT / "sample_logs" / "standard.jsonl"
runner = CliRunner()


def source(path: Path) -> InputSource:
    return InputSource(str(path), path=path)


def expected_lines(data: bytes, limit: int) -> list[tuple[int, object]]:
    """The reference: (number, bytes) per non-blank line, ("long", size, head) per long one."""
    out = []
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()  # a final newline ends the last line, it does not start another
    for number, raw in enumerate(pieces, start=1):
        if len(raw) > limit:
            out.append((number, ("long", len(raw), raw[:LONG_LINE_HEAD])))
        elif raw and not raw.isspace():
            out.append((number, raw))
    return out


def actual_lines(src: InputSource, limit: int) -> list[tuple[int, object]]:
    out = []
    for number, raw in iter_lines(src, limit):
        if type(raw) is LongLine:
            assert raw == b"" and raw.limit == limit  # holds no data: nothing can decode it
            out.append((number, ("long", raw.size, raw.head)))
        else:
            out.append((number, bytes(raw)))
    return out


# ---- the line splitter against the reference model -------------------------------------
line_text = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")),
    st.sampled_from([b"", b"  ", b"\r", b"{}", b"x" * 100]),
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(line_text, max_size=12),
    final_newline=st.booleans(),
    limit=st.integers(1, 60),
    chunk=st.integers(1, 50),
    compressed=st.booleans(),
)
def test_iter_lines_matches_the_reference_for_any_chunking(lines, final_newline, limit, chunk, compressed):
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    if data.startswith(b"\xef\xbb\xbf") or data.startswith(b"\x1f\x8b"):
        data = b"x" + data  # a BOM or gzip magic of its own would be read as such
    src = InputSource("<stdin>", stream=io.BytesIO(gzip.compress(data) if compressed else data))
    with pytest.MonkeyPatch.context() as patch:  # small chunks: lines cross chunk boundaries
        patch.setattr(lines_module, "CHUNK", chunk)
        patch.setattr(lines_module, "INFLATE_STEP", chunk)
        got = actual_lines(src, limit)
    assert got == expected_lines(data, limit)
    assert src.problem is None
    assert src.data_bytes == len(data)


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path):
    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"a" * 10 + b"\n" + b"b" * 11 + b"\n" + b"c" * 10)
    got = list(iter_lines(source(path), 10))
    assert [n for n, _ in got] == [1, 2, 3]
    assert got[0][1] == b"a" * 10 and got[2][1] == b"c" * 10
    assert type(got[1][1]) is LongLine and got[1][1].size == 11


def test_a_long_line_becomes_a_bad_json_reject_with_its_number_and_size(tmp_path):
    roll = b'{"game_id":"g1","seq":2,"type":"roll","player":"ana","dice":[1,2,3,4,5,6]}'
    path = tmp_path / "log.jsonl"
    big = b'{"game_id":"' + b"g" * 3000 + b'","seq":1,"type":"game_start","players":["a"]}'
    path.write_bytes(roll + b"\n\n" + big + b"\n" + roll + b"\n")
    items = list(read_events([source(path)], max_line_bytes=1000))
    assert [type(i) for i in items] == [Event, BadLine, Event]
    bad = items[1]
    assert (bad.file, bad.line, bad.code) == (str(path), 3, "bad_json")
    assert bad.reason == (f"line is {len(big):,} bytes, over the limit of 1000 bytes; raise it with --max-line-bytes")
    assert bad.raw == big.decode()  # shorter than LONG_LINE_HEAD: kept whole
    assert items[2].line == 4


def test_a_long_line_that_is_valid_json_at_its_start_is_still_rejected(tmp_path):
    # The first megabyte of this line is a complete, valid event followed by spaces: a reader
    # that parsed a prefix would accept it.
    event = b'{"game_id":"g1","seq":1,"type":"game_start","players":["a"]}'
    path = tmp_path / "log.jsonl"
    path.write_bytes(event + b" " * (2 * MAX_LINE_BYTES) + b"\n" + event + b"\n")
    first, second = read_events([source(path)])
    assert first.code == "bad_json" and "over the limit of 1 MiB" in first.reason
    assert type(second) is Event and second.line == 2


def test_the_default_limit_is_1_mib_and_documented():
    assert MAX_LINE_BYTES == 1 << 20 == parse_size("1MiB") == parse_size("1M") == parse_size("1048576")
    assert format_bytes(MAX_LINE_BYTES) == "1 MiB"
    doc = (ROOT / "docs" / "reliability.md").read_text()
    assert "1 MiB" in doc and "--max-line-bytes" in doc


def test_long_lines_pickle_as_themselves():
    line = LongLine(5_000_000, b"{\"game", 1 << 20)
    copy = pickle.loads(pickle.dumps(line))
    assert type(copy) is LongLine and (copy.size, copy.head, copy.limit) == (5_000_000, b"{\"game", 1 << 20)


def test_a_gzip_stream_cut_inside_a_long_line_says_how_much_was_read(tmp_path):
    path = tmp_path / "cut.gz"
    whole = gzip.compress(b"ok\n" + b"x" * 5000)
    path.write_bytes(whole[: len(whole) - 12])  # the trailer and some data are missing
    src = source(path)
    got = list(iter_lines(src, 100))
    assert got == [(1, b"ok")]
    assert src.problem.line == 2 and "line 2 was cut after" in src.problem.reason


# ---- the CLI ------------------------------------------------------------------------------
def big_game_id_log(tmp_path: Path, size: int) -> Path:
    line = b'{"game_id":"' + b"g" * size + b'","seq":1,"type":"game_start","players":["a"]}'
    path = tmp_path / "big.jsonl"
    path.write_bytes(STANDARD.read_bytes() + line + b"\n")
    return path


def standard_lines() -> int:
    return len(STANDARD.read_bytes().splitlines())


def test_audit_rejects_a_64_mib_game_id_and_audits_every_other_game(tmp_path):
    path = big_game_id_log(tmp_path, 64 << 20)
    alone = runner.invoke(app, ["audit", str(STANDARD), "-f", "json"])
    result = runner.invoke(app, ["audit", str(path), "-f", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    bad = [f for f in report["findings"] if f["code"] == "bad_json"]
    assert len(bad) == 1 and bad[0]["line"] == standard_lines() + 1
    assert "over the limit of 1 MiB; raise it with --max-line-bytes" in bad[0]["message"]
    others = [f for f in report["findings"] if f["code"] != "bad_json"]
    assert len(others) == len(json.loads(alone.stdout)["findings"])
    assert len(report["games"]) == len(json.loads(alone.stdout)["games"])


def test_max_line_bytes_raises_the_limit_and_bad_sizes_are_usage_errors(tmp_path):
    path = big_game_id_log(tmp_path, 2 << 20)
    raised = runner.invoke(app, ["audit", str(path), "-f", "json", "--max-line-bytes", "4MiB"])
    assert not [f for f in json.loads(raised.stdout)["findings"] if f["code"] == "bad_json"]
    lowered = runner.invoke(app, ["audit", str(STANDARD), "-f", "json", "--max-line-bytes", "100"])
    assert lowered.exit_code == 1
    assert {f["code"] for f in json.loads(lowered.stdout)["findings"]} >= {"bad_json"}
    for bad in ("0", "1.5M", "lots", "-3"):
        result = runner.invoke(app, ["audit", str(STANDARD), "--max-line-bytes", bad])
        assert result.exit_code == 2 and "--max-line-bytes" in result.output


def test_ingest_stores_the_long_line_as_a_reject_with_its_size(tmp_path):
    path = big_game_id_log(tmp_path, 3 << 20)
    out = tmp_path / "ds"
    result = runner.invoke(app, ["ingest", str(path), "-o", str(out), "-f", "json"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["rejects"] == 1 and summary["invariant_holds"]
    rows = duckdb.sql(
        f"select line, code, reason, length(raw), raw_truncated from read_parquet('{out}/rejects/**/*.parquet')"
    ).fetchall()
    size = (3 << 20) + len('{"game_id":"","seq":1,"type":"game_start","players":["a"]}')
    assert rows == [
        (
            standard_lines() + 1,
            "bad_json",
            f"line is {size:,} bytes, over the limit of 1 MiB; raise it with --max-line-bytes",
            64 * 1024,
            True,
        )
    ]
    raised = runner.invoke(
        app, ["ingest", str(path), "-o", str(tmp_path / "ds2"), "-f", "json", "--max-line-bytes", "8M"]
    )
    assert json.loads(raised.stdout)["rejects"] == 0


# ---- memory: measured in a fresh process -------------------------------------------------
MEASURE = textwrap.dedent("""
    import resource, sys
    from pipeline.audit.run import audit_stream
    from pipeline.reader.inputs import resolve
    from pipeline.reader import read_events
    report = audit_stream(read_events(resolve([sys.argv[1]]).sources), trace=False)
    codes = sorted({f.code for f in report.findings if f.code == "bad_json"})
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, len(report.games), codes)
""")


def peak_mib(path: Path) -> tuple[int, int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr
    peak, games, codes = done.stdout.split(" ", 2)
    return int(peak), int(games), eval(codes)


def test_memory_stays_bounded_on_a_200_mib_line_of_zeros_in_gzip(tmp_path):
    path = tmp_path / "zeros.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        fh.write(packer.compress(STANDARD.read_bytes()))
        for _ in range(200):
            fh.write(packer.compress(bytes(1 << 20)))
        fh.write(packer.flush())
    small = tmp_path / "small.jsonl"
    small.write_bytes(STANDARD.read_bytes())
    baseline, games, _ = peak_mib(small)
    peak, games_with_zeros, codes = peak_mib(path)
    assert codes == ["bad_json"] and games_with_zeros == games
    # Reading the line whole takes several times its 200 MiB (main did: ~700 MiB).
    assert peak - baseline < 60, (peak, baseline)


def test_memory_stays_bounded_on_a_64_mib_game_id(tmp_path):
    path = big_game_id_log(tmp_path, 64 << 20)
    small = tmp_path / "small.jsonl"
    small.write_bytes(STANDARD.read_bytes())
    baseline, games, _ = peak_mib(small)
    peak, games_with_big, codes = peak_mib(path)
    assert codes == ["bad_json"] and games_with_big == games
    assert peak - baseline < 40, (peak, baseline)


def test_ingest_in_two_processes_counts_the_long_line_once(tmp_path):
    # Each worker process reads every line; only one of them may keep a line without a game.
    from pipeline.ingest import ingest

    path = big_game_id_log(tmp_path, 5000)
    summary = ingest([str(path)], tmp_path / "ds", workers=2, max_line_bytes=4096)
    assert summary.rejects == 1 and summary.events == standard_lines() and summary.invariant_holds
    single = ingest([str(path)], tmp_path / "ds1", workers=1, max_line_bytes=4096)
    assert (single.rejects, single.events, single.findings) == (summary.rejects, summary.events, summary.findings)


def test_long_line_reject_is_the_one_way_to_make_the_reject():
    # Any other splitter (ingest's) makes its rejects with this function: same words, same text.
    bad = long_line_reject("f.jsonl", 9, 3_000_000, b"x" * (LONG_LINE_HEAD + 50), MAX_LINE_BYTES)
    assert (bad.file, bad.line, bad.code) == ("f.jsonl", 9, "bad_json")
    assert bad.reason == "line is 3,000,000 bytes, over the limit of 1 MiB; raise it with --max-line-bytes"
    assert bad.raw == "x" * LONG_LINE_HEAD

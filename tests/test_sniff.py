"""pipeline.reader.sniff: what a file looks like from its first bytes (the reader of ingest and
audit must keep calling it through pipeline.reader.inputs; tests/test_first_hour_cli.py checks both
commands end to end)."""

from __future__ import annotations

import gzip

import pytest

from pipeline.reader.sniff import SNIFF_BYTES, Sniff, sniff_bytes, sniff_file

EVENT = b'{"game_id":"g1","seq":1,"type":"game_start","players":["ana"]}\n'


@pytest.mark.parametrize(
    "data, kind",
    [
        (EVENT * 3, "jsonl"),
        (b"\xef\xbb\xbf" + EVENT, "jsonl"),  # a byte order mark first
        (b"\n\n   \n" + EVENT, "jsonl"),  # blank lines first
        (b"garbage\n" * 5 + EVENT, "jsonl"),  # a damaged start, then a log: read, bad lines reported
        (b'{"game_id":"g1","se\n', "jsonl"),  # cut off, still a log line
        (b"game_id,turn,player,points,total\ng1,1,ana,300,300\n", "scoresheet"),
        (b'"game_id","turn","player","points","total"\r\n', "scoresheet"),
        (b"a,b,c\n1,2,3\n", "csv"),
        (EVENT.replace(b"\n", b"\r") * 3, "old-mac"),  # carriage returns alone end the lines
        (EVENT.replace(b"\n", b"\r\n") * 3, "jsonl"),  # Windows line endings are read as they are
        (EVENT.replace(b"\n", b"\r"), "jsonl"),  # one event and a stray carriage return: a log
        (b"a\tb\tc\n1\t2\t3\n", "csv"),
        (b"<!DOCTYPE html>\n<html><head></head><body></body></html>\n", "html"),
        (b"<?xml version='1.0'?>\n<games/>\n", "xml"),
        (b'[{"game_id": "g1"}, {"game_id": "g2"}]\n', "json"),
        (b'[\n  {"game_id": "g1", "seq": 1}\n]\n', "json"),
        (b'{\n  "game_id": "g1"\n}\n', "json"),
        (b"[build-system]\nrequires = []\n", "text"),
        (b"# Sample logs\n\nThese files hold games.\n", "text"),
        (b"PAR1\x15\x04\x15\x10\x00\x00", "binary"),
        (b"PK\x03\x04rest of a zip", "binary"),
        (b"\x00\x01\x02binary\x00", "binary"),
        (bytes(range(128, 256)) * 20, "binary"),  # not UTF-8
        (b"", "empty"),
        (b"\n \n\t\n", "blank"),
    ],
)
def test_kinds(data, kind):
    assert sniff_bytes(data, complete=True).kind == kind


def test_only_logs_and_empty_files_are_read():
    assert Sniff("jsonl").is_log and Sniff("empty").is_log and Sniff("blank").is_log
    assert not any(Sniff(k).is_log for k in ("scoresheet", "csv", "html", "json", "text", "binary"))


def test_the_sentence_names_what_it_looks_like_and_what_to_do():
    said = sniff_bytes(b"game_id,turn,player,points,total\n", complete=True).describe()
    assert said == (
        "this looks like a scoresheet CSV, not JSON Lines (one JSON event per line): pass it with --scoresheet"
    )
    assert sniff_bytes(b"", complete=True).describe() == "no events: the file is empty"


def test_blank_lines_beyond_the_window_are_not_called_empty(tmp_path):
    """Only the whole file can say it has no events: a long run of blank lines may end in a log."""
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"\n" * (SNIFF_BYTES + 10) + EVENT)
    assert sniff_file(path).kind == "jsonl"


def test_gzip_is_looked_into(tmp_path):
    (tmp_path / "log.jsonl.gz").write_bytes(gzip.compress(EVENT * 2))
    (tmp_path / "sheet.gz").write_bytes(gzip.compress(b"game_id,turn,player,points,total\n"))
    (tmp_path / "two.gz").write_bytes(gzip.compress(b"") + gzip.compress(EVENT))  # two members
    (tmp_path / "empty.gz").write_bytes(gzip.compress(b""))
    assert sniff_file(tmp_path / "log.jsonl.gz").kind == "jsonl"
    assert sniff_file(tmp_path / "sheet.gz").kind == "scoresheet"
    assert sniff_file(tmp_path / "two.gz").kind == "jsonl"
    assert sniff_file(tmp_path / "empty.gz").kind == "empty"


def test_what_cannot_be_read_is_left_to_the_reader(tmp_path):
    """A broken gzip or an unreadable path is not judged here: the reader reports it with
    its line number, as it always did."""
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage that is not deflate")
    cut = tmp_path / "cut.jsonl.gz"
    whole = gzip.compress(EVENT * 1000)
    cut.write_bytes(whole[: len(whole) // 2])
    assert sniff_file(broken).kind == "jsonl"
    assert sniff_file(cut).kind == "jsonl"
    assert sniff_file(tmp_path / "missing.jsonl").kind == "jsonl"


def test_old_mac_line_endings_are_named_with_the_fix(tmp_path, capsys):
    """A file whose lines end in a carriage return alone used to be one huge bad_json."""
    from pipeline.reader import read_events
    from pipeline.reader.inputs import resolve

    sniffed = sniff_bytes(EVENT.replace(b"\n", b"\r") * 3, complete=True)
    assert not sniffed.is_log
    assert "old Mac line endings" in sniffed.describe() and "tr '\\r' '\\n'" in sniffed.describe()
    path = tmp_path / "mac.jsonl.gz"
    path.write_bytes(gzip.compress(EVENT.replace(b"\n", b"\r") * 3))
    result = resolve([str(path)])
    assert not result.sources and result.problems  # the only file named: nothing to read, exit 2
    assert any("old Mac line endings" in notice for notice in result.notices)
    # standard input is not sniffed: its one line says the same
    import io

    (bad,) = list(read_events(resolve(["-"], stdin=io.BytesIO(EVENT.replace(b"\n", b"\r") * 3)).sources))
    assert bad.code == "bad_json" and "old Mac line endings" in bad.reason and "tr '\\r' '\\n'" in bad.reason

"""Input resolution: files, directories, globs and stdin become sources in the order given."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import pytest

from pipeline.reader.inputs import STDIN_NAME, InputError, InputSource, resolve, resolve_inputs
from pipeline.reader import read_events

LINE = b'{"game_id":"g1","seq":1,"type":"game_start","players":["ana"]}\n'


def make(root: Path, *names: str, data: bytes = LINE) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def names(sources: list[InputSource]) -> list[str]:
    return [s.name for s in sources]


def test_files_keep_the_order_given(tmp_path):
    make(tmp_path, "b.jsonl", "a.jsonl", "c.jsonl.gz")
    specs = [str(tmp_path / n) for n in ("c.jsonl.gz", "a.jsonl", "b.jsonl")]
    sources = resolve_inputs(specs)
    assert names(sources) == specs
    assert all(s.path == Path(n) and not s.is_stdin for s, n in zip(sources, specs))


def test_directory_gives_its_log_files_in_name_order_one_level_deep(tmp_path):
    make(
        tmp_path,
        "g10.jsonl",
        "g2.jsonl",
        "G3.JSONL",
        "a.jsonl.gz",
        "b.ndjson",
        "c.json.gz",
        "notes.txt",
        ".hidden.jsonl",
        "sub/deeper.jsonl",
    )
    result = resolve([str(tmp_path)])
    assert names(result.sources) == [
        str(tmp_path / n) for n in ("G3.JSONL", "a.jsonl.gz", "b.ndjson", "c.json.gz", "g10.jsonl", "g2.jsonl")
    ]
    assert result.problems == []
    assert result.skipped == [str(tmp_path / "notes.txt")]
    assert result.notices == [
        f"{tmp_path}: 1 file not read, not named like logs (.jsonl, .ndjson, .json, or those + .gz): notes.txt; "
        "name a file to read it anyway",
        f"{tmp_path}: 1 subdirectory not read: sub; name one, or use a glob such as '{tmp_path}/**/*.jsonl'",
        f"{tmp_path}: 1 hidden file not read: .hidden.jsonl",
    ]


def test_many_subdirectories_are_one_notice(tmp_path):
    make(tmp_path, "a.jsonl", *(f"2026-{m:02d}/day.jsonl" for m in range(1, 13)))
    result = resolve([str(tmp_path)])
    assert names(result.sources) == [str(tmp_path / "a.jsonl")]
    assert result.notices == [
        f"{tmp_path}: 12 subdirectories not read: 2026-01, 2026-02, 2026-03, 2026-04, "
        f"2026-05 and 7 more; name one, or use a glob such as '{tmp_path}/**/*.jsonl'"
    ]


def test_other_files_in_a_directory_are_skipped_in_one_notice(tmp_path):
    make(tmp_path, "a.jsonl")
    make(tmp_path, "README.md", data=b"# Logs\n\nThese are the logs.\n")
    make(tmp_path, "image.png", data=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    for i in range(6):
        make(tmp_path, f"sheet{i}.csv", data=b"game_id,turn,player,points,total\n")
    result = resolve([str(tmp_path)])
    records = list(read_events(result.sources))
    assert [(Path(r.file).name, r.line, r.type) for r in records] == [("a.jsonl", 1, "game_start")]
    skipped = [n for n in result.notices if "not read" in n]
    assert skipped == [
        f"{tmp_path}: 8 files not read, not named like logs (.jsonl, .ndjson, .json, or those + .gz): "
        "README.md, image.png, sheet0.csv, sheet1.csv, sheet2.csv and 3 more; "
        "name a file to read it anyway"
    ]


def test_a_directory_of_no_logs_is_a_problem(tmp_path):
    make(tmp_path, "README.md", data=b"# nothing here\n")
    result = resolve([str(tmp_path)])
    assert result.sources == []
    assert [p.reason for p in result.problems] == [
        "directory has no log files to read (names ending in .jsonl, .ndjson or .json, or those + .gz)"
    ]


def test_a_dataset_directory_given_as_logs_is_one_problem(tmp_path):
    """`audit data/` on what `ingest --out data/` wrote: one sentence pointing at stats and
    report, not a notice per table directory and a bad manifest."""
    from pipeline.ingest import ingest

    make(tmp_path, "a.jsonl", data=b'{"game_id": "g1", "seq": 1, "type": "game_start", "players": ["ana"]}\n')
    ingest([str(tmp_path / "a.jsonl")], tmp_path / "data")
    result = resolve([str(tmp_path / "data"), str(tmp_path / "a.jsonl")])
    assert names(result.sources) == [str(tmp_path / "a.jsonl")] and result.notices == []
    (problem,) = result.problems
    assert problem.reason.startswith(
        "this is a dataset written by `farkle-logs ingest`, not a directory of logs: "
        f"read it with `farkle-logs stats {tmp_path / 'data'}`"
    )


@pytest.mark.parametrize(
    "name, data, says",
    [
        (
            "sheet.jsonl",
            b"game_id,turn,player,points,total\ng1,1,ana,300,300\n",
            "this looks like a scoresheet CSV, not JSON Lines (one JSON event per line): pass it with --scoresheet",
        ),
        ("README.jsonl", b"# Logs\n\nThese are the logs.\n", "this looks like plain text"),
        ("part.jsonl", b"PAR1\x15\x04\x15\x10\x00\x00", "this looks like a Parquet file"),
        ("report.json", b"<!DOCTYPE html>\n<html><body>hi</body></html>\n", "this looks like an HTML page"),
        ("array.json", b'[\n  {"game_id": "g1"}\n]\n', "this looks like one JSON document"),
        ("events.json", b'[{"game_id": "g1"}, {"game_id": "g1"}]\n', "this looks like a JSON array, not JSON Lines"),
        (
            "notepad.jsonl",
            '{"game_id": "g1", "seq": 1}\n'.encode("utf-16"),
            "this looks like UTF-16 text, not JSON Lines (one JSON event per line): save it as UTF-8",
        ),
        (
            "rows.jsonl",
            b'["g1", 1, "game_start"]\n["g1", 2, "roll"]\n',
            "this looks like lines of JSON arrays, not JSON "
            "Lines (one JSON event per line): each line must be one event object, {...}",
        ),
        ("zipped.jsonl.gz", gzip.compress(b"a,b,c\n1,2,3\n4,5,6\n"), "this looks like a CSV file"),
    ],
)
def test_a_named_file_that_is_not_json_lines_is_skipped_with_one_notice(tmp_path, name, data, says):
    make(tmp_path, "a.jsonl")
    make(tmp_path, name, data=data)
    result = resolve([str(tmp_path / name), str(tmp_path / "a.jsonl")])
    assert names(result.sources) == [str(tmp_path / "a.jsonl")]
    assert result.skipped == [str(tmp_path / name)]
    (notice,) = result.notices
    assert notice.startswith(f"{tmp_path / name}: not read: {says}")
    assert result.problems == []


def test_when_every_file_is_skipped_nothing_is_left_to_read(tmp_path):
    make(tmp_path, "sheet.csv", data=b"game_id,turn,player,points,total\n")
    result = resolve([str(tmp_path / "sheet.csv")])
    assert result.sources == [] and len(result.notices) == 1
    assert [p.reason for p in result.problems] == ["no log to read: every file named was skipped (see the notes above)"]


def test_a_log_with_bad_lines_is_still_read(tmp_path):
    """Only a file in which no early line could be an event is skipped: a damaged first
    line, or garbage after good lines, is the reader's to report line by line."""
    make(tmp_path, "damaged.jsonl", data=b"not json at all\n" + LINE)
    make(tmp_path, "tail.jsonl", data=LINE + b"garbage\n" * 50)
    result = resolve([str(tmp_path / "damaged.jsonl"), str(tmp_path / "tail.jsonl")])
    assert len(result.sources) == 2 and result.notices == [] and result.skipped == []
    codes = [r.code if hasattr(r, "code") else r.type for r in read_events(result.sources)]
    assert codes == ["bad_json", "game_start", "game_start"] + ["bad_json"] * 50


@pytest.mark.parametrize("data, says", [(b"", "the file is empty"), (b"\n  \n\t\n", "only blank lines")])
def test_a_file_with_no_events_says_so_and_is_still_read(tmp_path, data, says):
    make(tmp_path, "none.jsonl", data=data)
    result = resolve([str(tmp_path / "none.jsonl")])
    assert names(result.sources) == [str(tmp_path / "none.jsonl")]
    (notice,) = result.notices
    assert notice.startswith(f"{tmp_path / 'none.jsonl'}: no events") and says in notice


def test_glob_matches_sorted_and_can_reach_into_subdirectories(tmp_path):
    make(tmp_path, "logs/b.jsonl.gz", "logs/a.jsonl.gz", "logs/c.jsonl", "logs/2026/d.jsonl.gz")
    assert names(resolve_inputs([str(tmp_path / "logs" / "*.jsonl.gz")])) == [
        str(tmp_path / "logs" / "a.jsonl.gz"),
        str(tmp_path / "logs" / "b.jsonl.gz"),
    ]
    assert names(resolve_inputs([str(tmp_path / "logs" / "**" / "*.gz")])) == [
        str(tmp_path / "logs" / "2026" / "d.jsonl.gz"),
        str(tmp_path / "logs" / "a.jsonl.gz"),
        str(tmp_path / "logs" / "b.jsonl.gz"),
    ]


def test_a_path_with_glob_characters_that_exists_is_taken_literally(tmp_path):
    make(tmp_path, "game[1].jsonl", "game1.jsonl")
    assert names(resolve_inputs([str(tmp_path / "game[1].jsonl")])) == [str(tmp_path / "game[1].jsonl")]


def test_problems_are_collected_and_the_rest_still_resolves(tmp_path):
    make(tmp_path, "a.jsonl", "b.jsonl")
    (tmp_path / "empty").mkdir()
    specs = [
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "missing.jsonl"),
        str(tmp_path / "*.nothing"),
        str(tmp_path / "empty"),
        "",
        str(tmp_path / "b.jsonl"),
    ]
    result = resolve(specs)
    assert names(result.sources) == [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    assert [(p.spec, p.reason) for p in result.problems] == [
        (str(tmp_path / "missing.jsonl"), "no such file or directory"),
        (str(tmp_path / "*.nothing"), "no file matches this pattern"),
        (
            str(tmp_path / "empty"),
            "directory has no log files to read (names ending in .jsonl, .ndjson or .json, or those + .gz)",
        ),
        ("''", "an empty path names no file"),
    ]
    assert str(result.problems[0]) == f"{tmp_path / 'missing.jsonl'}: no such file or directory"


def test_resolve_inputs_raises_the_first_problem_naming_the_spec(tmp_path):
    with pytest.raises(InputError, match="nope.jsonl: no such file"):
        resolve_inputs([str(tmp_path / "nope.jsonl")])


def test_unreadable_file_is_a_problem(tmp_path, monkeypatch):
    make(tmp_path, "secret.jsonl", "open.jsonl")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: not str(p).endswith("secret.jsonl") and real_access(p, mode))
    result = resolve([str(tmp_path / "secret.jsonl"), str(tmp_path / "open.jsonl")])
    assert names(result.sources) == [str(tmp_path / "open.jsonl")]
    assert [(p.spec, p.reason) for p in result.problems] == [(str(tmp_path / "secret.jsonl"), "permission denied")]


def test_the_same_file_twice_is_read_once_at_its_first_place(tmp_path):
    make(tmp_path, "a.jsonl", "b.jsonl")
    result = resolve([str(tmp_path / "b.jsonl"), str(tmp_path), str(tmp_path / "*.jsonl")])
    assert names(result.sources) == [str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl")]
    assert sum("read once" in n for n in result.notices) == 3


def test_stdin_dash_is_one_source_read_once():
    stream = io.BytesIO(gzip.compress(LINE))
    result = resolve(["-", "-"], stdin=stream)
    assert [(s.name, s.is_stdin) for s in result.sources] == [(STDIN_NAME, True)]
    assert [p.spec for p in result.problems] == ["-"]
    (record,) = read_events(result.sources)
    assert (record.file, record.line, record.type) == (STDIN_NAME, 1, "game_start")
    with pytest.raises(InputError, match="only once"):
        result.sources[0].open()


def test_stdin_between_files_keeps_its_place(tmp_path):
    make(tmp_path, "a.jsonl", "b.jsonl")
    sources = resolve_inputs([str(tmp_path / "a.jsonl"), "-", str(tmp_path / "b.jsonl")], stdin=io.BytesIO(LINE))
    assert names(sources) == [str(tmp_path / "a.jsonl"), STDIN_NAME, str(tmp_path / "b.jsonl")]
    assert [r.file for r in read_events(sources)] == names(sources)


def test_empty_file_is_a_source_not_a_problem(tmp_path):
    make(tmp_path, "empty.jsonl", data=b"")
    result = resolve([str(tmp_path / "empty.jsonl")])
    assert names(result.sources) == [str(tmp_path / "empty.jsonl")] and result.problems == []
    assert list(read_events(result.sources)) == []


def test_a_file_gone_before_reading_is_a_file_problem_not_a_crash(tmp_path):
    make(tmp_path, "a.jsonl")
    (source,) = resolve_inputs([str(tmp_path / "a.jsonl")])
    (tmp_path / "a.jsonl").unlink()
    assert list(read_events([source])) == []
    assert source.problem.line is None and "cannot read" in source.problem.reason

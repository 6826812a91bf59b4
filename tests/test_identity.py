"""Which file is which (issue 25 item 1, issue 20's stdin): nothing lost, nothing stored twice.

A file is its resolved absolute path: another file under the same name is another source,
never a new version of the first. A stream (stdin, a FIFO, process substitution) is a
reading of its own unless `--name` names it. Content that a source holds already, read
again under any name (a copy, the same log gzipped, stdin piped in again), adds nothing and
the summary names the source holding it. `dataset check` reports events stored twice from
two sources (datasets made before this), and `dataset repair` drops the later copies.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.ingest import ingest
from pipeline.rules import Ruleset
from tests.dataset_helpers import ROOT
from tests.ingest_games import dump, games, interleave
from tests.test_ingest import count, everything, table

runner = CliRunner()


def log_lines(seed: int, n: int = 4) -> list[dict]:
    return interleave(games(n, seed=seed), seed=seed)


def codes(ds: Path) -> dict[str, int]:
    files = open_dataset(ds).duckdb_paths("findings")
    if not files:
        return {}
    rows = duckdb.sql("select code, count(*) from read_parquet($f) group by 1", params={"f": files}).fetchall()
    return dict(rows)


def source_files(ds: Path) -> set[str]:
    files = open_dataset(ds).duckdb_paths("events")
    return {
        r[0] for r in duckdb.sql("select distinct source_file from read_parquet($f)", params={"f": files}).fetchall()
    }


def manifest(ds: Path) -> dict:
    return json.loads((ds / "manifest.json").read_text())


# ---------------------------------------------------------------- a file is its resolved path
def test_the_same_name_in_two_folders_is_two_files(tmp_path, monkeypatch):
    """`(cd dayA && ingest games.jsonl)` then `(cd dayB && ingest games.jsonl)` used to
    delete dayA's games as "superseded"; now both are kept, dayB's under its full path."""
    day_a, day_b = tmp_path / "dayA", tmp_path / "dayB"
    day_a.mkdir()
    day_b.mkdir()
    a, b = log_lines(1), log_lines(2)
    (day_a / "games.jsonl").write_bytes(dump(a))
    (day_b / "games.jsonl").write_bytes(dump(b))
    ds = tmp_path / "ds"
    monkeypatch.chdir(day_a)
    first = runner.invoke(app, ["ingest", "games.jsonl", "--out", str(ds), "-f", "json"])
    monkeypatch.chdir(day_b)
    second = runner.invoke(app, ["ingest", "games.jsonl", "--out", str(ds), "-f", "json"])
    assert first.exit_code == second.exit_code == 0, second.output
    s = json.loads(second.stdout)
    assert s["superseded"] == 0 and s["superseded_files"] == [] and s["events"] == len(b)
    assert count(ds, "events") == len(a) + len(b)
    assert source_files(ds) == {"games.jsonl", str(day_b / "games.jsonl")}
    assert f"note: games.jsonl: the dataset holds another source under this name ({day_a / 'games.jsonl'})" in (
        second.stderr
    )
    assert runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0
    entries = manifest(ds)["files"]
    assert [e["resolved"] for e in entries] == [str(day_a / "games.jsonl"), str(day_b / "games.jsonl")]
    # dayA's file grows, read from elsewhere under another spelling: the same source again
    (day_a / "games.jsonl").write_bytes(dump(a + log_lines(3)))
    monkeypatch.chdir(tmp_path)
    third = ingest([str(Path("dayA") / ".." / "dayA" / "games.jsonl")], ds)
    assert (third.duplicates, third.superseded, third.events) == (len(a), 0, len(log_lines(3)))


def test_a_file_through_a_symlink_is_the_file(tmp_path):
    lines = log_lines(4)
    real = tmp_path / "real.jsonl"
    real.write_bytes(dump(lines[:30]))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    ds = tmp_path / "ds"
    ingest([str(real)], ds)
    real.write_bytes(dump(lines))
    s = ingest([str(link)], ds)  # the same file, grown: its old lines are duplicates
    assert (s.duplicates, s.events, s.superseded) == (30, len(lines) - 30, 0)
    assert source_files(ds) == {str(real)}


def fifo_ingest(tmp_path: Path, data: bytes, ds: Path, **options):
    """Ingest through a FIFO at the same path each time (what `<(...)` is)."""
    fifo = tmp_path / "pipe"
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    try:
        return ingest([str(fifo)], ds, **options)
    finally:
        writer.join()


def test_a_fifo_read_twice_is_two_readings_not_a_new_version(tmp_path):
    """`ingest <(cat a.jsonl)` then `ingest <(cat b.jsonl)`: both are /dev/fd/63; b used to
    supersede a."""
    a, b = log_lines(5), log_lines(6)
    ds = tmp_path / "ds"
    first = fifo_ingest(tmp_path, dump(a), ds)
    second = fifo_ingest(tmp_path, dump(b), ds)
    assert (first.events, second.events, second.superseded, second.duplicates) == (len(a), len(b), 0, 0)
    assert count(ds, "events") == len(a) + len(b)
    third = fifo_ingest(tmp_path, dump(a), ds)  # the same content again: adds nothing
    assert (third.files, third.files_skipped, third.events) == (0, 1, 0)
    assert count(ds, "events") == len(a) + len(b) and "seq_error" not in codes(ds)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed for process substitution")
def test_process_substitution_twice_keeps_both(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(dump(log_lines(7)))
    b.write_bytes(dump(log_lines(8)))
    ds = tmp_path / "ds"
    cli = f"{sys.executable} -m pipeline.cli ingest"
    for name in (a, b):
        proc = subprocess.run(
            ["bash", "-c", f"{cli} <(cat {name}) --out {ds} -f json"], cwd=ROOT, capture_output=True, timeout=180
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["superseded"] == 0
    assert count(ds, "events") == len(log_lines(7)) + len(log_lines(8))


# ---------------------------------------------------------------- the same content, another name
def test_the_same_log_gzipped_or_copied_adds_nothing(tmp_path):
    lines = log_lines(9)
    logs = tmp_path / "logs"
    logs.mkdir()
    a = logs / "a.jsonl"
    a.write_bytes(dump(lines))
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    (logs / "a.jsonl.gz").write_bytes(gzip.compress(a.read_bytes()))
    (logs / "copy.jsonl").write_bytes(a.read_bytes())
    result = runner.invoke(
        app, ["ingest", str(logs / "a.jsonl.gz"), str(logs / "copy.jsonl"), "--out", str(ds), "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)
    assert (s["files"], s["files_skipped"], s["events"], s["snapshot"]) == (0, 2, 0, 1)
    assert s["same_content"] == {str(logs / "a.jsonl.gz"): str(a), str(logs / "copy.jsonl"): str(a)}
    assert f"{logs / 'a.jsonl.gz'}: skipped, its content is that of {a}, ingested before" in result.stderr
    assert everything(ds) == before and "seq_error" not in codes(ds)


def test_a_repeat_found_only_once_read_leaves_the_run_alone(tmp_path):
    """A gzip file of two members records only its last member's size, so it is not hashed
    before reading: once read, its content is known to be stored, and its rows leave the run
    while the other input's stay."""
    lines = log_lines(10)
    a = tmp_path / "a.jsonl"
    a.write_bytes(dump(lines))
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    data = a.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    two = tmp_path / "two-members.jsonl.gz"
    two.write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    other = tmp_path / "other.jsonl"
    other_lines = log_lines(11)
    other.write_bytes(dump(other_lines + ["{broken"]))
    notes: list[str] = []
    s = ingest([str(two), str(other)], ds, notice=notes.append)
    assert (s.files, s.files_skipped, s.events, s.rejects) == (1, 1, len(other_lines), 1)
    assert s.same_content == {str(two): str(a)}
    assert f"{two}: read, adds nothing, its content is that of {a}, ingested before" in "\n".join(notes)
    assert source_files(ds) == {str(a), str(other)}
    assert count(ds, "events") == len(lines) + len(other_lines) and "seq_error" not in codes(ds)
    assert runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0
    fresh = tmp_path / "fresh"
    ingest([str(a), str(other)], fresh)
    assert everything(ds) == everything(fresh)


def test_a_rewritten_file_says_which_rows_it_replaced(tmp_path):
    lines = log_lines(12)
    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(lines + ["{cut"]))
    ds = tmp_path / "ds"
    ingest([str(log)], ds)
    log.write_bytes(dump(lines[:-5]))  # rewritten shorter: 5 events and the reject are gone
    result = runner.invoke(app, ["ingest", str(log), "--out", str(ds), "-f", "json"])
    s = json.loads(result.stdout)
    assert s["superseded_files"] == [{"path": str(log), "events": 5, "rejects": 1}]
    assert f"note: {log}: changed since it was ingested: 5 stored event(s) and 1 reject(s)" in result.stderr
    record = manifest(ds)["ingests"][-1]
    assert record["superseded_files"] == s["superseded_files"] and record["counts"]["superseded"] == 6
    text = runner.invoke(app, ["ingest", str(log), "--out", str(tmp_path / "ds2")])
    assert "superseded" not in text.stdout  # nothing replaced: no line for it
    log.write_bytes(dump(lines[:-6]))
    text = runner.invoke(app, ["ingest", str(log), "--out", str(ds)])
    assert f"{log}: 1 stored events, 0 rejects replaced" in text.stdout


# ---------------------------------------------------------------- stdin
def test_stdin_piped_twice_stores_nothing_twice(tmp_path):
    """`cat a.jsonl b.jsonl | ingest -` run twice used to store every event twice (a
    seq_error each); and the same after ingesting a.jsonl by name, then piping it."""
    a, b = log_lines(13), log_lines(14)
    data = dump(a) + dump(b)
    ds = tmp_path / "ds"
    first = runner.invoke(app, ["ingest", "-", "--out", str(ds), "-f", "json"], input=data)
    assert first.exit_code == 0, first.output
    before = everything(ds)
    again = runner.invoke(app, ["ingest", "-", "--out", str(ds), "-f", "json"], input=data)
    assert again.exit_code == 0, again.output
    s = json.loads(again.stdout)
    assert (s["files"], s["files_skipped"], s["events"], s["snapshot"]) == (0, 1, 0, 1)
    assert "<stdin>: read, adds nothing, its content is that of <stdin> (read by ingest" in again.stderr
    assert everything(ds) == before and "seq_error" not in codes(ds)

    named = tmp_path / "a.jsonl"
    named.write_bytes(dump(a))
    ds2 = tmp_path / "ds2"
    ingest([str(named)], ds2)
    piped = runner.invoke(app, ["ingest", "-", "--out", str(ds2), "-f", "json"], input=named.read_bytes())
    assert json.loads(piped.stdout)["same_content"] == {"<stdin>": str(named)}
    assert count(ds2, "events") == len(a)


def test_a_named_stream_is_read_again_like_a_file(tmp_path):
    a, b = log_lines(15), log_lines(16)
    ds = tmp_path / "ds"

    def run(data: bytes) -> dict:
        out = runner.invoke(app, ["ingest", "-", "--name", "nightly", "--out", str(ds), "-f", "json"], input=data)
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    first = run(dump(a))
    grown = run(dump(a) + dump(b))  # the stream grew: its old lines are duplicates
    assert (first["events"], grown["duplicates"], grown["events"], grown["superseded"]) == (len(a), len(a), len(b), 0)
    again = run(dump(a) + dump(b))
    assert (again["files_skipped"], again["events"]) == (1, 0)
    assert source_files(ds) == {"nightly"} and count(ds, "events") == len(a) + len(b)
    assert manifest(ds)["files"][0]["kind"] == "stream" and manifest(ds)["files"][0]["stream_name"] == "nightly"
    fresh = tmp_path / "fresh"
    (tmp_path / "nightly").write_bytes(dump(a) + dump(b))
    ingest([str(tmp_path / "nightly")], fresh)
    drop = ("ingest_id", "source_file", "file")
    for name in ("events", "turns", "games", "findings"):
        assert table(ds, name, drop) == table(fresh, name, drop), name


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ["LOG", "--name", "x"],
            "--name x: names the one stream among the inputs (- for stdin, or a pipe), and there is none",
        ),
        (["-", "--name", "<stdin>"], "give a name of your own for the stream"),
        (["-", "--name", "LOG"], "the dataset holds another source under this name"),
    ],
)
def test_name_is_refused_where_it_cannot_name_the_stream(tmp_path, args, says):
    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(log_lines(17)))
    ds = tmp_path / "ds"
    ingest([str(log)], ds)
    before = everything(ds)
    out = runner.invoke(app, ["ingest", *[str(log) if a == "LOG" else a for a in args], "--out", str(ds)], input=b"")
    assert out.exit_code == 2
    assert out.stderr.count("\n") == 1 and says.replace("LOG", str(log)) in out.stderr
    assert everything(ds) == before


# ---------------------------------------------------------------- datasets made before identities
def strip_identities(ds: Path) -> None:
    """Make the current manifest look like one written before sources had identities."""
    path = ds / "manifest.json"
    data = json.loads(path.read_text())
    for entry in data["files"]:
        for key in ("kind", "resolved", "stream_name", "content_bytes", "content_sha256"):
            entry.pop(key, None)
    target = path.resolve()
    target.unlink()  # a hard-linked file: write a new one
    target.write_text(json.dumps(data))


def test_entries_written_before_identities_are_read_sensibly(tmp_path, monkeypatch):
    """An old entry's path is the file it names from the folder ingest runs in; `<stdin>`
    and /dev/fd/N entries are stream readings (never superseded by another stream)."""
    monkeypatch.chdir(tmp_path)
    lines = log_lines(18)
    Path("a.jsonl").write_bytes(dump(lines[:40]))
    ds = tmp_path / "ds"
    ingest(["a.jsonl"], ds)
    piped = dump(log_lines(19))
    ingest(["-"], ds, stdin=__import__("io").BytesIO(piped))
    fifo_ingest(tmp_path, dump(log_lines(20)), ds)
    strip_identities(ds)
    Path("a.jsonl").write_bytes(dump(lines))  # grown: the old entry is this file
    s = ingest(["a.jsonl"], ds)
    assert (s.duplicates, s.events, s.superseded) == (40, len(lines) - 40, 0)
    s = ingest(["-"], ds, stdin=__import__("io").BytesIO(piped))  # the old stdin reading's content
    assert (s.files_skipped, s.events) == (1, 0)
    s = fifo_ingest(tmp_path, dump(log_lines(21)), ds)  # not a new version of the old pipe
    assert s.superseded == 0 and s.events == len(log_lines(21))
    total = len(lines) + len(log_lines(19)) + len(log_lines(20)) + len(log_lines(21))
    assert count(ds, "events") == total and "seq_error" not in codes(ds)
    assert runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0


# ---------------------------------------------------------------- copies: check and repair
def test_check_reports_events_stored_twice_and_repair_drops_the_later_copies(tmp_path):
    """Two ways copies get in: a log, then a longer log that holds it (other content, so
    not skipped), and stdin read twice by a farkle-logs without stdin identity (here: the
    second reading has one line more). Check names them (exit 1); repair drops the later
    copies and replays their games; the dataset then equals one ingest of what is left."""
    a, b = log_lines(22), log_lines(23)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(dump(a))
    (logs / "ab.jsonl").write_bytes(dump(a + b))
    ds = tmp_path / "ds"
    ingest([str(logs / "a.jsonl")], ds)
    ingest([str(logs / "ab.jsonl")], ds)
    ingest(["-"], ds, stdin=__import__("io").BytesIO(dump(b[:10])))
    ingest(["-"], ds, stdin=__import__("io").BytesIO(dump(b[:10] + ['{"x": 1}'])))
    copies = len(a) + 2 * 10  # ab.jsonl's a, and b[:10] (first stored from ab.jsonl) from both readings of stdin
    assert codes(ds)["seq_error"] == copies
    check = runner.invoke(app, ["dataset", "check", str(ds), "-f", "json"])
    assert check.exit_code == 1
    report = json.loads(check.stdout)
    assert report["copies"]["events"] == copies and report["problems"] == []
    assert report["copies"]["by_file"] == {str(logs / "ab.jsonl"): len(a), "<stdin>": 20}
    line, event = min(enumerate(a, 1), key=lambda item: (item[1]["game_id"], item[1]["seq"]))  # listed first
    assert report["copies"]["examples"][0] == (
        f"game {event['game_id']} seq {event['seq']}: {logs / 'a.jsonl'}:{line} and {logs / 'ab.jsonl'}:{line}"
    )
    text = " ".join(runner.invoke(app, ["dataset", "check", str(ds)]).stdout.split())
    assert f"copies: {copies:,} event(s) stored twice from two sources" in text
    assert f"COPIES: `farkle-logs dataset repair {ds}` drops the later copies" in text

    repaired = runner.invoke(app, ["dataset", "repair", str(ds)])
    assert repaired.exit_code == 0, repaired.output
    assert f"dropped {copies:,} later copies" in repaired.stdout
    after = runner.invoke(app, ["dataset", "check", str(ds)])
    assert after.exit_code == 0, after.output
    assert count(ds, "events") == len(a) + len(b)
    assert "seq_error" not in codes(ds) and count(ds, "rejects") == 1
    fresh = tmp_path / "fresh"
    ingest([str(logs / "ab.jsonl")], fresh)
    for name in ("turns", "rolls", "decisions", "game_players"):
        assert table(ds, name) == table(fresh, name), name
    assert runner.invoke(app, ["dataset", "repair", str(ds)]).stdout.count("dropped") == 0  # nothing left


# ---------------------------------------------------------------- --rules of a later run
def test_a_later_rules_is_named_in_a_note(tmp_path):
    """A game whose game_start names no rules keeps the ruleset of its first ingest; a later
    run with another --rules says so, once, naming the game."""
    g = games(1, seed=24)[0]
    start = dict(g.lines[0])
    del start["rules"]
    lines = [start] + g.lines[1:]
    (tmp_path / "a.jsonl").write_bytes(dump(lines[:5]))
    (tmp_path / "b.jsonl").write_bytes(dump(lines[5:]))
    ds = tmp_path / "ds"
    ingest([str(tmp_path / "a.jsonl")], ds, Ruleset.builtin("playmonster"))
    notes: list[str] = []
    ingest([str(tmp_path / "b.jsonl")], ds, Ruleset.builtin("standard"), notice=notes.append)
    said = [n for n in notes if "keep the ruleset" in n]
    assert said == [
        "1 game(s) continued from earlier ingests keep the ruleset they were first replayed with (playmonster), "
        f"not this run's standard (--rules applies to games that start in this run): {g.game_id}"
    ]
    (tmp_path / "c.jsonl").write_bytes(dump(lines[5:] + [{"game_id": g.game_id, "seq": 999, "type": "x"}]))
    quiet: list[str] = []
    ingest([str(tmp_path / "c.jsonl")], ds, Ruleset.builtin("playmonster"), notice=quiet.append)
    assert not [n for n in quiet if "keep the ruleset" in n]  # the same ruleset: nothing to say


def test_copies_of_stdin_readings_are_told_apart_by_their_ingest(tmp_path):
    """Every reading of stdin has the name <stdin>: a copy is known by its reading, and
    repair drops the second reading's copies, never the first's rows at the same lines."""
    b = log_lines(25)
    ds = tmp_path / "ds"
    one = ingest(["-"], ds, stdin=__import__("io").BytesIO(dump(b)))
    two = ingest(["-"], ds, stdin=__import__("io").BytesIO(dump(b + ['{"x": 1}'])))
    report = json.loads(runner.invoke(app, ["dataset", "check", str(ds), "-f", "json"]).stdout)
    line, event = min(enumerate(b, 1), key=lambda item: (item[1]["game_id"], item[1]["seq"]))
    assert report["copies"]["events"] == len(b)
    assert report["copies"]["examples"][0] == (
        f"game {event['game_id']} seq {event['seq']}: <stdin>:{line} (ingest {one.ingest_id}) "
        f"and <stdin>:{line} (ingest {two.ingest_id})"
    )
    assert runner.invoke(app, ["dataset", "repair", str(ds)]).exit_code == 0
    rows = duckdb.sql(
        "select ingest_id, count(*) from read_parquet($f) group by 1",
        params={"f": open_dataset(ds).duckdb_paths("events")},
    ).fetchall()
    assert dict(rows) == {one.ingest_id: len(b)}
    assert count(ds, "rejects") == 1 and runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0

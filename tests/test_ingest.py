"""Ingest: row counts, rejects, the line invariant, idempotence, incremental = one-shot."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.ingest_games import dump, games, interleave
from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.ingest import StoreError, ingest
from pipeline.rules import Ruleset
from pipeline.dataset.tables import DATASET_VERSION, TABLES

runner = CliRunner()


def table(dataset: Path, name: str, drop=("ingest_id",)) -> list[tuple]:
    """A table's rows, sorted, without the columns that name the ingest run: the files the
    current manifest lists (what every reader of the dataset reads), not a glob."""
    files = open_dataset(dataset).duckdb_paths(name)
    rel = duckdb.sql("select * from read_parquet($files)", params={"files": files})
    cols = [c for c in rel.columns if c not in drop]
    return sorted(rel.select(*cols).fetchall(), key=repr)


def count(dataset: Path, name: str) -> int:
    files = open_dataset(dataset).duckdb_paths(name)
    if not files:
        return 0
    return duckdb.sql("select count(*) from read_parquet($files)", params={"files": files}).fetchall()[0][0]


def everything(dataset: Path) -> dict[str, list[tuple]]:
    return {name: table(dataset, name) for name in TABLES if count(dataset, name)}


@pytest.fixture()
def logs(tmp_path: Path) -> dict:
    """Two files: 12 interleaved games, with bad lines, blanks and duplicates mixed in."""
    gs = games(12)
    lines = interleave(gs)
    first, second = lines[: len(lines) // 2], lines[len(lines) // 2 :]
    bad_json = "{not json"
    bad_event = {"game_id": "g1-000", "seq": 999, "type": "roll", "player": "ana", "dice": [7]}
    huge = '{"game_id": "x", "pad": "' + "a" * (10 * 1024 * 1024) + '"'  # 10 MB, not valid JSON
    # first[3] again: a repeated (game_id, seq) inside the logs is an event (stored) that
    # replay flags as seq_error, as audit does (COORDINATION.md decision 5)
    a = first[:10] + [bad_json, ""] + first[10:] + [first[3], "   "]
    b = second[:5] + [bad_event, b"\xff\xfe not utf-8", huge] + second[5:]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(dump(a))
    (tmp_path / "logs" / "b.jsonl.gz").write_bytes(gzip.compress(dump(b)))
    return {
        "dir": tmp_path / "logs",
        "games": gs,
        "events": len(lines) + 1,
        "rejects": 4,
        "blank": 2,
        "duplicates": 0,
        "lines": len(a) + len(b),
    }


def test_row_counts_match_the_generated_games(tmp_path, logs):
    out = tmp_path / "ds"
    summary = ingest([str(logs["dir"])], out)
    gs = logs["games"]
    assert summary.events == logs["events"] == count(out, "events")
    assert summary.rejects == logs["rejects"] == count(out, "rejects")
    assert summary.duplicates == logs["duplicates"]
    assert summary.blank_lines == logs["blank"]
    assert count(out, "turns") == sum(g.turns for g in gs)
    assert count(out, "rolls") == sum(g.rolls for g in gs)
    assert count(out, "decisions") == sum(g.keeps for g in gs)
    assert count(out, "games") == len(gs)
    assert count(out, "game_players") == 2 * len(gs)
    # every game lacks game_end (one warning each); each bad line is one error finding; the
    # repeated line is one seq_error
    codes = dict(
        duckdb.sql(f"select code, count(*) from read_parquet('{out}/findings/*.parquet') group by 1").fetchall()
    )
    assert codes == {"game_incomplete": 12, "bad_json": 3, "bad_event": 1, "seq_error": 1}
    assert summary.exit_code == 1


def test_the_line_invariant_holds(tmp_path, logs):
    s = ingest([str(logs["dir"])], tmp_path / "ds")
    assert s.lines == logs["lines"]
    assert s.lines == s.events + s.duplicates + s.rejects + s.blank_lines
    assert s.invariant_holds


def test_rejects_carry_file_line_and_cut_raw_text(tmp_path, logs):
    out = tmp_path / "ds"
    ingest([str(logs["dir"])], out)
    rows = duckdb.sql(
        f"select file, line, code, length(raw), raw_truncated, reason from read_parquet('{out}/rejects/*.parquet') "
        "order by file, line"
    ).fetchall()
    a, b = str(logs["dir"] / "a.jsonl"), str(logs["dir"] / "b.jsonl.gz")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (a, 11, "bad_json"),
        (b, 6, "bad_event"),
        (b, 7, "bad_json"),
        (b, 8, "bad_json"),
    ]
    assert rows[3][3] == 64 * 1024 and rows[3][4] is True  # the 10 MB line, cut at 64 KiB
    assert rows[0][4] is False
    assert "UTF-8" in rows[2][5]


def test_manifest_records_each_file_with_its_counts(tmp_path, logs):
    out = tmp_path / "ds"
    s = ingest([str(logs["dir"])], out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "farkle-logs" and manifest["dataset_version"] == DATASET_VERSION
    files = {f["path"]: f for f in manifest["files"]}
    a = files[str(logs["dir"] / "a.jsonl")]
    import hashlib

    assert a["sha256"] == hashlib.sha256((logs["dir"] / "a.jsonl").read_bytes()).hexdigest()
    assert a["size"] == (logs["dir"] / "a.jsonl").stat().st_size
    assert sum(f["lines"] for f in files.values()) == s.lines
    assert sum(f["rejects"] for f in files.values()) == s.rejects
    assert all(f["ingest_id"] == s.ingest_id for f in files.values())
    # the manifest lists exactly the files a reader's glob finds
    for name in TABLES:
        assert sorted(manifest["tables"][name]) == sorted(p.name for p in (out / name).glob("*.parquet"))


def test_reingest_adds_nothing(tmp_path, logs):
    out = tmp_path / "ds"
    ingest([str(logs["dir"])], out)
    before = everything(out)
    again = ingest([str(logs["dir"])], out)
    assert again.files_skipped == 2 and again.files == 0 and again.events == 0
    assert everything(out) == before
    assert again.exit_code == 0


def test_a_copy_under_another_name_is_new_lines_that_repeat_seqs(tmp_path, logs):
    """Decision 5: only the same (file, line) with the same content is a duplicate. A copy
    under another name is new lines: its events are stored and each is a seq_error (a
    repeated seq is not replayed), as `audit` of both files says; the games do not change."""
    out = tmp_path / "ds"
    ingest([str(logs["dir"])], out)
    before = everything(out)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(gzip.decompress((logs["dir"] / "b.jsonl.gz").read_bytes()) + b"\n")  # same events, new bytes
    s = ingest([str(copy)], out)
    assert s.duplicates == 0 and s.events == s.lines - s.rejects - s.blank_lines > 0
    after = everything(out)
    for name in ("turns", "rolls", "decisions", "game_players"):  # games.events counts the repeats too
        assert after[name] == before[name], name
    codes = duckdb.sql(
        f"select code, count(*) from read_parquet('{out}/findings/*.parquet') "
        f"where file = '{copy}' and code <> 'game_incomplete' group by 1"
    ).fetchall()
    assert dict(codes) == {"seq_error": s.events, "bad_json": 2, "bad_event": 1}
    assert count(out, "events") == logs["events"] + s.events


def test_split_games_incremental_equals_one_shot(tmp_path):
    gs = games(8, seed=3)
    lines = interleave(gs, seed=5)
    parts = [lines[:40], lines[40:100], lines[100:]]
    for i, part in enumerate(parts):
        (tmp_path / f"p{i}.jsonl").write_bytes(dump(part + (["oops"] if i == 1 else [])))
    names = [str(tmp_path / f"p{i}.jsonl") for i in range(3)]
    one = tmp_path / "one"
    ingest(names, one)
    inc = tmp_path / "inc"
    recomputed = []
    for name in names:
        recomputed.append(ingest([name], inc).games_recomputed)
    assert recomputed[0] == 0 and recomputed[1] > 0 and recomputed[2] > 0
    assert everything(inc) == everything(one)
    # one game_incomplete per game, not one per run
    assert count(inc, "findings") == count(one, "findings") == 8 + 1


def test_a_game_without_rules_keeps_the_ruleset_of_its_first_ingest(tmp_path):
    gs = games(1, seed=9)
    start = dict(gs[0].lines[0])
    del start["rules"]
    lines = [start] + gs[0].lines[1:]
    (tmp_path / "a.jsonl").write_bytes(dump(lines[:5]))
    (tmp_path / "b.jsonl").write_bytes(dump(lines[5:]))
    out = tmp_path / "ds"
    ingest([str(tmp_path / "a.jsonl")], out, Ruleset.builtin("playmonster"))
    ingest([str(tmp_path / "b.jsonl")], out, Ruleset.builtin("standard"))
    assert duckdb.sql(f"select ruleset_name from read_parquet('{out}/games/*.parquet')").fetchall() == [
        ("playmonster",)
    ]


def test_duckdb_and_polars_read_the_same_numbers(tmp_path, logs):
    out = tmp_path / "ds"
    ingest([str(logs["dir"])], out)
    for name in TABLES:
        pattern = f"{out}/{name}/**/*.parquet"
        d = duckdb.sql(f"select count(*) from read_parquet('{pattern}', hive_partitioning=true)").fetchall()[0][0]
        p = pl.scan_parquet(pattern, hive_partitioning=True).select(pl.len()).collect().item()
        assert d == p > 0, name
    q_duck = duckdb.sql(
        f"select player, count(*) as rolls, sum(case when scored then 0 else 1 end) as busts "
        f"from read_parquet('{out}/rolls/**/*.parquet', hive_partitioning=true) group by player order by player"
    ).fetchall()
    q_pol = (
        pl.scan_parquet(f"{out}/rolls/**/*.parquet", hive_partitioning=True)
        .group_by("player")
        .agg(pl.len().alias("rolls"), (~pl.col("scored")).sum().alias("busts"))
        .sort("player")
        .collect()
        .rows()
    )
    assert q_duck == [tuple(r) for r in q_pol]
    t_duck = duckdb.sql(
        f"select sum(corrected_points), avg(rolls) from read_parquet('{out}/turns/**/*.parquet')"
    ).fetchall()[0]
    t_pol = (
        pl.scan_parquet(f"{out}/turns/**/*.parquet")
        .select(pl.col("corrected_points").sum(), pl.col("rolls").mean())
        .collect()
        .row(0)
    )
    assert t_duck[0] == t_pol[0] and t_duck[1] == pytest.approx(t_pol[1])


def test_files_keep_the_contract_schema(tmp_path, logs):
    out = tmp_path / "ds"
    ingest([str(logs["dir"])], out)
    for name, schema in TABLES.items():
        for path in (out / name).glob("*.parquet"):
            assert pq.read_schema(path).remove_metadata() == schema, (name, path)


def test_bad_input_is_reported_and_never_crashes(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    good = games(2, seed=4)
    (d / "1-good.jsonl").write_bytes(dump(interleave(good)))
    (d / "2-empty.jsonl").write_bytes(b"")
    (d / "3-notes.txt").write_text("shopping list\nmilk\n")
    whole = gzip.compress(dump(games(3, seed=6)[0].lines))
    (d / "4-cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    (d / "5-notgzip.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage that is not deflate")
    (d / "sub").mkdir()
    notes = []
    s = ingest([str(d)], tmp_path / "ds", notice=notes.append)
    assert s.invariant_holds
    assert s.rejects == 0  # notes.txt is not named like a log: not read, and said so once
    assert [n for n in notes if "3-notes.txt" in n] == [
        f"{d}: 1 file not read, not named like logs (.jsonl, .ndjson, .json, or those + .gz): 3-notes.txt; "
        "name a file to read it anyway"
    ]
    assert f"{d / '2-empty.jsonl'}: no events: the file is empty" in notes
    problems = {Path(p["file"]).name: p for p in s.problems}
    assert set(problems) == {"4-cut.jsonl.gz", "5-notgzip.jsonl.gz"}
    assert problems["4-cut.jsonl.gz"]["line"] >= 1 and "truncated" in problems["4-cut.jsonl.gz"]["reason"]
    assert any("sub" in n for n in notes)
    assert s.exit_code == 1


def test_an_unrelated_directory_is_not_used_as_output(tmp_path, logs):
    out = tmp_path / "photos"
    out.mkdir()
    (out / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(StoreError):
        ingest([str(logs["dir"])], out)
    assert sorted(p.name for p in out.iterdir()) == ["cat.jpg"]


def test_cli_json_summary_and_exit_codes(tmp_path, logs):
    out = tmp_path / "ds"
    result = runner.invoke(app, ["ingest", str(logs["dir"]), "--out", str(out), "--format", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["rejects"] == 4 and data["invariant_holds"] is True
    assert data["findings_error"] == 5 and data["replay_errors"] == 1  # the repeat; game_incomplete are warnings
    for key in (
        "files",
        "lines",
        "events",
        "games",
        "rejects",
        "duplicates",
        "findings",
        "seconds",
        "events_per_second",
    ):
        assert key in data
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(dump(interleave(games(2, seed=8))))
    result = runner.invoke(app, ["ingest", str(clean), "--out", str(tmp_path / "ds2")])
    assert result.exit_code == 0, result.output  # warnings (game_incomplete) only
    assert "lines" in result.stdout and "time " in result.stdout
    assert "events/s" not in result.stdout  # two games: a rate would measure start-up, not work
    result = runner.invoke(app, ["ingest", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "ds3")])
    assert result.exit_code == 2 and not (tmp_path / "ds3").exists()


def test_stdin_is_read(tmp_path):
    data = dump(interleave(games(2, seed=11)))
    result = runner.invoke(app, ["ingest", "-", "--out", str(tmp_path / "ds"), "--format", "json"], input=data)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["events"] == data.count(b"\n")
    assert duckdb.sql(
        f"select distinct source_file from read_parquet('{tmp_path}/ds/events/*.parquet')"
    ).fetchall() == [("<stdin>",)]


def test_two_processes_give_the_same_dataset_as_one(tmp_path):
    gs = games(40, seed=13)
    lines = interleave(gs, seed=9)
    tricky = [
        # game_id written with an escape: must go where the game's other lines go
        '{"game_id":"g13-00\\u0031","seq":900,"type":"roll","player":"ana","dice":[1,2,3,4,5,6]}',
        # a nested "game_id" and no top-level one: a bad line
        '{"meta":{"game_id":"g13-002"},"seq":1,"type":"roll","player":"ana","dice":[1]}',
        # the key twice: the parser decides which one counts
        '{"game_id":"zzz","game_id":"g13-003","seq":901,"type":"roll","player":"bo","dice":[2,2,3,3,4,6]}',
        # the key escaped, and a nested literal "game_id" naming a game of the other process
        '{"game\\u005fid":"g13-004","seq":903,"type":"roll","player":"ana","dice":[1,2,3,4,5,6],'
        '"meta":{"game_id":"g13-008"}}',
        "plain garbage",
    ]
    half = len(lines) // 2
    (tmp_path / "a.jsonl").write_bytes(dump(lines[:half] + tricky[:2]))
    (tmp_path / "b.jsonl").write_bytes(dump(lines[half:] + tricky[2:] + [lines[5]]))
    files = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    one = ingest(files, tmp_path / "one", workers=1)
    two = ingest(files, tmp_path / "two", workers=2)
    assert everything(tmp_path / "two") == everything(tmp_path / "one")
    assert one.to_dict() | {"seconds": 0, "events_per_second": 0, "ingest_id": "", "dataset": ""} == two.to_dict() | {
        "seconds": 0,
        "events_per_second": 0,
        "ingest_id": "",
        "dataset": "",
    }
    # and incrementally, file by file, with two processes
    for f in files:
        ingest([f], tmp_path / "inc", workers=2)
    assert everything(tmp_path / "inc") == everything(tmp_path / "one")


def test_a_log_that_grew_adds_only_its_new_lines(tmp_path):
    lines = interleave(games(6, seed=17), seed=1)
    log = tmp_path / "live.jsonl"
    log.write_bytes(dump(lines[:70]))
    first = ingest([str(log)], tmp_path / "ds")
    log.write_bytes(dump(lines))  # the same file, appended to
    second = ingest([str(log)], tmp_path / "ds")
    assert second.duplicates == first.events == 70
    assert second.events == len(lines) - 70
    full = tmp_path / "full.jsonl"
    full.write_bytes(dump(lines))
    ingest([str(full)], tmp_path / "one")
    # equal to one ingest of the grown file, except for the file name it was read under
    drop = ("ingest_id", "source_file", "file")
    for name in ("events", "turns", "rolls", "decisions", "games", "game_players", "findings"):
        assert table(tmp_path / "ds", name, drop) == table(tmp_path / "one", name, drop), name


def _mixed_log(seed: int, n: int = 5) -> list[str]:
    """Lines with blanks, over-long lines (over a 300-byte cap) and whitespace-only lines."""
    lines = interleave(games(n, seed=seed), seed=4)
    mixed = []
    for i, line in enumerate(lines):
        mixed.append(line)
        if i % 17 == 3:
            mixed.append("")
        if i % 29 == 5:
            mixed.append("{broken " + "x" * (300 + i))
        if i % 31 == 7:
            mixed.append("   ")
    return mixed


def test_blocks_sent_to_workers_are_read_back_from_the_file(tmp_path, monkeypatch):
    """A plain file's blocks travel to worker processes as (offset, size) and are read back
    there: the bytes are the ones the splitter cut, past a BOM, skipped over-long lines and a
    last line without a newline; the dataset equals one made in one process."""
    from pipeline.reader.split import split_source
    from pipeline.reader.inputs import resolve

    from pipeline.reader import lines as reader_lines

    monkeypatch.setattr(reader_lines, "CHUNK", 4096)  # many chunks, so many blocks
    data = b"\xef\xbb\xbf" + dump(_mixed_log(29, 40)).rstrip(b"\n")
    (tmp_path / "a.jsonl").write_bytes(data)
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(b"\xef\xbb\xbf" + dump(_mixed_log(30, 40)).rstrip(b"\n")))
    files = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl.gz")]
    plain, packed = resolve(files).sources
    blocks = list(split_source(plain, 0, block_bytes=1, max_line=300))
    assert len(blocks) > 20
    for block in blocks:
        away = block.detached()
        assert away.data == b"" and away.attached() == block
    assert all(b.detached() is b for b in split_source(packed, 1, block_bytes=1, max_line=300))  # gzip: sent whole

    one = ingest(files, tmp_path / "one", workers=1, max_line_bytes=300)
    two = ingest(files, tmp_path / "two", workers=2, max_line_bytes=300, block_bytes=1)
    assert everything(tmp_path / "two") == everything(tmp_path / "one")
    assert (two.lines, two.events, two.rejects, two.blank_lines) == (
        one.lines,
        one.events,
        one.rejects,
        one.blank_lines,
    )


def test_a_block_of_only_an_over_long_last_line_travels_whole(tmp_path):
    """Found by the `block` fuzz target: a file ending in a line over the cap gives a last
    block with no bytes, only that line's reject; it must reach a worker as it is."""
    from pipeline.reader.split import split_source
    from pipeline.reader.inputs import resolve

    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(_mixed_log(31))[:2000] + b"\n" + b"x" * 500)
    (source,) = resolve([str(log)]).sources
    blocks = list(split_source(source, 0, block_bytes=1, max_line=300))
    assert blocks[-1].data == b"" and len(blocks[-1].long_lines) == 1
    assert [b.detached().attached() for b in blocks] == blocks
    one = ingest([str(log)], tmp_path / "one", workers=1, max_line_bytes=300)
    two = ingest([str(log)], tmp_path / "two", workers=2, max_line_bytes=300, block_bytes=1)
    assert everything(tmp_path / "two") == everything(tmp_path / "one") and two.rejects == one.rejects


def test_a_file_changed_under_a_detached_block_stops_the_ingest(tmp_path):
    from pipeline.reader.split import split_source
    from pipeline.reader.inputs import InputError, resolve

    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(_mixed_log(31)))
    (source,) = resolve([str(log)]).sources
    away = [b.detached() for b in split_source(source, 0, block_bytes=1, max_line=300)]
    log.write_bytes(log.read_bytes().replace(b"\n", b" \n", 3))  # lines move
    with pytest.raises(InputError, match="changed while it was being ingested"):
        for block in away:
            block.attached()


def test_tiny_blocks_give_the_same_dataset_as_one_block(tmp_path):
    """The split stage cuts inputs into blocks at line boundaries: line numbers, blank lines,
    over-long lines and a last line without a newline come out the same however small the
    blocks are (each block's lines are parsed by whichever worker takes it)."""
    mixed = _mixed_log(23)  # over-long lines: over the cap of 300 below, rejected unread
    data = dump(mixed).rstrip(b"\n")  # no final newline
    (tmp_path / "a.jsonl").write_bytes(data)
    # the gzip file holds other games (the same content gzipped would be skipped as stored already)
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(dump(_mixed_log(24)).rstrip(b"\n")))
    files = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl.gz")]
    one = ingest(files, tmp_path / "one", max_line_bytes=300)
    tiny = ingest(files, tmp_path / "tiny", max_line_bytes=300, block_bytes=1)  # one block per ~301 bytes
    assert everything(tmp_path / "tiny") == everything(tmp_path / "one")
    n = len(mixed) + len(_mixed_log(24))
    assert one.lines == tiny.lines == n and one.invariant_holds and tiny.invariant_holds
    long = [i + 1 for i, line in enumerate(mixed) if isinstance(line, str) and line.startswith("{broken")]
    rows = duckdb.sql(
        f"select line, reason from read_parquet('{tmp_path}/tiny/rejects/*.parquet') "
        f"where file = '{files[0]}' order by line"
    ).fetchall()
    assert [r[0] for r in rows] == long
    assert all("over the limit of 300 bytes" in r[1] for r in rows)


def test_a_cut_last_line_completed_later_replaces_its_reject(tmp_path):
    lines = interleave(games(3, seed=31), seed=3)
    whole = dump(lines[:12])
    cut = dump(lines[:10]) + json.dumps(lines[10]).encode()[:20]  # line 11 cut mid-way, no newline
    log = tmp_path / "live.jsonl"
    log.write_bytes(cut)
    first = ingest([str(log)], tmp_path / "ds")
    assert (first.events, first.rejects) == (10, 1)
    log.write_bytes(whole)
    second = ingest([str(log)], tmp_path / "ds")
    assert (second.duplicates, second.events, second.rejects, second.superseded) == (10, 2, 0, 1)
    assert count(tmp_path / "ds", "rejects") == 0
    one = tmp_path / "one.jsonl"
    one.write_bytes(whole)
    ingest([str(one)], tmp_path / "one")
    drop = ("ingest_id", "source_file", "file")
    for name in ("events", "turns", "rolls", "decisions", "games", "game_players", "findings"):
        assert table(tmp_path / "ds", name, drop) == table(tmp_path / "one", name, drop), name


def _changed_at_a_stored_line(log: Path, lines: list) -> None:
    changed = dict(lines[7], seq=lines[7]["seq"] + 1000)  # line 8 is another valid event now
    log.write_bytes(dump(lines[:7] + [changed] + lines[8:]))


def _cut_short(log: Path, lines: list) -> None:
    log.write_bytes(dump(lines[:-3]))  # its last three stored lines are gone


def _cut_line_completed(log: Path, lines: list) -> None:
    log.write_bytes(dump(lines))  # the stored reject of the cut last line is superseded


@pytest.mark.parametrize("change", [_changed_at_a_stored_line, _cut_short, _cut_line_completed])
def test_dataset_check_passes_after_superseded_lines(tmp_path, change):
    """Superseded rows leave the events and rejects tables; the manifest says how many, so
    `dataset check`'s row counts still add up, and each ingest's line invariant still holds."""
    from pipeline.dataset.verify import check_dataset

    lines = interleave(games(3, seed=43), seed=8)
    log = tmp_path / "a.jsonl"
    if change is _cut_line_completed:
        log.write_bytes(dump(lines[:-1]) + json.dumps(lines[-1]).encode()[:20])
    else:
        log.write_bytes(dump(lines))
    ds = tmp_path / "ds"
    first = ingest([str(log)], ds)
    change(log, lines)
    second = ingest([str(log)], ds)
    assert second.superseded > 0 and first.invariant_holds and second.invariant_holds
    report = check_dataset(ds)
    assert report.healthy, report.problems
    assert report.rows["events"] == count(ds, "events") and report.rows["rejects"] == count(ds, "rejects")
    result = runner.invoke(app, ["dataset", "check", str(ds)])
    assert result.exit_code == 0, result.output
    manifest = open_dataset(ds).manifest
    entries = manifest["files"]
    assert sum(f["events"] - f["superseded_events"] for f in entries) == count(ds, "events")
    assert sum(f["rejects"] - f["superseded_rejects"] for f in entries) == count(ds, "rejects")
    assert entries[0]["superseded_events"] == entries[0]["superseded_rejects"] == 0
    assert entries[1]["superseded_events"] + entries[1]["superseded_rejects"] == second.superseded
    for f in entries:  # each reading's own lines still add up
        assert f["lines"] == f["events"] + f["duplicates"] + f["rejects"] + f["blank_lines"]
    assert manifest["ingests"][-1]["counts"]["superseded"] == second.superseded
    one = tmp_path / "one"
    ingest([str(log)], one)
    assert everything(ds) == everything(one)


def test_a_file_rewritten_shorter_leaves_only_its_new_lines(tmp_path):
    old = interleave(games(2, seed=37), seed=5)
    new = interleave(games(2, seed=41), seed=6)[:15]
    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(old))
    ingest([str(log)], tmp_path / "ds")
    log.write_bytes(dump(new))
    s = ingest([str(log)], tmp_path / "ds")
    assert s.superseded == len(old) and s.events == len(new) and s.duplicates == 0
    ingest([str(log)], tmp_path / "one", workers=1)
    assert everything(tmp_path / "ds") == everything(tmp_path / "one")


def test_spilled_files_past_the_open_limit_are_read_as_well(tmp_path, monkeypatch):
    """The replay stage keeps at most MAX_OPEN spilled files open (a huge input has more
    blocks than a process may open files); the others are opened per bucket, same rows."""
    import pyarrow as pa

    from pipeline.ingest import route

    paths = []
    for i in range(5):
        t = pa.table({"game_id": [f"g{i}-{k}" for k in range(6)], "source_line": list(range(6))})
        path = tmp_path / f"block-{i}.arrow"
        route.write_buckets(t, [2, 1, 3], path)
        paths.append(path)
    everything_open = [route.SpillFiles().gather(paths, b) for b in range(3)]
    monkeypatch.setattr(route.SpillFiles, "MAX_OPEN", 2)
    capped = route.SpillFiles()
    assert [capped.gather(paths, b) for b in range(3)] == everything_open
    assert len(capped._readers) == 2
    assert everything_open[2].column("source_line").to_pylist() == [3, 4, 5] * 5

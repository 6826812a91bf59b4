"""`farkle-logs stats` through Typer's CliRunner, and `open_dataset`'s refusals.

Uses the hand-made dataset of test_stats.py; the figures checked here are worked out there.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import math

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import DatasetDamaged, DatasetError, open_dataset
from pipeline.stats import DEFAULT_SECTIONS, SECTIONS
from pipeline.stats.fixtures import write_dataset, write_manifest
from pipeline.dataset.tables import DATASET_VERSION
from tests.test_stats import tiny_tables

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["stats", *map(str, args)])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("cli") / "ds", tiny_tables())


def test_json_has_every_table_and_the_filters(tiny):
    result = run(tiny, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    # every table but the opt-in decisions-quality ones (asked for by --section)
    assert list(payload["tables"]) == [t for sec in DEFAULT_SECTIONS for t in SECTIONS[sec]]
    assert "decision_quality" not in payload["tables"]
    assert payload["filters"] == {"player": None, "game": None, "rules": None, "since": None, "until": None}
    six = [r for r in payload["tables"]["bust_rate_by_dice_left"] if r["scope"] == "overall" and r["dice"] == 6]
    assert (six[0]["rolls"], six[0]["farkles"]) == (10, 3)


def _close(a, b) -> bool:
    """Equal, floats to 1e-12 relative: DuckDB's parallel sums may add in another order."""
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def test_json_written_a_chunk_of_rows_at_a_time_is_the_whole_tables(tiny, monkeypatch):
    """Rows are encoded a chunk at a time (memory stays flat on large datasets): whatever the
    chunk size, the output is one valid JSON document with every row, in order."""
    from pipeline.cli import stats_cmd
    from pipeline.stats import compute

    whole = compute(tiny)
    for chunk in (1, 2, 10_000):
        monkeypatch.setattr(stats_cmd, "JSON_ROWS_PER_CHUNK", chunk)
        result = run(tiny, "--format", "json")
        assert result.exit_code == 0, result.output
        assert result.stdout.count("\n") == 1
        payload = json.loads(result.stdout, parse_constant=pytest.fail)  # strict: no NaN
        assert list(payload)[:2] == ["dataset", "filters"]
        for name, rows in payload["tables"].items():
            assert _close(rows, json.loads(json.dumps(whole[name].to_pylist()))), (chunk, name)
    # a table without rows is an empty list (a filter matching no game exits 2 before this)
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buffer)
    stats_cmd._write_json({"dataset": "x"}, {"bust_rate_by_dice_left": whole["bust_rate_by_dice_left"].slice(0, 0)})
    assert json.loads(buffer.getvalue())["tables"] == {"bust_rate_by_dice_left": []}


def test_large_tables_are_written_by_polars_as_msgspec_writes_them(tiny, monkeypatch):
    """From POLARS_JSON_ROWS rows a plain table is encoded by polars: the same document as
    msgspec's, byte for byte on the reports (whatever the chunk size), value for value on
    hostile cells (polars writes 1e+16 where msgspec writes 1e16); a column polars would write
    otherwise (float32, timestamp, list) keeps msgspec."""
    import datetime as dt
    import random
    import struct

    import msgspec
    import pyarrow as pa

    from pipeline.cli import stats_cmd

    from pipeline.stats import compute

    tables = compute(tiny, sections=["decisions-quality", *DEFAULT_SECTIONS])  # once: sums may differ in the last bit
    written = []
    for rows, chunk in ((10**12, 10), (0, 3)):  # by msgspec, then by polars in chunks of 3 rows
        monkeypatch.setattr(stats_cmd, "POLARS_JSON_ROWS", rows)
        monkeypatch.setattr(stats_cmd, "POLARS_ROWS_PER_CHUNK", chunk)
        buffer = io.StringIO()
        monkeypatch.setattr(sys, "stdout", buffer)
        stats_cmd._write_json({"dataset": "x"}, tables)
        written.append(buffer.getvalue())
    monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    assert written[0] == written[1]
    assert json.loads(written[1])["tables"]["decision_quality"]  # rows were written
    assert any(stats_cmd._polars_encodes(t) for t in tables.values())

    rng = random.Random(1)
    doubles = [float("nan"), float("inf"), -float("inf"), -0.0, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 0.1]
    doubles += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    n = len(doubles)
    faces = [0, 1, 9, 10, 13, 31, 34, 92, 127, 0x2028, 0xE9, 0x1F600, 0xFFFD]
    hostile = pa.table(
        {
            "double": doubles,
            "int": [rng.getrandbits(63) * rng.choice((1, -1)) for _ in range(n)],
            "text": ["".join(chr(rng.choice(faces)) for _ in range(4)) if i % 7 else None for i in range(n)],
            "flag": [i % 3 == 0 for i in range(n)],
            "nothing": pa.nulls(n),
            "unsigned": pa.array([2**64 - 1] * n, pa.uint64()),
        }
    )
    assert stats_cmd._polars_encodes(hostile)
    encoder = msgspec.json.Encoder(enc_hook=str)
    expected = json.loads(
        b"[" + b",".join(stats_cmd._msgspec_rows(hostile, encoder)) + b"]", parse_constant=pytest.fail
    )
    got = json.loads(b"[" + b",".join(stats_cmd._polars_rows(hostile)) + b"]", parse_constant=pytest.fail)
    assert len(got) == n and got[0]["double"] is None and got[1]["double"] is None
    assert json.dumps(got) == json.dumps(expected)  # -0.0 and every double to the last bit
    for other in (pa.array([0.5] * n, pa.float32()), pa.array([dt.datetime(2026, 1, 1)] * n), pa.array([[1]] * n)):
        assert not stats_cmd._polars_encodes(hostile.append_column("other", other))
    monkeypatch.setattr(stats_cmd, "POLARS_JSON_ROWS", n + 1)
    assert not stats_cmd._polars_encodes(hostile)


def test_duckdb_memory_setting_and_its_spill_directory(tiny, tmp_path, monkeypatch):
    """FARKLE_LOGS_DUCKDB_MEMORY sets DuckDB's limit; a value DuckDB cannot read is the
    user's error (exit 2, one line), and no run leaves its spill directory behind."""
    import tempfile

    from pipeline.stats import session

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("FARKLE_LOGS_DUCKDB_MEMORY", "300MB")
    with session(tiny) as con:
        limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
        spill = con.execute("select current_setting('temp_directory')").fetchone()[0]
        assert limit.replace(" ", "").lower() in ("300.0mb", "286.1mib") and spill.startswith(str(tmp_path))
    assert run(tiny, "--section", "bust").exit_code == 0
    monkeypatch.setenv("FARKLE_LOGS_DUCKDB_MEMORY", "lots")
    from pipeline.cli.entry import _run

    monkeypatch.setattr("sys.argv", ["farkle-logs", "stats", str(tiny), "--section", "bust"])
    assert _run() == 2
    assert not list(tmp_path.glob("farkle-logs-duckdb-*"))


def _rounded(table) -> list[tuple]:
    return [tuple(round(v, 12) if isinstance(v, float) else v for v in row.values()) for row in table.to_pylist()]


def test_memory_released_before_a_python_model_keeps_the_limit(tiny, monkeypatch):
    """release_memory (called before a Python model works) lowers DuckDB's limit to what is
    in use and sets it back: the limit after is the one before, the rows the same."""
    from pipeline.stats import run as run_model
    from pipeline.stats import session
    from pipeline.stats.runner import release_memory

    monkeypatch.setenv("FARKLE_LOGS_DUCKDB_MEMORY", "300MB")
    with session(tiny) as con:
        before = run_model(con, "rpt_bust_rate_by_dice_left")
        seen = []
        real_execute = con.execute

        class Spy:  # the connection's execute, with the limits set recorded
            def __getattr__(self, name):
                return getattr(con, name)

            def execute(self, sql, *args):
                if sql.startswith("set memory_limit"):
                    seen.append(sql)
                return real_execute(sql, *args)

        limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
        release_memory(Spy())
        assert len(seen) == 2 and seen[1] == "set memory_limit = '300MB'", seen
        assert con.execute("select current_setting('memory_limit')").fetchone()[0] == limit
        after = run_model(con, "rpt_bust_rate_by_dice_left")
        # the same rows; sums and rates to rounding (DuckDB's parallel sums add in any order)
        assert after.schema == before.schema
        assert _rounded(after) == _rounded(before)
        con.execute("set memory_limit = '200MB'")  # changed since connect: left alone
        limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
        seen.clear()
        release_memory(Spy())
        assert not seen and con.execute("select current_setting('memory_limit')").fetchone()[0] == limit


def test_json_with_filters(tiny):
    result = run(
        tiny,
        "-f",
        "json",
        "--player",
        "cy",
        "--since",
        "2026-02-01",
        "--until",
        "2026-02-28",
        "--rules",
        '{"three_pairs": null}',
        "--section",
        "turns",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload["tables"]) == ["turn_value", "turn_value_buckets"]
    assert payload["filters"]["player"] == "cy" and payload["filters"]["rules"]["three_pairs"] is None
    overall = [r for r in payload["tables"]["turn_value"] if r["scope"] == "overall"][0]
    assert (overall["turns"], overall["points"], overall["median_points"]) == (2, 300, 150)


def test_csv_is_one_table(tiny):
    result = run(tiny, "--format", "csv", "--section", "bust")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    overall = {int(r["dice"]): (int(r["rolls"]), int(r["farkles"])) for r in rows if r["scope"] == "overall"}
    assert overall == {4: (1, 0), 5: (2, 1), 6: (10, 3)}


def test_csv_of_one_table_by_name(tiny):
    result = run(tiny, "-f", "csv", "-s", "player_findings")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == '"scope","player","code","findings"'


def test_csv_of_several_tables_is_a_usage_error(tiny):
    result = run(tiny, "--format", "csv", "--section", "turns")
    assert result.exit_code == 2
    assert "csv holds one table" in result.stderr


def test_text_tables(tiny):
    result = run(tiny)
    assert result.exit_code == 0, result.output
    for title in ("Bust rate by dice left", "Points per turn", "Bank vs roll", "Players", "Dice faces"):
        assert title in result.stdout
    assert "banked" in result.stdout


def test_missing_dataset_is_bad_usage(tmp_path):
    result = run(tmp_path / "nope")
    assert result.exit_code == 2  # README: a missing dataset or file is bad usage
    assert "no such dataset" in result.stderr


def test_foreign_directory_is_bad_usage(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    result = run(tmp_path)
    assert result.exit_code == 2
    assert "not a farkle-logs dataset" in result.stderr


def test_unknown_section_and_bad_dates_are_usage_errors(tiny):
    assert run(tiny, "--section", "nope").exit_code == 2
    assert run(tiny, "--since", "yesterday").exit_code == 2
    result = run(tiny, "--since", "2026-03-01", "--until", "2026-02-01")
    assert result.exit_code == 2 and "after" in result.stderr
    assert run(tiny, "--rules", "nonsense").exit_code == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (("--player", "nobody"), "no player 'nobody' in dataset {ds}\n"),
        (("--player", "anna"), "no player 'anna' in dataset {ds} (did you mean ana?)\n"),
        (("--game", "g11"), "no game 'g11' in dataset {ds} (did you mean g1?)\n"),
        (("--game", "G2"), "no game 'G2' in dataset {ds} (did you mean g2?)\n"),
        (
            ("--rules", "playmonster"),
            "no game in dataset {ds} was played under the ruleset 'playmonster' "
            "(knob for knob); its games were played under: custom (base standard), standard\n",
        ),
        (("--player", "bo", "--game", "g2"), "no game in dataset {ds} matches --game g2 with --player bo together\n"),
        (
            ("--since", "2027-01-01"),
            "no game in dataset {ds} matches --since 2027-01-01; its games started from "
            "2026-01-10 to 2026-02-05 (UTC)\n",
        ),
    ],
)
def test_a_filter_that_matches_no_game_is_bad_usage_and_suggests(tiny, args, message):
    for fmt in ("text", "json"):
        result = run(tiny, *args, "-f", fmt)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert " ".join(result.stderr.split()) == " ".join(("error: " + message.format(ds=tiny)).split())


# ---- open_dataset ----------------------------------------------------------------------------
def test_open_dataset_refuses_what_is_not_a_dataset(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset"):
        open_dataset(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatasetError, match="not a dataset directory"):
        open_dataset(tmp_path / "file")
    with pytest.raises(DatasetError, match="no _current.json"):
        open_dataset(tmp_path)
    pointer = tmp_path / "_current.json"
    pointer.write_text("{not json")
    with pytest.raises(DatasetDamaged, match="_current.json is unreadable.*dataset repair"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "something-else", "dataset_version": 2}))
    with pytest.raises(DatasetError, match="format 'something-else'"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION + 1}))
    with pytest.raises(DatasetError, match="newer farkle-logs"):
        open_dataset(tmp_path)
    pointer.write_text(
        json.dumps(
            {
                "format": "farkle-logs",
                "dataset_version": DATASET_VERSION,
                "snapshot": 1,
                "manifest": "../elsewhere/manifest.json",
            }
        )
    )
    with pytest.raises(DatasetDamaged, match="no manifest inside the dataset"):
        open_dataset(tmp_path)
    pointer.write_text(
        json.dumps(
            {"format": "farkle-logs", "dataset_version": DATASET_VERSION, "snapshot": 1, "manifest": "manifest.json"}
        )
    )
    with pytest.raises(DatasetDamaged, match="manifest.json .* is missing"):
        open_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "format": "farkle-logs",
                "dataset_version": DATASET_VERSION,
                "snapshot": 1,
                "tables": {"events": ["../../etc/passwd"]},
            }
        )
    )
    with pytest.raises(DatasetDamaged, match="not a list of file paths"):
        open_dataset(tmp_path)


def test_open_dataset_reads_the_files_the_manifest_lists(tmp_path):
    write_dataset(tmp_path, tiny_tables())
    (tmp_path / "rolls" / "stray.parquet").write_bytes(b"not parquet")  # not listed: never read
    ds = open_dataset(tmp_path)
    assert ds.table_files("rolls") == [tmp_path / "rolls" / "part-0.parquet"]
    assert run(tmp_path, "--section", "bust").exit_code == 0
    (tmp_path / "rolls" / "part-0.parquet").unlink()
    with pytest.raises(DatasetDamaged, match=r"1 file\(s\) its manifest lists are missing \(rolls/part-0.parquet\)"):
        open_dataset(tmp_path)


def test_open_dataset_accepts_a_plain_directory(tmp_path):
    write_manifest(tmp_path)
    ds = open_dataset(tmp_path)
    assert ds.version == DATASET_VERSION and not ds.has_files("rolls")


def test_sections_as_users_type_them(tiny):
    """`--section bust,players` is two sections, `Bust` is `bust`, `decisions_quality` is
    `decisions-quality`; a near miss gets a suggestion."""
    both = json.loads(run(tiny, "--section", "Bust,players", "-f", "json").stdout)["tables"]
    assert set(both) == {"bust_rate_by_dice_left", "player_summary", "player_findings"}
    assert set(json.loads(run(tiny, "--section", "decisions_quality", "-f", "json").stdout)["tables"]) == {
        "decision_quality",
        "decision_loss_by_state",
        "blunders",
        "race_quality",
        "race_costliest",
    }
    typo = run(tiny, "--section", "blunder")
    assert typo.exit_code == 2 and typo.stderr.startswith("error: unknown section 'blunder' (did you mean blunders?)")


def test_stats_does_not_import_pandas(tiny, tmp_path):
    """pyarrow imports pandas (0.2 s of a run) the first time a table is built from Python
    lists, only to ask whether a list is a pandas object: a `stats` run over every section
    builds none (caches warm), so pandas stays unloaded."""
    import os
    import subprocess

    from pipeline.stats import ALL_SECTIONS  # the league sections too

    sections = [arg for section in ALL_SECTIONS for arg in ("--section", section)]
    probe = (  # asked at exit: stats ends by os._exit once its output is out, its atexit functions run
        "import atexit, sys\n"
        "atexit.register(lambda: print('pandas' in sys.modules, file=sys.stderr))\n"
        "from pipeline.cli.entry import main\n"
        f"sys.argv = ['farkle-logs', 'stats', {str(tiny)!r}, '--format', 'json', *{sections!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "FARKLE_LOGS_CACHE_DIR": str(tmp_path / "cache")}
    for _run_no in (1, 2):  # the first run fills the cache (solving may use pandas), the second reads it
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"

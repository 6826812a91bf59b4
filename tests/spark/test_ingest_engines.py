"""`ingest` and `audit` give the same results on both engines (issue 14's "done when").

The logs (tests/spark/logs.py, plus a gzip file cut mid-stream) hold several rulesets,
games interleaved and split across files, injected rule errors and bad lines. Each engine
ingests them into its own dataset, then a second run adds a file that grew (its old lines
are duplicates, one line changed is superseded) and a new file continuing stored games.
After each run both datasets hold the same rows in every table (ingest_id aside), the
summaries agree, and the `stats` output over either dataset is the same. The Spark audit
finds what the local audit finds and what the Spark-made dataset stores.
"""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.dataset import tables
from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.engines.spark.ingest import ingest as spark_ingest
from pipeline.ingest.run import ingest
from tests.spark.compare import assert_same_rows, same_value
from tests.spark.logs import make_logs

BOOKKEEPING = ("dataset", "ingest_id", "seconds", "events_per_second")


def read_table(dataset, table: str) -> pa.Table:
    files = open_dataset(dataset).table_files(table)
    schema = tables.TABLES[table]
    data = pa.concat_tables([pq.read_table(f, schema=schema) for f in files]) if files else schema.empty_table()
    return data.drop_columns(["ingest_id"]) if "ingest_id" in data.column_names else data


def summary(s) -> dict:
    return {k: v for k, v in s.to_dict().items() if k not in BOOKKEEPING}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("engines")
    files = make_logs(root / "logs")
    whole = gzip.compress(files[0].read_bytes())
    cut = root / "logs" / "f-cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])  # the stream breaks: a file problem
    return root, [str(p) for p in files] + [str(cut)]


@pytest.fixture(scope="module")
def runs(spark, logs):
    """Both engines, two runs each: (first summaries, second summaries, datasets)."""
    root, files = logs
    grown = root / "logs" / "g-grows.jsonl"
    first_half = root / "logs" / "a-first-half.jsonl"
    lines = first_half.read_bytes().split(b"\n")
    grown.write_bytes(b"\n".join(lines[:40]) + b"\n")
    first = [*files, str(grown)]
    datasets = {"local": root / "local", "spark": root / "spark"}
    # Spark's first run reads the plain files in byte ranges of 4 KiB (split across tasks,
    # lines cut at range ends), the gzip files whole (in blocks of 4 KiB)
    one = {
        "local": ingest(first, datasets["local"]),
        "spark": spark_ingest(spark, first, datasets["spark"], block_bytes=4096, range_bytes=4096),
    }
    one_tables = {name: {t: read_table(ds, t) for t in tables.TABLES} for name, ds in datasets.items()}
    one_tables["checked"] = {
        name: CliRunner().invoke(app, ["dataset", "check", str(ds)]) for name, ds in datasets.items()
    }
    # run 2: the file grew and one of its stored lines changed; a new file continues games
    changed = list(lines[:60])
    changed[35] = b'{"game_id": "late", "seq": 1, "type": "roll", "player": "x", "dice": [1]}'
    grown.write_bytes(b"\n".join(changed) + b"\n")
    later = root / "logs" / "h-later.jsonl"
    later.write_bytes(b"\n".join(lines[60:]) + b"\n")
    second = [str(grown), str(later), files[1]]  # files[1]: same content, skipped
    two = {"local": ingest(second, datasets["local"]), "spark": spark_ingest(spark, second, datasets["spark"])}
    return one, one_tables, two, datasets


def test_first_run_summaries_agree(runs):
    one, _, _, _ = runs
    assert summary(one["spark"]) == summary(one["local"])
    s = one["local"]
    assert s.rejects > 0 and s.findings_error > s.rejects and s.file_problems == 1 and s.invariant_holds


@pytest.mark.parametrize("table", list(tables.TABLES))
def test_first_run_tables_agree(runs, table):
    _, one_tables, _, _ = runs
    local, spark = one_tables["local"][table], one_tables["spark"][table]
    assert local.num_rows > 0
    assert_same_rows(local, spark, ordered=False, what=table)


def test_second_run_summaries_agree(runs):
    _, _, two, _ = runs
    assert summary(two["spark"]) == summary(two["local"])
    s = two["local"]
    assert s.duplicates > 0 and s.superseded == 1 and s.games_recomputed > 0 and s.files_skipped == 1


@pytest.mark.parametrize("table", list(tables.TABLES))
def test_second_run_tables_agree(runs, table):
    _, _, _, datasets = runs
    assert_same_rows(
        read_table(datasets["local"], table), read_table(datasets["spark"], table), ordered=False, what=table
    )


def test_dataset_check_passes_after_the_first_run(runs):
    """No problem; the copies (g-grows.jsonl repeats the first lines of a-first-half.jsonl,
    so each of those events is stored from two files) are the same on both engines."""
    _, one_tables, _, datasets = runs
    for name, out in one_tables["checked"].items():
        assert out.exit_code == 1 and "problems (" not in out.stdout and "DAMAGED" not in out.stdout, (name, out.output)
    copies = {
        name: [line for line in out.stdout.replace(str(datasets[name]), "DS").splitlines() if "cop" in line]
        for name, out in one_tables["checked"].items()
    }
    assert copies["local"] and copies["spark"] == copies["local"]


def test_dataset_check_says_the_same_of_both_datasets(runs):
    """Rows per table and problems alike (file counts differ: Spark writes one file per
    task). The local engine's second run leaves a manifest count that `dataset check`
    flags (a superseded line, reported to the coordinator): the Spark one must match it."""
    _, _, _, datasets = runs
    out = {name: CliRunner().invoke(app, ["dataset", "check", str(ds)]) for name, ds in datasets.items()}
    assert out["spark"].exit_code == out["local"].exit_code

    def rows_and_problems(name: str) -> list[str]:
        text = out[name].stdout.replace(str(datasets[name]), "DS")
        return [
            line.split()[0] + " " + line.split()[-1] if line[:1].isalpha() and len(line.split()) == 3 else line
            for line in text.splitlines()
        ]

    assert rows_and_problems("spark") == rows_and_problems("local")


def test_stats_output_is_the_same_over_either_dataset(runs):
    """Text output identical; JSON within 1e-9 (DuckDB sums doubles in the order it reads
    the files, and the engines name their files differently)."""
    _, _, _, datasets = runs
    runner = CliRunner()
    text = {name: runner.invoke(app, ["stats", str(ds)]) for name, ds in datasets.items()}
    assert text["local"].exit_code == text["spark"].exit_code == 0, text["spark"].output
    assert text["spark"].stdout.replace(str(datasets["spark"]), "DS") == text["local"].stdout.replace(
        str(datasets["local"]), "DS"
    )
    out = {name: runner.invoke(app, ["stats", str(ds), "-f", "json"]) for name, ds in datasets.items()}
    local, spark = json.loads(out["local"].stdout)["tables"], json.loads(out["spark"].stdout)["tables"]
    assert local.keys() == spark.keys()
    for name in local:
        assert len(local[name]) == len(spark[name]), name
        for want, got in zip(local[name], spark[name]):
            assert same_value(want, got), (name, want, got)


def test_spark_audit_finds_what_the_local_audit_and_the_dataset_find(spark, logs, tmp_path):
    _, files = logs
    runner = CliRunner()
    local = runner.invoke(app, ["audit", *files, "-f", "json"])
    remote = runner.invoke(app, ["audit", *files, "-f", "json", "--engine", "spark"])
    assert local.exit_code == remote.exit_code == 1  # findings, and the cut gzip file
    assert remote.stderr == local.stderr
    want, got = json.loads(local.stdout), json.loads(remote.stdout)
    assert got["findings"] == want["findings"]
    by_id = lambda games: sorted(games, key=lambda g: g["game_id"])  # noqa: E731
    assert by_id(got["games"]) == by_id(want["games"])
    ds = tmp_path / "ds"
    spark_ingest(spark, files, ds)
    stored = read_table(ds, "findings").to_pylist()
    key = lambda f: (f["file"], f["line"], f["game_id"] or "", f["seq"] or 0, f["code"], f["message"])  # noqa: E731
    assert sorted(map(key, stored)) == sorted(map(key, got["findings"]))


def test_ingest_command_on_spark(spark, logs, tmp_path):
    _, files = logs
    out = CliRunner().invoke(
        app, ["ingest", *files[:2], "--out", str(tmp_path / "ds"), "--engine", "spark", "-f", "json"]
    )
    assert out.exit_code == 1, out.output  # rejects and replay errors in the data
    data = json.loads(out.stdout)
    assert data["invariant_holds"] and data["events"] > 0 and data["rejects"] > 0


def test_stdin_is_refused_on_spark(tmp_path):
    out = CliRunner().invoke(app, ["ingest", "-", "--out", str(tmp_path / "ds"), "--engine", "spark"])
    assert out.exit_code == 2
    assert "stdin" in out.stderr and "Traceback" not in out.output
    assert not (tmp_path / "ds").exists()


def test_local_audit_options_are_refused_on_spark(logs):
    _, files = logs
    out = CliRunner().invoke(app, ["audit", files[0], "--engine", "spark", "--coach", "--game", "g"])
    assert out.exit_code == 2 and "--engine local" in out.stderr


def test_missing_java_is_one_line_and_exit_2(monkeypatch, tmp_path, logs):
    _, files = logs
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no java here
    for args in (["ingest", files[0], "--out", str(tmp_path / "ds")], ["audit", files[0]]):
        out = CliRunner().invoke(app, [*args, "--engine", "spark"])
        assert out.exit_code == 2, out.output
        assert "needs Java" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "ds").exists()


def test_missing_pyspark_is_one_line_and_exit_2(monkeypatch, tmp_path, logs):
    _, files = logs
    monkeypatch.setitem(__import__("sys").modules, "pyspark", None)  # import pyspark raises ImportError
    out = CliRunner().invoke(app, ["ingest", files[0], "--out", str(tmp_path / "ds"), "--engine", "spark"])
    assert out.exit_code == 2
    assert "needs pyspark" in out.stderr and "pip install" in out.stderr


def test_spark_master_needs_the_spark_engine(tmp_path, logs):
    _, files = logs
    out = CliRunner().invoke(app, ["audit", files[0], "--spark-master", "local[1]"])
    assert out.exit_code == 2 and "--engine spark" in out.stderr

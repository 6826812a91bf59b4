"""`--engine spark` with the logs and the dataset on an S3-compatible server (moto, started
by tests/conftest.py): the Spark tasks read the logs and write the Parquet files through
pipeline.storage (fsspec), as the local engine does, and the tables, `stats --engine spark`
and `report` come out as the local engine's on the same server. Also: the parse tasks run
the local engine's compiled scan, loaded from its cache once warm."""

from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset import tables
from pipeline.engines.spark.ingest import SparkEngine
from pipeline.ingest.run import ingest
from pipeline.simulate import simulate
from tests.spark.compare import assert_same_rows, same_value
from tests.spark.logs import make_logs
from tests.test_object_store import read_table


@pytest.fixture(scope="module")
def on_s3(spark, s3_server, tmp_path_factory):
    from tests import s3server

    local = tmp_path_factory.mktemp("logs") / "logs"
    make_logs(local)
    bucket = s3server.new_bucket()
    fsspec.filesystem("s3").put(str(local) + "/", f"{bucket}/logs/", recursive=True)
    base = f"s3://{bucket}"
    engine = SparkEngine(spark, range_bytes=4096)  # the plain logs in byte ranges, read by tasks from S3
    return {
        "local": ingest([f"{base}/logs"], f"{base}/local"),
        "spark": ingest([f"{base}/logs"], f"{base}/spark", engine=engine),
        "base": base,
        "checks": engine.last.checks if engine.last else None,
    }


def test_spark_ingests_from_s3_to_s3_as_the_local_engine(on_s3):
    keys = ("dataset", "ingest_id", "seconds", "events_per_second")
    local, spark = on_s3["local"].to_dict(), on_s3["spark"].to_dict()
    assert {k: v for k, v in spark.items() if k not in keys} == {k: v for k, v in local.items() if k not in keys}
    assert on_s3["checks"].parse_tasks > len(tables.TABLES)  # byte ranges of the plain logs


@pytest.mark.parametrize("table", list(tables.TABLES))
def test_the_tables_on_s3_are_the_local_engines(on_s3, table):
    base = on_s3["base"]
    local, spark = read_table(f"{base}/local", table), read_table(f"{base}/spark", table)
    assert local.num_rows > 0
    assert_same_rows(local, spark, ordered=False, what=table)


def test_stats_on_spark_and_report_over_the_dataset_on_s3(on_s3, tmp_path):
    base = on_s3["base"]
    runner = CliRunner()
    local = runner.invoke(app, ["stats", f"{base}/local", "-f", "json"])
    spark = runner.invoke(app, ["stats", f"{base}/spark", "-f", "json", "--engine", "spark"])
    assert local.exit_code == spark.exit_code == 0, spark.output
    want, got = json.loads(local.stdout)["tables"], json.loads(spark.stdout)["tables"]
    assert want.keys() == got.keys()
    for name in want:
        assert len(want[name]) == len(got[name]) and all(map(same_value, want[name], got[name])), name
    page = tmp_path / "r.html"
    out = runner.invoke(app, ["report", f"{base}/spark", "--out", str(page)])
    assert out.exit_code == 0, out.output
    assert page.stat().st_size > 10_000


def test_the_parse_tasks_run_the_compiled_scan_from_its_warm_cache(spark, tmp_path: Path):
    """Every turn event of a clean simulated log (the lines the scan decodes; game starts
    and ends go to msgspec) is decoded by the compiled scan, the local engine's fast parse,
    and once the cache is warm no task compiles it again."""
    import pyarrow.compute as pc

    log = tmp_path / "sim.jsonl"
    simulate(log, 40, 7)
    engine = SparkEngine(spark, range_bytes=64 << 10)
    for n in range(2):
        summary = ingest([str(log)], tmp_path / f"ds{n}", engine=engine)
        assert engine.last is not None
        checks = engine.last.checks
        assert checks.parse_tasks > 1 and checks.jobs == ["parse+replay"]
        kinds = read_table(tmp_path / f"ds{n}", "events").column("type")
        turns = pc.sum(pc.is_in(kinds, value_set=pa.array(["roll", "keep", "bank", "farkle"]))).as_py()
        assert checks.bulk_rows == turns > summary.events / 2
        assert checks.parse_cpu > 0 and checks.replay_cpu > 0
    assert checks.compiled_in_task == 0

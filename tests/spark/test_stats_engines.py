"""Every SQL model of sql/ gives the same rows on Spark SQL as on DuckDB.

One dataset, ingested by the local engine from logs with several rulesets, injected
errors and bad lines (tests/spark/logs.py), is read by both engines. Each model (staging,
intermediate, facts and reports) is run on both and compared: reports row for row in
their order and with DuckDB's column types, the others as sets of rows; floats within
1e-9 (sums in another order). Then the `stats` command: its text output is the same
whatever the engine.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.engines.spark import stats as spark_stats
from pipeline.ingest.run import ingest
from pipeline.rules import Ruleset
from pipeline.stats import Filters, compute, run, session
from pipeline.stats.runner import load_models
from tests.spark.compare import assert_same_rows
from tests.spark.logs import make_logs

MODELS = sorted(load_models())


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats-engines")
    ingest([str(p) for p in make_logs(root / "logs")], root / "ds")
    return root / "ds"


@pytest.fixture(scope="module")
def duck(dataset):
    with session(dataset, with_odds=True, with_policy=True) as con:
        yield {name: run(con, name) for name in MODELS}


@pytest.fixture(scope="module")
def on_spark(spark, dataset):
    with spark_stats.session(spark, dataset, with_odds=True, with_policy=True) as models:
        yield models


def test_the_dataset_has_what_the_models_count(duck):
    assert duck["rpt_player_findings"].num_rows > 0
    assert duck["rpt_blunders"].num_rows > 0
    assert len(set(duck["int_games_in_scope"].column("ruleset").to_pylist())) == 4  # a round-limited one too
    assert {"finished", "abandoned"} <= set(duck["int_finished_games"].column("ended").to_pylist())


@pytest.mark.parametrize("name", MODELS)
def test_model_gives_the_same_rows_on_both_engines(duck, on_spark, name):
    if name.startswith("rpt_"):
        got = on_spark.report(name)
        assert got.schema == duck[name].schema
        assert_same_rows(duck[name], got, ordered=True, what=name)
    else:
        assert_same_rows(duck[name], on_spark.run(name), ordered=False, what=name)


def test_filters_give_the_same_reports(spark, dataset):
    playmonster = Ruleset.builtin("playmonster")
    # a player of the ruleset's games (the simulated seats vary with the logs' mix)
    seated = compute(dataset, Filters(rules=playmonster))
    player = min(p for t in seated.values() if "player" in t.column_names for p in t.column("player").to_pylist() if p)
    filters = Filters(
        player=player,
        rules=playmonster,
        since=dt.date(2020, 1, 1),
        until=dt.date(2100, 1, 1),
    )
    want = compute(dataset, filters)
    got = spark_stats.compute(dataset, filters, spark=spark)
    assert want.keys() == got.keys()
    assert sum(t.num_rows for t in want.values()) > 0
    for name in want:
        assert got[name].schema == want[name].schema
        assert_same_rows(want[name], got[name], ordered=True, what=name)


def test_stats_command_prints_the_same_on_both_engines(spark, dataset):
    runner = CliRunner()
    local = runner.invoke(app, ["stats", str(dataset), "--section", "players", "--section", "bust"])
    remote = runner.invoke(
        app, ["stats", str(dataset), "--section", "players", "--section", "bust", "--engine", "spark"]
    )
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    local_json = json.loads(runner.invoke(app, ["stats", str(dataset), "-s", "dice", "-f", "json"]).stdout)
    spark_json = json.loads(
        runner.invoke(app, ["stats", str(dataset), "-s", "dice", "-f", "json", "--engine", "spark"]).stdout
    )
    assert spark_json.keys() == local_json.keys()
    rows = local_json["tables"]["dice_fairness"]
    assert [r["dice"] for r in spark_json["tables"]["dice_fairness"]] == [r["dice"] for r in rows]

"""Where `stats --engine spark` runs each model (pipeline.engines.spark.stats.placement):
on Spark what reads rows that grow with the data, on the driver (DuckDB) what reads only
aggregates. The rows are compared between the engines in test_stats_engines.py; this file
holds the rule itself, and the path of a table model too large to broadcast."""

from __future__ import annotations

import re

import pytest

from pipeline.engines.spark import stats as spark_stats
from pipeline.engines.spark.stats import AGGREGATE_PREFIX, DRIVER, SPARK, placement
from pipeline.ingest.run import ingest
from pipeline.stats import DEFAULT_SECTIONS, SECTIONS, compute
from pipeline.stats.runner import PYTHON_MODELS, Model, load_models
from tests.spark.compare import assert_same_rows
from tests.spark.logs import make_logs

MODELS = load_models()
WHERE = placement(MODELS)


def _reads_source(model: Model) -> bool:
    return bool(re.search(r"\bsrc_\w+", re.sub(r"--[^\n]*", "", model.sql)))


def test_every_model_that_reads_a_source_table_runs_on_spark():
    readers = [name for name, model in MODELS.items() if _reads_source(model)]
    assert readers and all(WHERE[name] == SPARK for name in readers)


def test_a_sql_model_on_the_driver_reads_only_aggregates_and_the_drivers_own_rows():
    # (a Python model reads rows on the driver whatever they are: int_choices_judged passes
    # every choice of the two-player games on and judges them; the other games' choices are
    # counted on Spark, fct_decision_quality_other_games)
    for name, where in WHERE.items():
        if where != DRIVER or name in PYTHON_MODELS:
            continue
        for dep in MODELS[name].depends_on:
            assert WHERE[dep] == DRIVER or dep.startswith(AGGREGATE_PREFIX), (name, dep)


def test_python_models_run_on_the_driver():
    assert all(WHERE[name] == DRIVER for name in PYTHON_MODELS)


def test_the_default_reports_run_on_the_driver_over_facts_from_spark():
    reports = [f"rpt_{table}" for section in DEFAULT_SECTIONS for table in SECTIONS[section]]
    assert all(WHERE[r] == DRIVER for r in reports)
    facts = {d for r in reports for d in MODELS[r].depends_on if WHERE[d] == SPARK}
    assert facts and all(f.startswith(AGGREGATE_PREFIX) for f in facts)


def test_a_model_over_spark_rows_runs_on_spark_and_one_over_a_fact_on_the_driver():
    models = {
        "stg_x": Model("stg_x", "select * from src_rolls", "view", ()),
        "int_x": Model("int_x", "select * from stg_x", "view", ("stg_x",)),
        "fct_x": Model("fct_x", "select count(*) from int_x", "table", ("int_x",)),
        "rpt_rows": Model("rpt_rows", "select * from int_x", "query", ("int_x",)),
        "rpt_fact": Model("rpt_fact", "select * from fct_x", "query", ("fct_x",)),
        "rpt_both": Model("rpt_both", "select * from fct_x, int_x", "query", ("fct_x", "int_x")),
    }
    where = placement(models)
    assert [where[n] for n in models] == [SPARK, SPARK, SPARK, SPARK, DRIVER, SPARK]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats-placement")
    ingest([str(p) for p in make_logs(root / "logs")], root / "ds")
    return root / "ds"


def test_a_table_too_large_to_broadcast_stays_cached_on_spark_with_the_same_reports(spark, dataset, monkeypatch):
    monkeypatch.setattr(spark_stats.SparkModels, "broadcast_limit", lambda self: -1)
    want = compute(dataset, sections=list(DEFAULT_SECTIONS))
    with spark_stats.session(spark, dataset) as models:
        reports = [f"rpt_{name}" for name in want]
        models.prepare(reports)
        assert "int_games_in_scope" in models._on_spark
        assert len(models.cached) == 1  # int_games_in_scope, cached on the executors
        got = {name: models.report(f"rpt_{name}") for name in want}
    for name in want:
        assert got[name].schema == want[name].schema
        assert_same_rows(want[name], got[name], ordered=True, what=name)


def test_the_single_turn_counts_run_where_their_rows_are():
    """The other games' choices are counted on Spark (they grow with the data); the two-player
    games' come from the judge on the driver; their union reads facts only."""
    assert WHERE["int_choice_values_other_games"] == SPARK
    assert WHERE["fct_decision_quality_other_games"] == SPARK
    assert WHERE["int_choice_values_two_player"] == SPARK
    assert WHERE["fct_decision_quality_two_player"] == DRIVER
    assert WHERE["fct_decision_quality"] == DRIVER


def _stored_rdds(spark) -> set[int]:
    return {info.id() for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()}


def _plan(models, name: str) -> str:
    return models.spark.sql(f"select * from {name}")._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("hinted", [True, False])
def test_a_cached_table_is_read_as_computed_and_broadcast_to_the_rows_it_filters(spark, dataset, monkeypatch, hinted):
    """A table model too large for Spark's own broadcast (here: any size) is computed once and
    read from those rows by every model (not computed again under each one's CTEs), and the
    joins with it broadcast it (not shuffle the rolls to a sort-merge join): the hint in their
    SQL. Without the hint (`broadcast_cap` -1) the same plan sorts and merges: the check can fail."""
    monkeypatch.setattr(spark_stats.SparkModels, "broadcast_limit", lambda self: 0)  # never to the driver
    if not hinted:
        monkeypatch.setattr(spark_stats.SparkModels, "broadcast_cap", lambda self: -1)
    want = compute(dataset, sections=list(DEFAULT_SECTIONS))
    stored_before = _stored_rdds(spark)
    with spark_stats.session(spark, dataset) as models:
        models.spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # Spark alone (its own session)
        models.prepare([f"rpt_{name}" for name in want])
        assert models.broadcast == ({"int_games_in_scope"} if hinted else set())
        plan = _plan(models, "int_rolls_in_scope")
        assert "row_number" not in plan.lower()  # int_games_in_scope's game_no, read, not numbered again
        assert ("SortMergeJoin" not in plan and "BroadcastHashJoin" in plan) is hinted
        assert _stored_rdds(spark) > stored_before  # the computed rows, held on the executors
        got = {name: models.report(f"rpt_{name}") for name in want}
    assert _stored_rdds(spark) == stored_before  # and freed when the session ends
    for name in want:
        assert_same_rows(want[name], got[name], ordered=True, what=name)

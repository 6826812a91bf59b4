"""Where `stats --engine spark` runs each model (pipeline.engines.spark.stats.placement):
on Spark what reads the event tables (rows that grow with the events), on the driver
(DuckDB) what reads only the game tables and aggregates. The rows are compared between the
engines in test_stats_engines.py; this file holds the rule itself, how the driver's game
scope reaches the Spark models (broadcast), and the path of a Spark table model too large
to broadcast."""

from __future__ import annotations

import re

import pytest

from pipeline.engines.spark import stats as spark_stats
from pipeline.engines.spark.stats import AGGREGATE_PREFIX, DRIVER, EVENT_TABLES, SPARK, placement
from pipeline.ingest.run import ingest
from pipeline.stats import DEFAULT_SECTIONS, SECTIONS, run, session
from pipeline.stats.runner import PYTHON_MODELS, Model, load_models
from tests.spark.compare import assert_same_rows
from tests.spark.logs import make_logs

MODELS = load_models()
WHERE = placement(MODELS)


def _sources(model: Model) -> set[str]:
    return set(re.findall(r"\bsrc_(\w+)", re.sub(r"--[^\n]*", "", model.sql)))


def test_every_model_that_reads_an_event_table_runs_on_spark_and_one_of_game_tables_on_the_driver():
    events = [name for name, model in MODELS.items() if _sources(model) & set(EVENT_TABLES)]
    assert events and all(WHERE[name] == SPARK for name in events)
    games = [name for name, model in MODELS.items() if _sources(model) and not _sources(model) & set(EVENT_TABLES)]
    assert {"stg_games", "stg_game_players", "stg_findings"} <= set(games)
    assert all(WHERE[name] == DRIVER for name in games)
    assert WHERE["int_games_in_scope"] == DRIVER  # the scope every Spark model joins: computed once, by DuckDB


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


#: a table model over an event table, and a model that joins it (sql/ has no such table
#: model today: the test gives the session its own)
PER_PLAYER = Model(
    "int_player_choices",
    "select player, count(*) as choices from stg_decision_states group by player",
    "table",
    ("stg_decision_states",),
)
JOINED = Model(
    "int_choices_with_count",
    "select d.game_id, d.seq, d.player, c.choices from stg_decision_states as d "
    "inner join int_player_choices as c on d.player = c.player",
    "view",
    ("stg_decision_states", "int_player_choices"),
)


def test_a_spark_table_too_large_to_broadcast_stays_on_spark_and_is_freed_after(spark, dataset, monkeypatch):
    """A table model on Spark that another Spark model joins: above Spark's broadcast limit
    (here: any size) it is computed once and kept on the executors (a local checkpoint),
    joined by broadcast (under the cap), and freed when the session ends."""
    monkeypatch.setattr(spark_stats.SparkModels, "broadcast_limit", lambda self: 0)
    with session(dataset, with_odds=False) as con:
        run(con, "stg_decision_states")
        want = con.sql(JOINED.sql.replace("int_player_choices", f"({PER_PLAYER.sql})")).to_arrow_table()
    stored_before = _stored_rdds(spark)
    with spark_stats.session(spark, dataset, with_odds=False) as models:
        models.models = {**models.models, PER_PLAYER.name: PER_PLAYER, JOINED.name: JOINED}  # (load_models is cached)
        models.where = placement(models.models)
        assert models.where[PER_PLAYER.name] == models.where[JOINED.name] == SPARK
        got = models.spark_rows(JOINED.name)
        assert PER_PLAYER.name in models._on_spark
        assert len(models.cached) == 1  # the table, held on the executors
        assert PER_PLAYER.name in models.broadcast  # and joined by broadcast (under the cap)
        assert _stored_rdds(spark) > stored_before
    assert _stored_rdds(spark) == stored_before
    assert want.num_rows > 0
    assert_same_rows(want, got.cast(want.schema), ordered=False, what=JOINED.name)


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
def test_the_drivers_game_scope_is_broadcast_to_the_rows_it_filters(spark, dataset, monkeypatch, hinted):
    """int_games_in_scope, computed on the driver, reaches a Spark model that joins it as its
    rows, and the join broadcasts them (a hint in the model's SQL) instead of shuffling the
    rolls to a sort-merge join, even where Spark alone would not broadcast. Without the hint
    (`broadcast_cap` -1) the same plan sorts and merges: the check can fail."""
    if not hinted:
        monkeypatch.setattr(spark_stats.SparkModels, "broadcast_cap", lambda self: -1)
    with spark_stats.session(spark, dataset) as models:
        models.build("int_rolls_in_scope")
        assert models.broadcast == ({"int_games_in_scope"} if hinted else set())
        models.spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # Spark alone (its own session)
        plan = _plan(models, "int_rolls_in_scope")
        assert ("SortMergeJoin" not in plan and "BroadcastHashJoin" in plan) is hinted
        with session(dataset) as con:
            want = run(con, "int_rolls_in_scope")
        assert_same_rows(want, models.spark_rows("int_rolls_in_scope").cast(want.schema), ordered=False)

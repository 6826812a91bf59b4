"""The additive facts DuckDB computes inside Spark's tasks (pipeline.engines.spark.fact_tasks):
which facts go there, how the files are split into tasks, how the partials add up, and that
what the driver ends with is row for row the local engine's fact."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.dataset.tables import TABLES
from pipeline.engines.spark import fact_tasks
from pipeline.engines.spark import stats as spark_stats
from pipeline.engines.spark.fact_tasks import TaskFact, combine, register_source, task_bins, task_fact
from pipeline.engines.spark.stats import DRIVER, placement
from pipeline.ingest.run import ingest
from pipeline.stats import DEFAULT_SECTIONS, SECTIONS, run, session
from pipeline.stats.runner import Model, load_models
from tests.spark.compare import assert_same_rows
from tests.spark.logs import make_logs

MODELS = load_models()
WHERE = placement(MODELS)
GIVEN = {name for name, where in WHERE.items() if where == DRIVER}
TASK_FACTS = {
    "fct_roll_counts": "rolls",
    "fct_dice_faces": "rolls",
    "fct_turn_points": "turns",
    "fct_decision_counts": "decisions",
}


@pytest.mark.parametrize("name, table", sorted(TASK_FACTS.items()))
def test_the_event_facts_go_to_the_tasks_over_their_one_table(name, table):
    fact = task_fact(name, MODELS, GIVEN, {"exact_odds"})
    assert fact is not None and fact.table == table
    assert fact.given == ("int_games_in_scope",)  # the game scope, computed on the driver
    assert fact.models[-1] == name and f"stg_{table}" in fact.models
    assert ("exact_odds" in fact.aux) is (name == "fct_roll_counts")


def test_a_fact_without_partial_sums_over_two_tables_or_a_window_stays_on_spark_sql():
    models = {
        "stg_a": Model("stg_a", "select * from src_rolls", "view", ()),
        "stg_b": Model("stg_b", "select * from src_turns", "view", ()),
        "fct_one": Model(
            "fct_one", "-- partial sums: n\nselect x, count(*) as n from stg_a group by x", "table", ("stg_a",)
        ),
        "fct_two": Model(
            "fct_two", "-- partial sums: n\nselect count(*) as n from stg_a, stg_b", "table", ("stg_a", "stg_b")
        ),
        "fct_plain": Model("fct_plain", "select x, count(*) as n from stg_a group by x", "table", ("stg_a",)),
        "int_ranked": Model(
            "int_ranked", "select x, row_number() over (order by x) as r from stg_a", "view", ("stg_a",)
        ),
        "fct_ranked": Model(
            "fct_ranked",
            "-- partial sums: n\nselect r, count(*) as n from int_ranked group by r",
            "table",
            ("int_ranked",),
        ),
        "int_kept": Model("int_kept", "select x from stg_a", "table", ("stg_a",)),
        "fct_kept": Model(
            "fct_kept",
            "-- partial sums: n\nselect x, count(*) as n from stg_a semi join int_kept using (x) group by x",
            "table",
            ("int_kept", "stg_a"),
        ),
    }
    assert task_fact("fct_one", models, set(), set()) == TaskFact(
        "fct_one", "rolls", ("n",), ("stg_a", "fct_one"), (), ()
    )
    assert task_fact("fct_two", models, set(), set()) is None
    assert task_fact("fct_plain", models, set(), set()) is None
    assert task_fact("fct_ranked", models, set(), set()) is None  # a window over a share is another window
    assert task_fact("fct_kept", models, set(), set()) is None  # so may a table model be
    assert task_fact("fct_kept", models, {"int_kept"}, set()) is not None  # unless the driver computed it


def test_the_facts_that_declare_partial_sums_are_these():
    declared = {name for name, model in MODELS.items() if fact_tasks.partial_sums(model)}
    assert declared == set(TASK_FACTS)  # a new additive fact: add it here and to docs/spark.md


def test_every_file_goes_to_exactly_one_task_and_the_tasks_weigh_alike(tmp_path, monkeypatch):
    sizes = {"a": 90, "b": 50, "c": 40, "d": 30, "e": 20, "f": 10}
    monkeypatch.setattr(fact_tasks, "_size", lambda path: sizes[path])
    files = [("rolls", p) for p in sizes]
    bins = task_bins(files, parallelism=2)
    assert sorted(f for b in bins for f in b) == sorted(files)
    assert sorted(sum(sizes[p] for _, p in b) for b in bins) == [120, 120]
    assert len(task_bins(files[:1], parallelism=2)) == 1  # never an empty task
    monkeypatch.setattr(fact_tasks, "TASK_BYTES", 60)  # large data: more tasks than cores, in whole waves
    assert len(task_bins(files, parallelism=2)) == 4  # 240 bytes: two waves of two
    monkeypatch.setattr(fact_tasks, "TASK_BYTES", 50)
    assert len(task_bins(files, parallelism=2)) == 6  # 240 bytes: three waves, as many tasks as files


def test_partials_add_up_per_key_nulls_included_with_the_facts_types():
    schema = pa.schema([("player", pa.string()), ("dice", pa.int32()), ("rolls", pa.int64()), ("p", pa.float64())])
    one = pa.table({"player": ["ann", None, "bo"], "dice": [6, 6, 5], "rolls": [3, 1, 2], "p": [0.5, 0.5, 0.25]})
    two = pa.table({"player": ["ann", None], "dice": [6, 6], "rolls": [4, 5], "p": [0.5, 0.5]})
    fact = TaskFact("fct_x", "rolls", ("rolls",), ("fct_x",), (), ())
    con = duckdb.connect()
    got = combine(con, fact, [one.cast(schema), two.cast(schema)], schema)
    assert got.schema == schema
    assert sorted(got.to_pylist(), key=lambda r: (r["player"] is None, r["player"] or "", r["dice"])) == [
        {"player": "ann", "dice": 6, "rolls": 7, "p": 0.5},
        {"player": "bo", "dice": 5, "rolls": 2, "p": 0.25},
        {"player": None, "dice": 6, "rolls": 6, "p": 0.5},
    ]
    assert combine(con, fact, [], schema).num_rows == 0


def test_a_share_of_files_older_than_a_column_reads_it_as_null(tmp_path):
    full = TABLES["turns"]
    kept = [f for f in full if f.name != full.names[-1]]
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist([{}], pa.schema(kept)), path)
    con = duckdb.connect()
    register_source(con, "turns", [str(path)])
    assert [r[0] for r in con.execute("describe src_turns").fetchall()] == full.names
    assert con.execute(f"select count(*) from src_turns where {full.names[-1]} is null").fetchone() == (1,)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Several ingests: each table has several files, so the tasks' partials overlap in keys."""
    root = tmp_path_factory.mktemp("fact-tasks")
    for log in make_logs(root / "logs"):
        ingest([str(log)], root / "ds")
    return root / "ds"


def test_the_facts_from_the_tasks_are_the_local_engines_row_for_row(spark, dataset, monkeypatch):
    calls: list[dict[str, list[pa.Table]]] = []
    real = fact_tasks.compute_partials

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(spark_stats, "compute_partials", spy)
    reports = [f"rpt_{t}" for s in DEFAULT_SECTIONS for t in SECTIONS[s]]
    with session(dataset) as con:
        want = {name: run(con, name) for name in TASK_FACTS}
    with spark_stats.session(spark, dataset) as models:
        models.prepare(reports)
        got = {name: models.driver_rows(name) for name in TASK_FACTS}
    assert len(calls) == 1 and set(calls[0]) == set(TASK_FACTS)  # one Spark job for all four
    assert max(len(partials) for partials in calls[0].values()) >= 2  # partials really were added up
    for name in TASK_FACTS:
        assert set(fact_tasks.partial_sums(MODELS[name])) < set(want[name].column_names)
        assert got[name].schema == want[name].schema
        assert_same_rows(want[name], got[name], ordered=False, what=name)


def test_the_tables_sent_to_the_tasks_encode_repeated_text_and_keep_their_values():
    rules = '{"target": 10000, "opening": 500, "straight": 1500}'
    table = pa.table({"game_id": [f"g{i}" for i in range(100)], "ruleset": [rules] * 100, "n": list(range(100))})
    small = fact_tasks.compact(table)
    assert pa.types.is_dictionary(small.column("ruleset").type)
    assert not pa.types.is_dictionary(small.column("game_id").type)  # every value its own: left alone
    assert small.nbytes < table.nbytes / 2
    con = duckdb.connect()
    con.register("small", small)
    assert con.sql("select * from small order by n").to_arrow_table().to_pylist() == table.to_pylist()


def test_a_game_scope_above_the_broadcast_cap_leaves_the_facts_to_spark_sql(spark, dataset, monkeypatch):
    calls = []
    monkeypatch.setattr(spark_stats, "compute_partials", lambda *a, **k: calls.append(a) or {})
    monkeypatch.setattr(spark_stats.SparkModels, "broadcast_cap", lambda self: 1)  # nothing fits
    with session(dataset) as con:
        want = {name: run(con, name) for name in TASK_FACTS}
    with spark_stats.session(spark, dataset) as models:
        models.prepare([f"rpt_{t}" for s in DEFAULT_SECTIONS for t in SECTIONS[s]])
        got = {name: models.driver_rows(name) for name in TASK_FACTS}
    assert not calls
    for name in TASK_FACTS:
        assert_same_rows(want[name], got[name], ordered=False, what=name)

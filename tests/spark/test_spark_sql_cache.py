"""The Spark SQL kept between runs (pipeline.engines.spark.spark_sql): the same text as
transpiling, read back without transpiling, written again when anything it depends on
changes, and no sqlglot import on a warm run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.engines.spark import spark_sql as cache_module
from pipeline.engines.spark import transpile
from pipeline.engines.spark.spark_sql import spark_sql
from pipeline.stats import Filters, filter_variables, plan_sections
from pipeline.stats.runner import MACROS, SQL_DIR, build_order, load_models

MACROS_PATH = SQL_DIR / f"{MACROS}.sql"


def default_models() -> dict[str, str]:
    """The SQL models a default `stats` run builds (the ones the Spark engine transpiles)."""
    models = load_models()
    names, _, _ = plan_sections(None)
    order = build_order([f"rpt_{name}" for name in names], models)
    return {name: models[name].sql for name in order if name in models}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def variables_for(sql: str) -> dict:
    """The variables of a Spark stats run filtered to --player ana (every model and macro
    reads some of them)."""
    return filter_variables(Filters(players=("ana",)), [], 150.0)


def refuse(*args, **kwargs):
    raise AssertionError("transpiled although the cache holds the model")


def test_cached_text_is_the_transpiled_text_and_is_read_back_without_transpiling(cache, monkeypatch):
    models = default_models()
    assert len(models) > 20
    macros = transpile.load_macros(MACROS_PATH)
    first = {}
    for name, sql in models.items():
        variables = variables_for(sql)
        first[name] = spark_sql(sql, MACROS_PATH, variables)
        assert first[name] == transpile.to_spark(sql, macros, variables), name
    assert len(list(cache.glob("spark-sql-*.sql"))) == len(models)  # one file per model
    monkeypatch.setattr(transpile, "to_spark", refuse)
    for name, sql in models.items():
        assert spark_sql(sql, MACROS_PATH, variables_for(sql)) == first[name], name


@pytest.mark.parametrize(
    "change",
    [
        {"f_blunder_threshold": 151.0},
        {"f_blunder_threshold": 150},  # an int where a float was: another literal
        {"f_players": ["bob"]},
        {"f_players": None},
    ],
)
def test_another_value_of_a_variable_is_transpiled_again(cache, monkeypatch, change):
    sql = "select getvariable('f_blunder_threshold') as t, getvariable('f_players') as p from (select 1)"
    before = {"f_blunder_threshold": 150.0, "f_players": ["ana"]}
    spark_sql(sql, MACROS_PATH, before)
    calls = []
    real = transpile.to_spark
    monkeypatch.setattr(transpile, "to_spark", lambda *a: calls.append(a) or real(*a))
    after = {**before, **change}
    text = spark_sql(sql, MACROS_PATH, after)
    assert len(calls) == 1
    assert text == real(sql, transpile.load_macros(MACROS_PATH), after)


def test_changed_macros_are_transpiled_again(cache, tmp_path, monkeypatch):
    sql = "select dice_key(x) as k from (select [1, 5] as x)"
    spark_sql(sql, MACROS_PATH, {})
    changed = tmp_path / "macros.sql"
    changed.write_text(MACROS_PATH.read_text(encoding="utf-8") + "\n-- a change\n", encoding="utf-8")
    calls = []
    real = transpile.to_spark
    monkeypatch.setattr(transpile, "to_spark", lambda *a: calls.append(a) or real(*a))
    spark_sql(sql, changed, {})
    assert len(calls) == 1


def test_a_changed_sqlglot_or_engine_is_transpiled_again(cache, monkeypatch):
    sql = "select 1 as one"
    spark_sql(sql, MACROS_PATH, {})
    monkeypatch.setattr(transpile, "to_spark", refuse)
    spark_sql(sql, MACROS_PATH, {})  # the same key: read back
    monkeypatch.setattr(cache_module, "_sqlglot_version", lambda: "0.0.0-other")
    with pytest.raises(AssertionError, match="transpiled"):
        spark_sql(sql, MACROS_PATH, {})
    monkeypatch.undo()
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(cache))
    monkeypatch.setattr(cache_module, "source_fingerprint", lambda *packages: "another-engine")
    monkeypatch.setattr(transpile, "to_spark", refuse)
    with pytest.raises(AssertionError, match="transpiled"):
        spark_sql(sql, MACROS_PATH, {})


def test_off_or_unreadable_cache_still_gives_the_text(tmp_path, monkeypatch):
    sql = load_models()["int_games_in_scope"].sql
    variables = variables_for(sql)
    expected = transpile.to_spark(sql, transpile.load_macros(MACROS_PATH), variables)
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", "off")
    assert spark_sql(sql, MACROS_PATH, variables) == expected
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(blocked))
    assert spark_sql(sql, MACROS_PATH, variables) == expected  # cannot write: no failure
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))
    path = cache_module._path(sql, MACROS_PATH, variables)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe not text")
    assert spark_sql(sql, MACROS_PATH, variables) == expected
    assert path.read_text(encoding="utf-8") == expected  # written again, whole


def test_a_warm_run_does_not_import_sqlglot(tmp_path):
    """Spark's stats module and every default model's SQL, from a warm cache, in a fresh
    interpreter: sqlglot (and its import, part of the second saved) stays out."""
    code = (
        "import sys\n"
        "from pipeline.engines.spark import stats\n"
        "from pipeline.engines.spark.spark_sql import spark_sql\n"
        "from pipeline.stats import Filters, filter_variables, plan_sections\n"
        "from pipeline.stats.runner import MACROS, SQL_DIR, build_order, load_models\n"
        "models = load_models()\n"
        "names = [f'rpt_{name}' for name in plan_sections(None)[0]]\n"
        "variables = filter_variables(Filters(players=('ana',)), [], 150.0)\n"
        "for name in build_order(names, models):\n"
        "    if name in models:\n"
        "        spark_sql(models[name].sql, SQL_DIR / f'{MACROS}.sql', variables)\n"
        "print('sqlglot' in sys.modules)\n"
    )
    env = dict(os.environ, FARKLE_LOGS_CACHE_DIR=str(tmp_path / "cache"))
    root = Path(__file__).resolve().parents[2]
    run = lambda: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert run() == "True"  # cold: transpiled
    assert run() == "False"  # warm: read back


def test_another_set_of_broadcast_tables_is_transpiled_again(cache, monkeypatch):
    sql = "with games as (select * from int_games_in_scope) select * from r inner join games on r.k = games.k"
    plain = spark_sql(sql, MACROS_PATH, {})
    hinted = spark_sql(sql, MACROS_PATH, {}, frozenset({"int_games_in_scope"}))
    assert "BROADCAST" not in plain and "/*+ BROADCAST(games) */" in hinted
    monkeypatch.setattr(transpile, "to_spark", refuse)
    assert spark_sql(sql, MACROS_PATH, {}) == plain  # each read back under its own key
    assert spark_sql(sql, MACROS_PATH, {}, frozenset({"int_games_in_scope"})) == hinted

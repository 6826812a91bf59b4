"""The DuckDB -> Spark rewrites of pipeline.engines.spark.transpile, checked in DuckDB.

Each rewrite must keep DuckDB's meaning, so the rewritten SQL is written back in DuckDB's
dialect and run next to the original: macros inlined against DuckDB's own macros, the
ASOF join's interval form against DuckDB's ASOF join on random data with ties and nulls.
That Spark accepts the result and agrees is tests/spark/test_stats_engines.py's job.
"""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pytest
import sqlglot

from pipeline.engines.spark import transpile
from pipeline.stats.runner import MACROS, SQL_DIR, load_models

MACRO_DEFS = transpile.load_macros(SQL_DIR / f"{MACROS}.sql")
VARIABLES = {
    "f_player": "ana",
    "f_players": ["ana"],
    "f_min_games": 0,
    "f_period": "month",
    "f_codes": ["scoring_error"],
    "f_severity": None,
    "f_with_findings": False,
    "f_game": None,
    "f_rulesets": ['{"a": 1}'],
    "f_since": dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc),
    "f_until": None,
    "f_blunder_threshold": 150.0,
    "f_race_mistake_pp": 1.0,
    "f_race_blunder_pp": 4.0,
    "f_list_rows": None,
}


@pytest.fixture(scope="module")
def con():
    con = duckdb.connect()
    con.execute((SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8"))
    yield con
    con.close()


def test_every_macro_is_found():
    text = (SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8")
    declared = {
        line.split("macro", 1)[1].split("(", 1)[0].strip()
        for line in text.splitlines()
        if line.startswith("create or replace temp macro")
    }
    assert declared and set(MACRO_DEFS) == declared


@pytest.mark.parametrize("name", sorted(load_models()))
def test_model_becomes_spark_sql_without_duckdb_only_parts(name):
    spark_sql = transpile.to_spark(load_models()[name].sql, MACRO_DEFS, VARIABLES).lower()
    for macro in MACRO_DEFS:
        assert f"{macro}(" not in spark_sql, f"{name}: macro {macro} left in"
    assert "getvariable" not in spark_sql
    assert "asof join" not in spark_sql and "asof left" not in spark_sql
    assert "list_sum(" not in spark_sql and "unnest(" not in spark_sql
    sqlglot.parse_one(spark_sql, read="spark")  # well-formed Spark SQL


@pytest.mark.parametrize(
    "call",
    [
        "wilson_lo(k, n)",
        "wilson_hi(k, n)",
        "rate(k, n)",
        "rate(k, n - n)",
        "points_bucket_lo(k * 37 - 100)",
        "points_bucket_label(points_bucket_lo(k * 37))",
        "dice_key([1, 1, 5])",
        "dice_key([6, 2, 2, 3])",
        "1 - rate(k + 1, n) * 2",  # precedence: the body is parenthesised where it lands
    ],
)
def test_inlined_macro_equals_duckdb_macro(con, call):
    grid = "select * from range(0, 9) k(k), range(1, 9) n(n), (values (0.0), (0.3), (1.7), (4.2)) x(x) where k <= n"
    inlined = transpile.inline_macros(sqlglot.parse_one(f"select {call}", read="duckdb"), MACRO_DEFS)
    assert not any(transpile._call_name(node) in MACRO_DEFS for node in inlined.walk())
    sql = inlined.sql(dialect="duckdb")[len("SELECT ") :]
    rows = con.execute(f"select {call} as a, {sql} as b from ({grid})").fetchall()
    assert rows
    for a, b in rows:
        if isinstance(a, str) or a is None:
            assert a == b, (call, a, b)
        else:
            assert a == pytest.approx(b, rel=1e-12, abs=1e-15), (call, a, b)


def test_a_macro_calling_a_macro_is_inlined_all_the_way():
    text = (
        "create or replace temp macro half_of(x) as x / 2;\n"
        "create or replace temp macro quarter_plus(x, y) as half_of(half_of(x)) + y;"
    )
    macros = transpile.parse_macros(text)
    inlined = transpile.inline_macros(sqlglot.parse_one("select quarter_plus(k + 1, k)", read="duckdb"), macros)
    assert not any(transpile._call_name(node) in macros for node in inlined.walk())
    own = duckdb.connect()
    own.execute(text)
    sql = inlined.sql(dialect="duckdb")[len("SELECT ") :]
    rows = own.execute(f"select quarter_plus(k + 1, k), {sql} from range(0, 9) t(k)").fetchall()
    own.close()
    assert rows and all(a == pytest.approx(b) for a, b in rows)


@pytest.mark.parametrize("op", [">", ">=", "<", "<="])
def test_asof_rewrite_picks_what_duckdb_asof_picks(con, op):
    rng = random.Random(op)
    left = [(i, rng.choice(["a", "b", None]), rng.choice([None] + list(range(12)))) for i in range(300)]
    right = [(rng.choice(["a", "b", "c", None]), rng.choice([None] + list(range(12))), j) for j in range(80)]
    con.execute("create or replace temp table l(id int, k varchar, x int)")
    con.execute("create or replace temp table r(k varchar, y int, tag int)")
    con.executemany("insert into l values (?, ?, ?)", left)
    con.executemany("insert into r values (?, ?, ?)", right)
    original = f"select l.id, r.y as y from l asof left join r on l.k = r.k and l.x {op} r.y"
    rewritten = transpile.rewrite_asof(sqlglot.parse_one(original, read="duckdb")).sql(dialect="duckdb")
    assert " asof " not in rewritten.lower()
    want = sorted(con.execute(original).fetchall(), key=repr)
    got = sorted(con.execute(rewritten).fetchall(), key=repr)
    assert len(got) == len(left)  # a left join that never repeats a left row
    assert got == want


def test_asof_rewrite_with_the_right_side_on_the_left_of_the_inequality(con):
    con.execute(
        "create or replace temp table l2 as select * from (values (1, 'a', 5), (2, 'a', 1), (3, 'b', 9)) t(id, k, x)"
    )
    con.execute(
        "create or replace temp table r2 as select * from (values ('a', 2), ('a', 4), ('a', 4), ('b', 9)) t(k, y)"
    )
    flipped = "select l2.id, r2.y from l2 asof left join r2 on l2.k = r2.k and r2.y < l2.x"
    rewritten = transpile.rewrite_asof(sqlglot.parse_one(flipped, read="duckdb")).sql(dialect="duckdb")
    assert sorted(con.execute(rewritten).fetchall(), key=repr) == [(1, 4), (2, None), (3, None)]


def test_asof_that_cannot_be_rewritten_says_why():
    tree = sqlglot.parse_one("select * from l asof left join r on l.k = r.k", read="duckdb")
    with pytest.raises(transpile.TranspileError, match="inequality"):
        transpile.rewrite_asof(tree)


def test_variables_become_literals_of_their_type():
    sql = "select getvariable('s') as s, getvariable('n') as n, getvariable('t') as t, getvariable('l') as l"
    variables = {"s": "it's", "n": None, "t": dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc), "l": ["x", "y"]}
    out = transpile.to_spark(sql, {}, variables)
    assert "'it\\'s'" in out or "'it''s'" in out
    assert "NULL AS n" in out
    assert "CAST('2024-03-01 00:00:00.000000+00:00' AS TIMESTAMP) AS t" in out
    assert "ARRAY('x', 'y') AS l" in out
    with pytest.raises(transpile.TranspileError, match="not given"):
        transpile.to_spark("select getvariable('missing')", {}, {})


def test_duckdb_list_subscripts_become_one_based_element_at():
    assert "ELEMENT_AT(ARRAY(10, 20, 30), 2)" in transpile.to_spark("select [10, 20, 30][2] as v", {}, {})
    assert "ELEMENT_AT(ARRAY(10, 20, 30), d)" in transpile.to_spark("select [10, 20, 30][d] as v", {}, {})
    assert "ELEMENT_AT(x, d + 1)" in transpile.to_spark("select x[d + 1] as v", {}, {})


def _hints_by_joins(sql: str) -> dict[tuple[str, ...], list[str]]:
    """The broadcast hint of each select that joins, keyed by what it joins (Spark's text)."""
    selects = sqlglot.parse_one(sql, read="spark").find_all(sqlglot.exp.Select)
    return {
        tuple(join.this.alias_or_name for join in select.args["joins"]): [
            str(arg)
            for hint in (select.args["hint"].expressions if select.args.get("hint") else [])
            for arg in hint.expressions
        ]
        for select in selects
        if select.args.get("joins")
    }


def test_joins_with_a_broadcast_table_are_hinted_directly_and_through_ctes():
    sql = """
        with games as (select game_id, ruleset_id from int_games_in_scope),
             few as (select game_id from games),
             joined as (select * from int_games_in_scope as g inner join other on g.k = other.k),
             rolls as (select * from stg_rolls),
             final as (
                 select rolls.*, games.ruleset_id from rolls
                 inner join games on rolls.game_id = games.game_id
                 left join few on rolls.game_id = few.game_id
             ),
             direct as (select * from rolls inner join int_games_in_scope as s on rolls.game_id = s.game_id),
             apart as (select * from rolls inner join joined on rolls.game_id = joined.game_id)
        select * from final union all select * from direct union all select * from apart
    """
    hinted = _hints_by_joins(transpile.to_spark(sql, {}, {}, frozenset({"int_games_in_scope"})))
    # by alias: the table itself (as the side read first, too), a CTE selecting from it and a
    # CTE of that CTE; a CTE that joins the table with something else is not the table
    assert hinted == {("other",): ["g"], ("games", "few"): ["games", "few"], ("s",): ["s"], ("joined",): []}


def test_no_broadcast_table_leaves_the_text_as_it_was():
    sql = "with games as (select * from int_games_in_scope) select * from r inner join games on r.k = games.k"
    assert "BROADCAST" not in transpile.to_spark(sql, {}, {})
    assert "BROADCAST" not in transpile.to_spark(sql, {}, {}, frozenset({"int_player_choices"}))
    assert "/*+ BROADCAST(games) */" in transpile.to_spark(sql, {}, {}, frozenset({"int_games_in_scope"}))

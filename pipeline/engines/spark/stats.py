"""`farkle-logs stats --engine spark`: the SQL models of `sql/` run by Spark SQL.

The same computation as `pipeline.stats.compute`, step for step: the dataset's tables
become `src_<table>` (read from exactly the files its manifest lists), the exact-odds and
policy tables are built on the driver by the same Python and registered, each model is
transpiled from its DuckDB text (`transpile`) and becomes a temporary view (or a cached
table where the model says `-- materialized: table`), and each report is collected as
Arrow.

The result is cast to the types DuckDB gives the same report (found by running the models
in DuckDB over empty tables, which costs milliseconds): Spark sums BIGINTs to BIGINT where
DuckDB gives HUGEINT, and the text, JSON and CSV output must not depend on the engine.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from pipeline.dataset_check import Dataset, open_dataset
from pipeline.engines.spark import transpile
from pipeline.stats import (
    DEFAULT_SECTIONS,
    POLICY_SECTIONS,
    SECTIONS,
    Filters,
    filter_variables,
)
from pipeline.stats.odds import exact_odds_table
from pipeline.stats.runner import MACROS, SQL_DIR, Model, build, build_order, load_models, set_variables
from pipeline.strategy.judge import DEFAULT_BLUNDER_THRESHOLD
from pipeline.tables import TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def compute(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    sections: list[str] | tuple[str, ...] | None = None,
    blunder_threshold: float = DEFAULT_BLUNDER_THRESHOLD,
    *,
    spark: "SparkSession",
) -> dict[str, pa.Table]:
    """The report tables of `sections`, as `pipeline.stats.compute` gives them."""
    chosen = list(DEFAULT_SECTIONS) if sections is None else list(sections)
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown section {unknown[0]!r}: sections are {', '.join(SECTIONS)}")
    names = [t for s in chosen for t in SECTIONS[s]]
    ds = dataset if isinstance(dataset, Dataset) else open_dataset(dataset)
    if filters.since and filters.until and filters.since > filters.until:
        raise ValueError(f"since {filters.since} is after until {filters.until}")
    session = spark.newSession()  # its own temporary views: several datasets in one Spark app
    cached: list[str] = []
    try:
        for table in TABLES:
            _source(session, ds, table).createOrReplaceTempView(f"src_{table}")
        texts = [r[0] for r in session.sql("select distinct cast(ruleset as string) from src_games").collect()]
        variables = filter_variables(filters, texts, blunder_threshold)
        aux: dict[str, pa.Table] = {}
        if any(s in ("bust", "players") for s in chosen):  # the sections reading exact_odds
            aux["exact_odds"] = exact_odds_table(texts)
        if any(s in POLICY_SECTIONS for s in chosen):
            from pipeline.strategy.judge import policy_tables

            aux.update(policy_tables(texts))
        for name, table in aux.items():
            session.createDataFrame(table).createOrReplaceTempView(name)
        models = load_models()
        macros = transpile.load_macros(SQL_DIR / f"{MACROS}.sql")
        reports = [f"rpt_{t}" for t in names]
        for name in build_order(reports, models):
            model = models[name]
            if model.materialized == "query":
                continue
            view = session.sql(transpile.to_spark(model.sql, macros, variables))
            view.createOrReplaceTempView(name)
            if model.materialized == "table":
                session.catalog.cacheTable(name)
                cached.append(name)
        schemas = duckdb_schemas(reports, models, aux, variables)
        out = {}
        for table, report in zip(names, reports):
            result = session.sql(transpile.to_spark(models[report].sql, macros, variables)).toArrow()
            out[table] = result.cast(schemas[report])
        return out
    finally:
        for name in cached:
            session.catalog.uncacheTable(name)


def _source(spark: "SparkSession", ds: Dataset, table: str) -> "DataFrame":
    """The table with the contract's schema (pipeline.tables): a column missing from an
    older file reads as null, as DuckDB's union_by_name gives it, and no Spark job is spent
    inferring a schema from the files' footers."""
    from pyspark.sql.pandas.types import from_arrow_schema

    files = table_files(ds, table)
    if not files:
        return spark.createDataFrame(TABLES[table].empty_table())
    return spark.read.schema(from_arrow_schema(TABLES[table])).parquet(*files)


def table_files(ds: Dataset, table: str) -> list[str]:
    """The files of `table` that the dataset's manifest lists (never a directory listing)."""
    listed = getattr(ds, "table_files", None)
    if callable(listed):
        return [str(p) for p in listed(table)]
    root = ds.root or ds.path
    return [str(root / table / name) for name in ds.manifest.get("tables", {}).get(table, [])]


def duckdb_schemas(
    reports: list[str], models: dict[str, Model], aux: dict[str, pa.Table], variables: dict[str, Any]
) -> dict[str, pa.Schema]:
    """The Arrow schema DuckDB gives each report, from the same models over empty tables."""
    con = duckdb.connect()
    try:
        for table, schema in TABLES.items():
            con.register(f"src_{table}", schema.empty_table())
        con.execute((SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8"))
        set_variables(con, variables)
        for name, table in aux.items():
            con.register(name, table)
        build(con, reports, models)
        return {name: con.sql(models[name].sql).limit(0).to_arrow_table().schema for name in reports}
    finally:
        con.close()

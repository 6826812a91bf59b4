"""`farkle-logs stats --engine spark`: the SQL models of `sql/` run by Spark SQL.

The same computation as `pipeline.stats`, step for step: the dataset's tables become
`src_<table>` (read from exactly the files its manifest lists, with the contract's schema),
the exact-odds and policy tables are built on the driver by the same Python and
registered, each model is transpiled from its DuckDB text (`transpile`) and becomes a
temporary view (or a cached table where the model says `-- materialized: table`), and
each report is collected as Arrow.

A report's result is cast to the types DuckDB gives it (found by running the models in
DuckDB over empty tables, which costs milliseconds): Spark sums BIGINTs to BIGINT where
DuckDB gives HUGEINT, and the text, JSON and CSV output must not depend on the engine.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import duckdb
import pyarrow as pa

from pipeline import storage
from pipeline.dataset.layout import Dataset, open_dataset
from pipeline.engines.spark import transpile
from pipeline.stats import Filters, League, filter_variables, plan_sections
from pipeline.stats.odds import exact_odds_table
from pipeline.stats.runner import (
    MACROS,
    PYTHON_MODELS,
    SQL_DIR,
    Model,
    build,
    build_order,
    load_models,
    python_function,
    set_variables,
)
from pipeline.strategy.judge import DEFAULT_BLUNDER_THRESHOLD
from pipeline.dataset.tables import TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BATCH_ROWS = 65_536  # rows per Arrow batch from a task (spark.sql.execution.arrow.maxRecordsPerBatch's scale)


def compute(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    sections: list[str] | tuple[str, ...] | None = None,
    blunder_threshold: float = DEFAULT_BLUNDER_THRESHOLD,
    *,
    spark: "SparkSession",
    league: League = League(),
) -> dict[str, pa.Table]:
    """The report tables of `sections`, as `pipeline.stats.compute` gives them."""
    names, with_odds, with_policy = plan_sections(sections)
    with session(spark, dataset, filters, with_odds, with_policy, blunder_threshold, league) as models:
        models.plan_types([f"rpt_{name}" for name in names])
        return {name: models.report(f"rpt_{name}") for name in names}


class SparkModels:
    """The models of `sql/` over one dataset in a Spark session of their own."""

    def __init__(self, spark: "SparkSession", variables: dict[str, Any], aux: dict[str, pa.Table]):
        self.spark = spark
        self.variables = variables
        self.aux = aux
        self.models = load_models()
        self.macros = transpile.load_macros(SQL_DIR / f"{MACROS}.sql")
        self.cached: list[str] = []
        self._built: set[str] = set()
        self._types: dict[str, pa.Schema] = {}

    def sql(self, name: str) -> str:
        """The model's Spark SQL, filters bound."""
        return transpile.to_spark(self.models[name].sql, self.macros, self.variables)

    def build(self, name: str) -> None:
        """Create the views (cached tables) `name` depends on, in dependency order."""
        for dep in build_order([name], self.models):
            model = self.models.get(dep) or PYTHON_MODELS[dep]
            if dep in self._built or (dep == name and model.materialized == "query"):
                continue
            if model.materialized == "python":  # computed on the driver from its inputs' rows
                inputs = {i: self.spark.table(i).toArrow() for i in model.depends_on}
                self.aux[dep] = python_function(model)(inputs)
                self.spark.createDataFrame(self.aux[dep]).createOrReplaceTempView(dep)
                self._built.add(dep)
                continue
            self.spark.sql(self.sql(dep)).createOrReplaceTempView(dep)
            if model.materialized == "table":
                self.spark.catalog.cacheTable(dep)
                self.cached.append(dep)
            self._built.add(dep)

    def run(self, name: str) -> pa.Table:
        """Any model's rows, as Spark gives them (its types)."""
        self.build(name)
        if name in PYTHON_MODELS and name not in self.models:
            return self.spark.table(name).toArrow()
        return self.spark.sql(self.sql(name)).toArrow()

    def plan_types(self, reports: list[str]) -> None:
        """The DuckDB types of these reports, found in one DuckDB pass (not one per report)."""
        self._types.update(duckdb_schemas(reports, self.models, self.aux, self.variables))

    def report(self, name: str) -> pa.Table:
        """A report's rows with the types DuckDB gives it."""
        if name not in self._types:
            self.plan_types([name])
        return self.run(name).cast(self._types[name])

    def close(self) -> None:
        for name in self.cached:
            self.spark.catalog.uncacheTable(name)
        self.cached.clear()


@contextmanager
def session(
    spark: "SparkSession",
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    with_odds: bool = True,
    with_policy: bool = False,
    blunder_threshold: float = DEFAULT_BLUNDER_THRESHOLD,
    league: League = League(),
) -> Iterator[SparkModels]:
    """`pipeline.stats.session` for Spark: the dataset's tables, the filters and the
    Python-built tables (exact odds, policy) ready for any model of `sql/`."""
    ds = dataset if isinstance(dataset, Dataset) else open_dataset(dataset)
    if filters.since and filters.until and filters.since > filters.until:
        raise ValueError(f"since {filters.since} is after until {filters.until}")
    own = spark.newSession()  # its own temporary views: several datasets in one Spark app
    for table in TABLES:
        _source(own, ds, table).createOrReplaceTempView(f"src_{table}")
    texts = [r[0] for r in own.sql("select distinct cast(ruleset as string) from src_games").collect()]
    aux: dict[str, pa.Table] = {}
    if with_odds:
        aux["exact_odds"] = exact_odds_table(texts)
    if with_policy:
        from pipeline.strategy.judge import policy_tables

        aux.update(policy_tables(texts))
    for name, table in aux.items():
        own.createDataFrame(table).createOrReplaceTempView(name)
    models = SparkModels(own, filter_variables(filters, texts, blunder_threshold, league), aux)
    try:
        yield models
    finally:
        models.close()


def _source(spark: "SparkSession", ds: Dataset, table: str) -> "DataFrame":
    """The table with the contract's schema (pipeline.dataset.tables): a column missing from an
    older file reads as null, as DuckDB's union_by_name gives it, and no Spark job is spent
    inferring a schema from the files' footers."""
    from pyspark.sql.pandas.types import from_arrow_schema

    files = table_files(ds, table)
    if not files:
        return spark.createDataFrame(TABLES[table].empty_table())
    schema = from_arrow_schema(TABLES[table])
    if any(storage.is_url(f) for f in files):
        return _read_through_storage(spark, files, table, schema)
    return spark.read.schema(schema).parquet(*files)


def _read_through_storage(spark: "SparkSession", files: list[str], table: str, schema) -> "DataFrame":
    """The files of a dataset on an object store, read by Spark tasks through
    pipeline.storage (fsspec), one task per file: Spark's own reader would need the
    store's Hadoop connector (hadoop-aws for s3a://) on every executor, which a pip install
    of pyspark does not bring."""
    arrow_schema = TABLES[table]

    def read(batches):
        for batch in batches:
            for url in batch.column("url").to_pylist():
                data = storage.read_parquet(url, schema=arrow_schema)
                yield from data.to_batches(max_chunksize=BATCH_ROWS)

    listing = spark.createDataFrame([(f,) for f in files], "url string").repartition(len(files))
    return listing.mapInArrow(read, schema)


def table_files(ds: Dataset, table: str) -> list[str]:
    """The files of `table` that the dataset's manifest lists (never a directory listing)."""
    return [str(p) for p in ds.table_files(table)]


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

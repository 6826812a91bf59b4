"""`farkle-logs stats --engine spark`: the SQL models of `sql/`, the work that grows with the
events on Spark, the rest in DuckDB on the driver.

The same computation as `pipeline.stats`, step for step: the dataset's tables become
`src_<table>` (read from exactly the files its manifest lists, with the contract's schema),
the exact-odds and policy tables are built on the driver by the same Python, and every model
runs where `placement` puts it:

- on Spark, each model that reads the event tables (EVENT_TABLES: a row per event, roll,
  turn or choice) or a row-level model that runs on Spark. These are transpiled from their
  DuckDB text (`transpile`) and become temporary views (cached tables where the model says
  `-- materialized: table`);
- in Spark's tasks, by DuckDB, the additive facts over one event table (`fact_tasks`: each
  task computes them over its share of the files, the driver adds the partial sums up): one
  Spark job where Spark SQL would take a few per fact, at DuckDB's speed per row;
- on the driver, in DuckDB with the models' own text, each model whose inputs are all
  there: the game tables (a row per game, seat or finding: about a 300th of the events) and
  what is made of them alone (the game scope every fact joins), the facts, the Python
  models, the tables built on the driver. Most reports are such models. A driver model a
  Spark model reads goes to Spark as its rows, joined by broadcast.

The facts the driver needs are collected together, each Spark query started from its own
thread and the tasks' job from another, so their jobs share the cores instead of queueing
behind each other's driver work. A fact is cast to the types DuckDB gives it (found by
running the models in DuckDB over empty tables, which costs milliseconds) before DuckDB
reads it, and so is a report Spark ran: Spark sums BIGINTs to BIGINT where DuckDB gives
HUGEINT, and the text, JSON and CSV output must not depend on the engine.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import duckdb
import pyarrow as pa

from pipeline import storage
from pipeline.dataset.layout import Dataset, open_dataset
from pipeline.engines.spark.fact_tasks import TaskFact, combine, compact, compute_partials, task_fact
from pipeline.engines.spark.spark_sql import spark_sql
from pipeline.stats import Filters, League, filter_variables, plan_sections
from pipeline.stats.odds import exact_odds_table
from pipeline.stats.runner import (
    MACROS,
    PYTHON_MODELS,
    before_inputs,
    SQL_DIR,
    Model,
    build,
    build_order,
    close,
    connect,
    load_models,
    register_sources,
    python_function,
    set_variables,
    source_tables,
)
from pipeline.strategy.judge import DEFAULT_BLUNDER_THRESHOLD
from pipeline.dataset.tables import TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BATCH_ROWS = 65_536  # rows per Arrow batch from a task (spark.sql.execution.arrow.maxRecordsPerBatch's scale)
SPARK = "spark"
DRIVER = "driver"
AGGREGATE_PREFIX = "fct_"  # the facts: aggregates the reports re-aggregate (sql/ layers, pipeline.stats.runner)
# The tables Spark reads: a row per event, roll, turn or choice (and per bad line). The others
# (games, seats, findings) are read by DuckDB on the driver, as the local engine does.
EVENT_TABLES = ("events", "rolls", "turns", "decisions", "rejects")
GAME_TABLES = tuple(table for table in TABLES if table not in EVENT_TABLES)
COLLECT_THREADS = 8  # facts collected at once; each thread mostly waits for its job


def placement(models: dict[str, Model]) -> dict[str, str]:
    """Where each model runs (SPARK or DRIVER), from the models alone: on Spark if it reads
    an event table (EVENT_TABLES: rows that grow with the events) or a row-level model that
    runs on Spark; on the driver if everything it reads is already there: the game tables
    (a row per game, seat or finding: about a 300th of the events), facts Spark aggregated,
    Python models, the driver's tables (exact odds, policy). Python models run on the driver."""
    where: dict[str, str] = {name: DRIVER for name in PYTHON_MODELS}
    for name in build_order(sorted(models), models):
        model = models.get(name) or PYTHON_MODELS[name]
        if model.materialized == "python":
            where[name] = DRIVER
        elif source_tables(model) & set(EVENT_TABLES) or any(
            where[dep] == SPARK and not dep.startswith(AGGREGATE_PREFIX) for dep in model.depends_on
        ):
            where[name] = SPARK
        else:
            where[name] = DRIVER
    return where


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
        models.prepare([f"rpt_{name}" for name in names])
        return {name: models.report(f"rpt_{name}") for name in names}


class SparkModels:
    """The models of `sql/` over one dataset: a Spark session of their own for the models
    that read the event tables (and the tasks computing facts over them), a DuckDB
    connection on the driver for those over the game tables and aggregates."""

    def __init__(
        self,
        spark: "SparkSession",
        variables: dict[str, Any],
        aux: dict[str, pa.Table],
        dataset: Dataset | None = None,
        duck: duckdb.DuckDBPyConnection | None = None,
    ):
        """`dataset`: whose event tables Spark and the tasks read; `duck`: the driver's DuckDB
        connection with its game tables (`session`), owned from here on (without one, a
        connection of no source tables)."""
        self.spark = spark
        self.variables = variables
        self.aux = aux
        self.dataset = dataset
        # each event table's files, for the facts the tasks compute (fact_tasks; none: every
        # fact by Spark SQL)
        self.files = {t: table_files(dataset, t) for t in EVENT_TABLES} if dataset is not None else {}
        self._unread = set(EVENT_TABLES) if dataset is not None else set()  # no Spark view yet (`_read_sources`)
        self.models = load_models()
        self.where = placement(self.models)
        self.cached: list["DataFrame"] = []
        self._on_spark: set[str] = set()  # views (or tables) made in the Spark session
        self._on_driver: set[str] = set()  # views, tables or Arrow tables in DuckDB
        self.broadcast: set[str] = set()  # tables the joins broadcast (`_materialize`, the driver's in `build`)
        self._types: dict[str, pa.Schema] = {}
        self._collected: dict[str, pa.Table] = {}  # reports Spark ran in `prepare`, until asked for
        self.duck = duck if duck is not None else connect(None)
        try:
            set_variables(self.duck, variables)
            for name, table in aux.items():
                self.duck.register(name, table)
        except BaseException:
            close(self.duck)
            raise

    def _model(self, name: str) -> Model:
        return self.models.get(name) or PYTHON_MODELS[name]

    def sql(self, name: str) -> str:
        """The model's Spark SQL, filters bound (kept between runs: pipeline.engines.spark.spark_sql)."""
        model = self.models[name]
        broadcast = frozenset(self.broadcast.intersection(model.depends_on))
        return spark_sql(model.sql, SQL_DIR / f"{MACROS}.sql", self.variables, broadcast)

    # ------------------------------------------------------------------ Spark side
    def build(self, name: str) -> None:
        """Create in Spark the views (cached tables) `name` depends on, in dependency order; a
        model of the driver that a Spark model reads goes to Spark as its rows (not what that
        model read on the driver)."""
        order = build_order([name], self.models)
        read_by_spark = {dep for user in order if self.where[user] == SPARK for dep in self._model(user).depends_on}
        for dep in order:
            model = self._model(dep)
            if dep in self._on_spark or (dep == name and model.materialized == "query"):
                continue
            if self.where[dep] == DRIVER and dep not in read_by_spark and dep != name:
                continue
            if self.where[dep] == DRIVER:  # a game table's model, say: its rows, sent to Spark
                rows = self.driver_rows(dep)
                self.spark.createDataFrame(rows).createOrReplaceTempView(dep)
                if 0 <= self.broadcast_limit() and rows.nbytes <= self.broadcast_cap():
                    self.broadcast.add(dep)  # joined by broadcast, never by shuffling the events to it
                self._on_spark.add(dep)
                continue
            self._read_sources(model)
            rows = self.spark.sql(self.sql(dep))
            if model.materialized == "table" and not (dep == name and dep.startswith(AGGREGATE_PREFIX)):
                rows = self._materialize(dep, rows)
            rows.createOrReplaceTempView(dep)
            self._on_spark.add(dep)

    def _read_sources(self, model: Model) -> None:
        """The event tables a Spark model reads, as views `src_<table>` (made when first
        needed: a run whose facts all come from the tasks reads them through DuckDB alone)."""
        for table in source_tables(model) & self._unread:
            assert self.dataset is not None  # (tables are unread only with a dataset)
            _source(self.spark, self.dataset, table).createOrReplaceTempView(f"src_{table}")
            self._unread.discard(table)

    def _materialize(self, name: str, rows: "DataFrame") -> "DataFrame":
        """A table model computed once, before the queries that read it (which then run at
        once). Spark's size estimates of such a model are guesses (a join's estimate is the
        product of its sides'), so a small table would be shuffled and sorted against the
        rows it filters, or worse, those rows broadcast to it. Once computed, its true size
        is known: a table Spark would broadcast anyway (under
        spark.sql.autoBroadcastJoinThreshold) is brought to the driver, as a broadcast does,
        and registered as local rows whose size Spark then knows.

        A larger table stays on the executors, kept as its computed rows (a local checkpoint: a plan of its own),
        not as a cached plan: the models read it through a CTE, and a query with CTEs does
        not match a cached plan with CTEs of its own, so each computed it again. Up to
        `broadcast_cap` the models that join it broadcast it (a hint in their Spark SQL:
        transpile.hint_broadcasts): above Spark's threshold such a join is planned as a
        sort-merge join, which adaptive execution turns into a broadcast only after both
        sides were shuffled, the rows it filters included (docs/spark.md, "A table model")."""
        rows = rows.cache()
        rows.count()
        size = int(str(rows._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
        limit = self.broadcast_limit()
        if size <= limit:
            local = self.spark.createDataFrame(rows.toArrow())
            rows.unpersist()
            return local
        leaf = rows.localCheckpoint(eager=True)
        rows.unpersist()
        self.cached.append(leaf)
        if 0 <= limit and size <= self.broadcast_cap():  # -1: the user turned broadcasts off
            self.broadcast.add(name)
        return leaf

    def broadcast_limit(self) -> int:
        """The largest table Spark broadcasts, in bytes (-1: none)."""
        return _bytes(self.spark.conf.get("spark.sql.autoBroadcastJoinThreshold") or "10MB")

    def broadcast_cap(self) -> int:
        """The largest cached table model marked for broadcast, in bytes: an eighth of the
        driver's heap (a broadcast is collected there, then held by every executor; their
        memory is usually at least the driver's). -1 where the heap cannot be asked (Spark
        Connect): no mark, Spark's own plan."""
        try:
            jvm: Any = self.spark.sparkContext._jvm
            return int(jvm.java.lang.Runtime.getRuntime().maxMemory()) // 8
        except Exception:  # noqa: BLE001 - no JVM on this side: leave the plan to Spark
            return -1

    def spark_rows(self, name: str) -> pa.Table:
        """A Spark model's rows, as Spark gives them (its types)."""
        self.build(name)
        if self._model(name).materialized == "query":
            return self.spark.sql(self.sql(name)).toArrow()
        return self.spark.table(name).toArrow()

    # ------------------------------------------------------------------ driver side
    def prepare(self, names: list[str]) -> None:
        """Collect, all at once, the Spark models whose rows the driver will need for `names`
        and that need nothing from the driver but the game tables' models (the facts of every
        report in one wave); what is left is collected when asked for."""
        order = build_order(names, self.models)
        wanted = {
            dep
            for name in order
            if self.where[name] == DRIVER
            for dep in self._model(name).depends_on
            if self.where[dep] == SPARK
        }
        ready = [
            name
            for name in order
            if (name in wanted or (name in names and self.where[name] == SPARK))
            and name not in self._on_driver
            and not any(self._reads_spark(dep) for dep in build_order([name], self.models) if self.where[dep] == DRIVER)
        ]
        self.plan_types([*names, *ready])  # one DuckDB pass for the reports and their facts
        in_tasks, given = self._task_facts([name for name in ready if name in wanted])
        on_spark = [name for name in ready if name not in {f.name for f in in_tasks}]
        for name in on_spark:
            self.build(name)  # the views are made here, one thread, before the queries start
        with ThreadPoolExecutor(max_workers=max(1, min(COLLECT_THREADS, len(on_spark) + 1))) as pool:
            partials = pool.submit(self._partials, in_tasks, given) if in_tasks else None
            rows = list(pool.map(self.spark_rows, on_spark))
            summed = partials.result() if partials is not None else {}
        for fact in in_tasks:
            self._register(fact.name, combine(self.duck, fact, summed[fact.name], self._types[fact.name]))
        for name, table in zip(on_spark, rows):
            if name in wanted:
                self._register(name, table)
            else:
                self._collected[name] = table

    def _reads_spark(self, name: str) -> bool:
        """Whether a model needs rows from Spark (its own, or those of a model it reads)."""
        return any(self.where[dep] == SPARK for dep in build_order([name], self.models))

    def _task_facts(self, names: list[str]) -> tuple[list[TaskFact], dict[str, pa.Table]]:
        """The facts among `names` that DuckDB computes in Spark's tasks (fact_tasks), and
        the driver's rows they read, as sent (`compact`): their table has files, and what
        they read from the driver is small enough to send to every task (the broadcast cap)."""
        on_driver = {name for name, where in self.where.items() if where == DRIVER}
        facts = [f for f in (task_fact(n, self.models, on_driver, set(self.aux)) for n in names) if f is not None]
        facts = [f for f in facts if self.files.get(f.table)]
        sent = {g: compact(self.driver_rows(g)) for f in facts for g in f.given}
        cap = self.broadcast_cap()
        facts = [f for f in facts if all(sent[g].nbytes <= cap for g in f.given)]
        return facts, {g: sent[g] for f in facts for g in f.given}

    def _partials(self, facts: list[TaskFact], given: dict[str, pa.Table]) -> dict[str, list[pa.Table]]:
        tables = {**given, **{a: self.aux[a] for f in facts for a in f.aux}}
        sql = {m: self._model(m).sql for f in facts for m in f.models}
        return compute_partials(self.spark, facts, self.files, sql, tables, self.variables)

    def _register(self, name: str, spark_rows: pa.Table) -> None:
        """A Spark model's rows in DuckDB, with the types DuckDB gives the model."""
        self.duck.register(name, spark_rows.cast(self._types[name]))
        self._on_driver.add(name)

    def driver_rows(self, name: str) -> pa.Table:
        """A model's rows in DuckDB on the driver (a Spark model's collected first)."""
        order = build_order([name], self.models)
        collect = {name} | {  # the Spark models whose rows the driver's models read
            dep
            for user in order
            if self.where[user] == DRIVER
            for dep in self._model(user).depends_on
            if self.where[dep] == SPARK
        }
        for dep in order:
            model = self._model(dep)
            if dep in self._on_driver or (dep == name and model.materialized == "query"):
                continue
            if self.where[dep] == SPARK:
                if dep in collect:
                    self.plan_types([dep])
                    self._register(dep, self.spark_rows(dep))
                continue
            if model.materialized == "python":
                before_inputs(model)
                inputs = {i: self.driver_rows(i) for i in model.depends_on}
                self.duck.register(dep, python_function(model)(inputs))
            else:
                kind = "table" if model.materialized == "table" else "view"
                self.duck.execute(f"create temp {kind} {dep} as\n{model.sql}")
            self._on_driver.add(dep)
        if self._model(name).materialized == "query":
            return self.duck.sql(self.models[name].sql).to_arrow_table()
        return self.duck.sql(f"select * from {name}").to_arrow_table()

    # ------------------------------------------------------------------ either
    def run(self, name: str) -> pa.Table:
        """Any model's rows where `placement` runs it (a Spark model's with Spark's types)."""
        if self.where[name] == SPARK:
            collected = self._collected.pop(name, None)
            return collected if collected is not None else self.spark_rows(name)
        return self.driver_rows(name)

    def plan_types(self, names: list[str]) -> None:
        """The DuckDB types of these models, found in one DuckDB pass (not one per model)."""
        missing = [n for n in names if n not in self._types]
        if missing:
            self._types.update(duckdb_schemas(missing, self.models, self.aux, self.variables))

    def report(self, name: str) -> pa.Table:
        """A report's rows with the types DuckDB gives it."""
        self.plan_types([name])
        return self.run(name).cast(self._types[name])

    def close(self) -> None:
        for rows in self.cached:
            _free(rows)
        self.cached.clear()
        close(self.duck)


def _free(leaf: "DataFrame") -> None:
    """Drop a local checkpoint's blocks from the executors. `unpersist` does not: the rows
    are the RDD under the plan, not a cache of it, and a long-lived session (a notebook, the
    bench) would hold every run's tables until it stops."""
    leaf.unpersist()
    try:
        leaf._jdf.queryExecution().analyzed().rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - not a checkpoint (or no JVM here): nothing more to free
        pass


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
    duck = connect(None)
    try:
        register_sources(duck, ds, GAME_TABLES)
        texts = [r[0] for r in duck.sql("select distinct ruleset::varchar from src_games").fetchall()]
        aux: dict[str, pa.Table] = {}
        if with_odds:
            aux["exact_odds"] = exact_odds_table(texts)
        if with_policy:
            from pipeline.strategy.judge import policy_tables

            aux.update(policy_tables(texts))
        for name, table in aux.items():
            own.createDataFrame(table).createOrReplaceTempView(name)
        models = SparkModels(own, filter_variables(filters, texts, blunder_threshold, league), aux, ds, duck)
    except BaseException:
        close(duck)
        raise
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


def _bytes(setting: str) -> int:
    """A Spark size setting ("10MB", "10485760b", "-1") in bytes."""
    text = setting.strip().lower().removesuffix("b")
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def duckdb_schemas(
    names: list[str], models: dict[str, Model], aux: dict[str, pa.Table], variables: dict[str, Any]
) -> dict[str, pa.Schema]:
    """The Arrow schema DuckDB gives each model, from the same models over empty tables."""
    con = duckdb.connect()
    try:
        for table, schema in TABLES.items():
            con.register(f"src_{table}", schema.empty_table())
        con.execute((SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8"))
        set_variables(con, variables)
        for name, table in aux.items():
            con.register(name, table)
        build(con, names, models)
        return {
            name: con.sql(
                models[name].sql if name in models and models[name].materialized == "query" else f"select * from {name}"
            )
            .limit(0)
            .to_arrow_table()
            .schema
            for name in names
        }
    finally:
        con.close()

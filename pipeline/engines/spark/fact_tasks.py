"""The additive facts of `stats --engine spark` computed by DuckDB inside Spark's tasks.

The facts over the big tables (rolls, turns, decisions) are sums of counts per player,
ruleset and the like: each task computes a fact with the models' own DuckDB text over its
share of one table's files, and the driver adds the partial sums up (`combine`). This is the
shape the ingest already has (the compiled scan inside the tasks) and it is one Spark job
for all of them, where Spark SQL spends a few jobs per fact and does several times
DuckDB's work per row (docs/spark.md, "Where the stats' time goes").

A fact goes to the tasks when
- its SQL says which columns are partial sums (`-- partial sums: a, b`, every other column
  is a key: the rows are re-aggregated by summing those columns per key);
- below it, apart from what the driver computes (`given`: the game scope, whose window
  over every game no task could compute) and the driver's tables (exact odds), it reads
  one event table through views without windows: each row's share of the sums depends on
  that row alone, so a task holding some of the files holds all a partial needs. A fact
  reading two tables, or a table model or a window below it, stays on Spark SQL, as does
  every fact without the line.
The given tables travel to the tasks with the function (Spark broadcasts a large closure),
so they are only sent up to the broadcast cap that Spark SQL's joins have too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pyarrow as pa

from pipeline import storage
from pipeline.dataset.tables import TABLES
from pipeline.stats.runner import PYTHON_MODELS, Model, build_order, source_tables, strip_comments

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARTIAL_SUMS = re.compile(r"^-- partial sums: *(.+)$", re.MULTILINE)
_WINDOW = re.compile(r"\bover\s*\(", re.IGNORECASE)
TASK_BYTES = 128 << 20  # files of about this many bytes per task, beyond one task per core
RESULT_SCHEMA = "fact string, rows binary"  # each task's partial of each fact, as Arrow IPC


def partial_sums(model: Model) -> tuple[str, ...]:
    """The columns the model's `-- partial sums:` line names (none: not additive here)."""
    found = PARTIAL_SUMS.search(model.sql)
    if not found:
        return ()
    return tuple(c.strip() for c in found.group(1).split(","))


@dataclass(frozen=True)
class TaskFact:
    """A fact the tasks compute: over `table`'s files, the `models` (in build order, the
    fact last) reading `given` tables and `aux` tables besides."""

    name: str
    table: str
    sums: tuple[str, ...]
    models: tuple[str, ...]
    given: tuple[str, ...]
    aux: tuple[str, ...]


def task_fact(name: str, models: dict[str, Model], given: set[str], aux: set[str]) -> TaskFact | None:
    """How the tasks would compute fact `name`, or None when they cannot (see the module)."""
    model = models.get(name)
    if model is None or not partial_sums(model):
        return None
    below: set[str] = set()
    stack, used_given = [name], set()
    while stack:
        current = stack.pop()
        if current in below:
            continue
        if current in PYTHON_MODELS and current not in models:
            return None  # computed in Python on the driver
        below.add(current)
        for dep in models[current].depends_on:
            if dep in given:
                used_given.add(dep)
            else:
                stack.append(dep)
    texts = [strip_comments(models[m].sql) for m in below]
    if any(models[m].materialized != "view" for m in below - {name}) or any(_WINDOW.search(t) for t in texts):
        return None  # a table or a window below sees every row at once: not so over a share
    tables = {t for m in below for t in source_tables(models[m])}
    if len(tables) != 1 or not tables <= set(TABLES):
        return None
    words = {w for text in texts for w in re.findall(r"\w+", text)}
    order = tuple(m for m in build_order([name], models) if m in below)
    return TaskFact(
        name, tables.pop(), partial_sums(model), order, tuple(sorted(used_given)), tuple(sorted(aux & words))
    )


def task_bins(files: list[tuple[str, str]], parallelism: int) -> list[list[tuple[str, str]]]:
    """The (table, file) pairs split into tasks of about equal bytes: one per core, or where
    the data is large a whole number of waves of them (about TASK_BYTES each: no last wave
    with a core idle), never more tasks than files; the largest file first into the
    lightest task."""
    sizes = {path: _size(path) for _, path in files}
    total = sum(sizes.values())
    cores = max(1, parallelism)
    waves = -(-total // (TASK_BYTES * cores))
    count = min(len(files), cores * max(1, waves))
    bins: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    loads = [0] * count
    for table, path in sorted(files, key=lambda f: (-sizes[f[1]], f)):
        lightest = loads.index(min(loads))
        bins[lightest].append((table, path))
        loads[lightest] += max(sizes[path], 1)
    return [b for b in bins if b]


def _size(path: str) -> int:
    """A file's size, for balancing (a URL's is not asked for: 1, so files count alike)."""
    if storage.is_url(path):
        return 1
    try:
        return os.path.getsize(path)
    except OSError:
        return 1


def compute_partials(
    spark: "SparkSession",
    facts: list[TaskFact],
    files: dict[str, list[str]],
    sql: dict[str, str],
    tables: dict[str, pa.Table],
    variables: dict[str, Any],
) -> dict[str, list[pa.Table]]:
    """Every task's partial rows of each fact, in one Spark job: `files` the source tables'
    files, `sql` the models' DuckDB text, `tables` the given and aux tables' rows as they
    are sent (the caller's `compact` where it pays)."""
    wanted = sorted({f.table for f in facts})
    units = [(table, path) for table in wanted for path in files.get(table, [])]
    bins = task_bins(units, _parallelism(spark))
    shipped = {name: _ipc(table) for name, table in tables.items()}
    threads = int(spark.conf.get("spark.task.cpus", "1") or 1)
    job = _bin_task(bins, facts, sql, shipped, variables, threads)
    rows = spark.range(0, len(bins), 1, max(1, len(bins))).mapInArrow(job, RESULT_SCHEMA).collect()
    partials: dict[str, list[pa.Table]] = {f.name: [] for f in facts}
    for row in rows:
        partials[row["fact"]].append(pa.ipc.open_stream(row["rows"]).read_all())
    return partials


def _parallelism(spark: "SparkSession") -> int:
    """The cores Spark runs tasks on (Spark Connect has no SparkContext to ask: its setting)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect
        return int(spark.conf.get("spark.default.parallelism", "2") or 2)


def compact(table: pa.Table) -> pa.Table:
    """The table with each text column that repeats itself dictionary-encoded: the game scope
    carries its ruleset's JSON text on every game (35 MB at 90,000 games, 5 MB encoded),
    and it is sent to every task."""
    import pyarrow.compute as pc

    columns = []
    for column in table.columns:
        if (
            pa.types.is_string(column.type)
            and table.num_rows
            and pc.count_distinct(column).as_py() * 2 <= table.num_rows
        ):
            column = column.dictionary_encode()
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _bin_task(
    bins: list[list[tuple[str, str]]],
    facts: list[TaskFact],
    sql: dict[str, str],
    shipped: dict[str, bytes],
    variables: dict[str, Any],
    threads: int,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function of Spark task i (the i of `spark.range`): the facts over bins[i]'s files."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                for fact, rows in partials_of_bin(bins[index], facts, sql, shipped, variables, threads):
                    yield pa.record_batch([pa.array([fact]), pa.array([rows], pa.binary())], ["fact", "rows"])

    return run


def partials_of_bin(
    units: list[tuple[str, str]],
    facts: list[TaskFact],
    sql: dict[str, str],
    shipped: dict[str, bytes],
    variables: dict[str, Any],
    threads: int,
) -> Iterator[tuple[str, bytes]]:
    """(fact, its partial rows as Arrow IPC) for each fact over these files: what one task
    does, in a DuckDB connection of its own (macros, filters and memory limit as the local
    engine's)."""
    from pipeline.stats.runner import close, connect, set_variables

    by_table: dict[str, list[str]] = {}
    for table, path in units:
        by_table.setdefault(table, []).append(path)
    con = connect(None)
    try:
        con.execute(f"set threads = {max(1, threads)}")
        set_variables(con, variables)
        for name, data in shipped.items():
            con.register(name, pa.ipc.open_stream(data).read_all())
        for table, paths in by_table.items():
            storage.register_duckdb(con, paths)
            register_source(con, table, paths)
        made: set[str] = set()
        for fact in facts:
            if fact.table not in by_table:
                continue
            for name in fact.models[:-1]:
                if name not in made:
                    con.execute(f"create temp view {name} as\n{sql[name]}")
                    made.add(name)
            yield fact.name, _ipc(con.sql(sql[fact.name]).to_arrow_table())
    finally:
        close(con)


def register_source(con: Any, table: str, paths: list[str]) -> None:
    """View `src_<table>` over these files with every column of the contract: a share of
    the files may all predate a column the other files have (it reads as null, as the whole
    table's union_by_name gives it)."""
    from pipeline.dataset.layout import duckdb_path

    files = ", ".join("'" + duckdb_path(p).replace("'", "''") + "'" for p in paths)
    read = f"read_parquet([{files}], hive_partitioning = false, union_by_name = true)"
    con.execute(f"create temp view src_{table} as select * from {read}")
    have = {row[0] for row in con.execute(f"describe src_{table}").fetchall()}
    if set(TABLES[table].names) - have:
        con.register(f"src_{table}_contract", pa.Table.from_batches([], TABLES[table]))
        con.execute(
            f"create or replace temp view src_{table} as "
            f"select * from src_{table}_contract union all by name select * from {read}"
        )


def combine(con: Any, fact: TaskFact, partials: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The fact's rows from the tasks' partials: the `sums` columns summed per key (every
    other column), in DuckDB on the driver, with the types of `schema` (DuckDB's own for the
    fact: a sum of BIGINTs is a HUGEINT until cast back)."""
    if not partials or not any(t.num_rows for t in partials):
        return pa.Table.from_batches([], schema)
    rows = pa.concat_tables([t.cast(schema) for t in partials])
    keys = [c for c in schema.names if c not in fact.sums]
    columns = ", ".join(f'sum("{c}") as "{c}"' if c in fact.sums else f'"{c}"' for c in schema.names)
    group = ("group by " + ", ".join(f'"{k}"' for k in keys)) if keys else ""
    view = f"{fact.name}__partials"
    con.register(view, rows)
    try:
        return con.sql(f"select {columns} from {view} {group}").to_arrow_table().cast(schema)
    finally:
        con.unregister(view)

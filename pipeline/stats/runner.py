"""Run the named SQL models of `sql/` in DuckDB.

Every file `sql/<name>.sql` (installed as package `pipeline.sql`) is one model: a chain of named CTEs ending in `select * from
final`. Models refer to each other, to the dataset's tables (`src_<table>`, defined here from
the files the dataset's manifest lists) and to `exact_odds` by name. Layers, by file-name prefix:

- `stg_`  rename and cast one source table;
- `int_`  apply the filters, join what belongs together;
- `fct_`  additive facts (counts, sums) that reports re-aggregate;
- `rpt_`  the reports `stats` prints, each one table.

stg/int/fct models become temporary views, or temporary tables when their first line is
`-- materialized: table` (models several reports read). Only the models a requested report
depends on are built. `sql/macros.sql` (shared macros) runs first. A few models also exist
over one part of the games, made here from their own text with the game scope replaced
(`_scoped_variants`: `int_choice_values_two_player` and `_other_games`, and what they read).

A few models are computed in Python from other models' rows (PYTHON_MODELS): the ratings,
whose every game updates the ratings the next one starts from, which SQL cannot say, and the
exact tests of the bust rates and dice faces (distributions SQL has no function for). The
SQL names them like any model; `build` runs their inputs, calls the function and registers
the Arrow table it returns under the model's name.

Filters are DuckDB variables (`getvariable('f_player')` etc.), set before any model is built.

DuckDB runs with a memory limit (MEMORY_LIMIT; `FARKLE_LOGS_DUCKDB_MEMORY` overrides it) and
spills what does not fit to a temporary directory of its own, removed by `close`: judging
the 15 M choices of a 20 M-event dataset would otherwise take several GiB.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cache, partial
from importlib.resources import files
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import pyarrow as pa

from pipeline.dataset.layout import Dataset
from pipeline.stats import model_cache
from pipeline.stats.model_cache import CACHED_MODELS
from pipeline.reader.inputs import InputError
from pipeline.dataset.tables import TABLES

# The repository's sql/, installed as package data (a directory on disk: numba's cache needs
# the package unzipped anyway).
SQL_DIR = Path(str(files("pipeline.sql")))
MACROS = "macros"
MATERIALIZED_TABLE = "-- materialized: table"
# What DuckDB may hold in memory before it spills to disk. With Python, Arrow and the
# allocator's slack on top, the whole process stays under 1 GiB on a 20 M-event dataset.
MEMORY_LIMIT = "600MB"
LIMIT_VARIABLE = "x_memory_limit"


@dataclass(frozen=True)
class Model:
    name: str
    sql: str
    materialized: str  # "view" | "table" | "query" (reports: run, not stored) | "python"
    depends_on: tuple[str, ...]
    function: str | None = None  # python models: "module:function", called with {input: table}
    # python models: "module:function" called in a thread with the rows of their first input
    # (a small one, read first), to load what the model will need while DuckDB computes the rest
    prepare: str | None = None
    # python models: "module:function" called with nothing before `prepare` (in its thread,
    # beside DuckDB's computing of the other inputs): work `prepare` must find done (a first
    # run's compile, in a child process: pipeline.solved.judge.compile_apart)
    before_inputs: str | None = None


# Models computed in Python: name -> (the models whose rows it reads, "module:function").
PYTHON_MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("rating_history", "", "python", ("fct_game_results",), "pipeline.stats.ratings:rating_history"),
        Model(
            "int_choices_judged",
            "",
            "python",
            ("int_race_rulesets", "int_race_judge_input"),
            "pipeline.solved.judge:judged_choices",
            "pipeline.solved.judge:preload",
            "pipeline.solved.judge:compile_apart",
        ),
        # exact tests and Holm's correction over the counts (docs/stats.md)
        Model("bust_rate_tests", "", "python", ("fct_roll_counts",), "pipeline.stats.significance:bust_rate_tests"),
        Model(
            "dice_fairness_tests", "", "python", ("fct_dice_faces",), "pipeline.stats.significance:dice_fairness_tests"
        ),
    )
}


@cache
def load_models(sql_dir: Path = SQL_DIR) -> dict[str, Model]:
    """Every model of `sql_dir`, with the other models each one names."""
    texts = {
        name[: -len(".sql")]: (sql_dir / name).read_text(encoding="utf-8")
        for name in sorted(entry.name for entry in sql_dir.iterdir())
        if name.endswith(".sql") and name != f"{MACROS}.sql"
    }
    texts.update(_scoped_variants(texts))
    models = {}
    for name, text in texts.items():
        code = strip_comments(text)
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
        deps = tuple(sorted(other for other in [*texts, *PYTHON_MODELS] if other != name and other in words))
        if name.startswith("rpt_"):
            kind = "query"
        elif text.lstrip().startswith(MATERIALIZED_TABLE):
            kind = "table"
        else:
            kind = "view"
        models[name] = Model(name, text, kind, deps)
    return models


# Models also computed over part of the games (`_scoped_variants`): each variant is the base
# model's own text reading a narrower game scope, named `<base>_<part>`.
SCOPED_BASES = ("int_roll_keeps", "int_choice_values")
GAME_SCOPE = "int_games_in_scope"
GAME_PARTS = {"two_player": "int_two_player_games", "other_games": "int_other_games"}


def _scoped_variants(texts: dict[str, str]) -> dict[str, str]:
    """The choices of the two-player games and of the others, each computed apart from the
    same text: the two-player games' pass through the winning-chance judge, which hands their
    single-turn columns on (so they are computed once for both yardsticks), the others' are
    counted straight from SQL. A filter on the game scope would not do: DuckDB cannot push it
    into int_choice_values' shared rolls or the build side of its left joins, so the half it
    leaves empty would cost a full evaluation. Here the scope model each variant reads is
    already the part, and an empty part costs almost nothing. Every name of a scoped base or
    of the scope in the text is replaced by its part's (comments included)."""
    if not all(name in texts for name in (*SCOPED_BASES, GAME_SCOPE, *GAME_PARTS.values())):
        return {}  # another directory of models (the report's)
    variants = {}
    for part, scope in GAME_PARTS.items():
        renames = {GAME_SCOPE: scope, **{base: f"{base}_{part}" for base in SCOPED_BASES}}
        pattern = re.compile(r"\b(" + "|".join(renames) + r")\b")
        rename = partial(_renamed, renames)
        for base in SCOPED_BASES:
            variants[f"{base}_{part}"] = pattern.sub(rename, texts[base])
    return variants


def _renamed(renames: dict[str, str], match: re.Match[str]) -> str:
    return renames[match.group(1)]


def strip_comments(sql: str) -> str:
    """The SQL without its `--` comments: a model's header lines name tables and words that
    must not count as what it reads."""
    return re.sub(r"--[^\n]*", "", sql)


def source_tables(model: Model) -> set[str]:
    """The dataset's tables the model reads itself (`src_<table>`, comments aside): where
    the Spark engine runs it depends on them (pipeline.engines.spark.stats.placement)."""
    return set(re.findall(r"\bsrc_(\w+)", strip_comments(model.sql)))


def build_order(targets: list[str], models: dict[str, Model]) -> list[str]:
    """The targets' dependencies (and the targets) so that each comes after what it names."""
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        model = models.get(name) or PYTHON_MODELS.get(name)
        if model is None:
            raise KeyError(f"unknown SQL model {name!r} (no sql/{name}.sql)")
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            raise ValueError(f"SQL models depend on each other in a cycle: {' -> '.join(path + (name,))}")
        state[name] = "visiting"
        for dep in model.depends_on:
            visit(dep, path + (name,))
        state[name] = "done"
        order.append(name)

    for target in targets:
        visit(target, ())
    return order


def connect(dataset: Dataset | None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the dataset's tables as `src_<table>` and the macros of
    sql/macros.sql; the filters are still unset (see `set_variables`). Without a dataset it
    has no source tables: the Spark engine's driver side (which registers the game tables
    alone, `register_sources`) and its tasks (a share of one event table's files each:
    pipeline.engines.spark.fact_tasks)."""
    setting = os.environ.get("FARKLE_LOGS_DUCKDB_MEMORY", "").strip()
    spill = tempfile.mkdtemp(prefix="farkle-logs-duckdb-")
    try:
        con = duckdb.connect(
            config={
                "memory_limit": setting or MEMORY_LIMIT,
                "temp_directory": spill,
                "preserve_insertion_order": False,  # every report orders its rows itself
            }
        )
    except duckdb.Error:
        shutil.rmtree(spill, ignore_errors=True)
        if setting:  # the user's setting, not a bug: exit 2 in one line
            raise InputError(
                f"FARKLE_LOGS_DUCKDB_MEMORY={setting}", "not a memory size DuckDB reads (such as 600MB or 2GB)"
            ) from None
        raise
    try:
        con.execute("set enable_progress_bar = false")  # DuckDB's own bar on stderr: not ours to print
        # the limit as given and as shown (rounded): release_memory sets it back exactly
        con.execute(f"set variable {LIMIT_VARIABLE} = [?, current_setting('memory_limit')]", [setting or MEMORY_LIMIT])
        if dataset is not None:
            register_sources(con, dataset)
        con.execute((SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8"))
    except BaseException:  # a view that cannot be made (a damaged file): no spill dir left behind
        close(con)
        raise
    return con


def register_sources(
    con: duckdb.DuckDBPyConnection, dataset: Dataset, tables: tuple[str, ...] | list[str] = tuple(TABLES)
) -> None:
    """The dataset's tables (all, or `tables`) as views `src_<table>` over exactly the files
    its manifest lists."""
    if dataset.remote:  # on an object store: DuckDB reads the files through fsspec
        from pipeline import storage

        storage.register_duckdb(con, [str(dataset.path)])
    for table in tables:
        schema = TABLES[table]
        if dataset.has_files(table):  # exactly the manifest's files: never a glob (docs/dataset.md)
            files = ", ".join("'" + path.replace("'", "''") + "'" for path in dataset.duckdb_paths(table))
            con.execute(
                f"create temp view src_{table} as select * from "
                f"read_parquet([{files}], hive_partitioning = false, union_by_name = true)"
            )
        else:  # a table with no files: empty, with the contract's columns
            # (from_batches, not schema.empty_table(): that makes pyarrow import pandas, 0.2 s)
            con.register(f"src_{table}_empty", pa.Table.from_batches([], schema))
            con.execute(f"create temp view src_{table} as select * from src_{table}_empty")


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Close the connection and remove its spill directory."""
    row = con.execute("select current_setting('temp_directory')").fetchone()
    spill = row[0] if row else None
    con.close()
    if spill and Path(spill).name.startswith("farkle-logs-duckdb-"):
        shutil.rmtree(spill, ignore_errors=True)


def set_variables(con: duckdb.DuckDBPyConnection, variables: dict[str, object]) -> None:
    for name, value in variables.items():
        if value is None:
            con.execute(f"set variable {name} = null")
        else:
            con.execute(f"set variable {name} = ?", [value])


def build(con: duckdb.DuckDBPyConnection, names: list[str], models: dict[str, Model] | None = None) -> None:
    """Create the views and tables the named models need, in dependency order."""
    models = models or load_models()
    existing = {row[0] for row in con.execute("select view_name from duckdb_views() where temporary").fetchall()}
    existing |= {row[0] for row in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}
    order = build_order(names, models)
    for name in order:  # rows a run before left (pipeline.stats.model_cache), before what they need
        if name in CACHED_MODELS and name not in existing:
            key, rows = model_cache.lookup(con, name, _texts(name, models))
            if rows is not None:
                con.register(name, rows)
                existing.add(name)
    needed = set(names)
    for name in reversed(order):  # what the models still to build read (not what cached ones did)
        if name in needed and name not in existing:
            needed.update((models.get(name) or PYTHON_MODELS[name]).depends_on)
    for name in order:
        model = models.get(name) or PYTHON_MODELS[name]
        if name in existing or name not in needed or (model.materialized == "query" and name in names):
            continue  # a report asked for is run, not stored
        if model.materialized == "python":
            first, *rest = model.depends_on
            inputs = {first: con.sql(f"select * from {first}").to_arrow_table()}
            preparing = _prepare(model, inputs[first])  # before_inputs, then prepare, in a thread
            inputs.update((dep, con.sql(f"select * from {dep}").to_arrow_table()) for dep in rest)
            release_memory(con)  # before the wait: the preparation (and an in-place compile) not stacked on it
            if preparing is not None:
                preparing.join()
            rows = python_function(model)(inputs)
            con.register(name, rows)
        else:
            kind = "table" if model.materialized == "table" else "view"
            con.execute(f"create temp {kind} {name} as\n{model.sql}")
            rows = con.sql(f"select * from {name}").to_arrow_table() if name in CACHED_MODELS else None
        if name in CACHED_MODELS:
            model_cache.store(model_cache.lookup(con, name, _texts(name, models))[0], rows)
        existing.add(name)


def before_inputs(model: Model) -> None:
    """A python model's `before_inputs`, if it has one (every engine calls it first)."""
    if model.before_inputs is not None:
        _imported(model.before_inputs)()


def _prepare(model: Model, first_input: pa.Table) -> threading.Thread | None:
    """Start the model's `before_inputs`, then its `prepare` on its first input's rows, in a
    thread: DuckDB releases the interpreter while it computes the other inputs, so the two
    run side by side on two cores (for the judge: numba imported and its loops loaded, which
    then no longer come before DuckDB's work). The model's function waits
    for the thread. A failure there is left for the model itself to meet and report."""
    if model.prepare is None and model.before_inputs is None:
        return None
    function = _imported(model.prepare) if model.prepare is not None else None

    def run() -> None:
        try:
            before_inputs(model)
            if function is not None:
                function(first_input)
        except Exception:  # noqa: BLE001 - the model runs again and says what went wrong
            pass

    thread = threading.Thread(target=run, name=f"prepare {model.name}", daemon=True)
    thread.start()
    return thread


def release_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Hand back the memory DuckDB keeps for reuse (freed blocks it holds up to the limit: a
    few hundred MB after judging millions of choices) before Python works on its own copy of
    the rows: lowering the limit to what is in use makes DuckDB free the rest, then the limit
    is set back exactly as `connect` gave it. A limit changed since is left alone (DuckDB
    shows it rounded, so it could not be set back exactly); nothing in use is evicted; an
    error changes nothing."""
    try:
        (row,) = con.execute(
            f"select current_setting('memory_limit'), getvariable('{LIMIT_VARIABLE}'), "
            "(select coalesce(sum(memory_usage_bytes), 0) from duckdb_memory())"
        ).fetchall()  # fetched to the end: an unfinished result would block the next call
        if row[1] is None or row[0] != row[1][1]:
            return
        given, used = row[1][0], row[2]
        con.execute(f"set memory_limit = '{int(used) + (64 << 20)}B'")
        con.execute(f"set memory_limit = '{given}'")
    except duckdb.Error:
        pass


def _texts(name: str, models: dict[str, Model]) -> list[str]:
    """The SQL a model's rows depend on: its own and that of every model it reads."""
    return [(models.get(n) or PYTHON_MODELS[n]).sql for n in build_order([name], models)] + [_macros_text()]


@cache
def _macros_text() -> str:
    return (SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8")


def python_function(model: Model):
    """The function of a python model (imported when first needed: openskill and the like
    load only for the runs that use them)."""
    return _imported(model.function or "")


def _imported(spec: str):
    """The function a "module:function" names, its module imported now."""
    import importlib

    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)


def run(con: duckdb.DuckDBPyConnection, name: str, models: dict[str, Model] | None = None) -> pa.Table:
    """Run one model (usually a report) and return its rows as an Arrow table."""
    models = models or load_models()
    build(con, [name], models)
    if name in PYTHON_MODELS and name not in models:
        return con.sql(f"select * from {name}").to_arrow_table()
    return con.sql(models[name].sql).to_arrow_table()


class Steps:
    """A run of several models told to `progress` (pipeline.ingest.run.ingest describes its
    calls) as one stage of `count` steps: each `step` moves it one whole step when done,
    and meanwhile DuckDB's own estimate of the query that is running (polled from a thread;
    a report or a fact of millions of rows can take a while) moves it within the step. The
    count only goes forward, so a step of several queries creeps, never jumps back."""

    POLL_SECONDS = 0.25

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        progress: Callable[..., None],
        count: int,
        stage: str,
        unit: str = "tables",
    ):
        self.con, self.progress = con, progress
        self._told = 0.0
        self._whole = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        progress(stage=stage, total=count, unit=unit)
        con.execute("set enable_progress_bar = true")  # DuckDB tracks progress, ...
        con.execute("set enable_progress_bar_print = false")  # ... and prints nothing itself
        self._thread = threading.Thread(target=self._poll, name="query-progress", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.POLL_SECONDS):
            try:
                percent = self.con.query_progress()
            except duckdb.Error:  # between queries, or the connection is closing
                continue
            if percent >= 0:
                self._move_to(self._whole + min(percent, 99.0) / 100)

    def _move_to(self, at: float) -> None:
        with self._lock:
            if at > self._told:
                self.progress(at - self._told)
                self._told = at

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        self.progress(label=label)
        yield
        with self._lock:
            self._whole += 1
        self._move_to(self._whole)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def steps(
    con: duckdb.DuckDBPyConnection, progress: Callable[..., None] | None, count: int, stage: str, unit: str = "tables"
) -> Iterator[Callable[[str], AbstractContextManager[None]]]:
    """`Steps(...).step` for the duration (a step that does nothing without `progress`)."""
    if progress is None:

        @contextmanager
        def quiet(label: str) -> Iterator[None]:
            yield

        yield quiet
        return
    tracker = Steps(con, progress, count, stage, unit)
    try:
        yield tracker.step
    finally:
        tracker.close()

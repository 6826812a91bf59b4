"""Reading a dataset row by row: its games, its players, its stored findings, and any
read-only SQL over its tables and the models of `sql/`.

    from pipeline.stats import explore
    explore.games("data/", Filters(players=("ana", "bo")), with_findings=True)  # pyarrow.Table
    explore.findings("data/", codes=["scoring_error"])
    explore.query("data/", "select player, count(*) from game_players group by player")

`farkle-logs games`, `players`, `findings` and `sql` print these. Each list is a report
model of `sql/` (rpt_game_list, rpt_player_list, rpt_finding_list), so a user's SQL can
read the same rows by name.

`query` runs one SELECT and nothing else: DuckDB parses the text first and any statement
but a single SELECT (COPY, ATTACH, INSTALL, LOAD, PRAGMA, SET, CREATE, INSERT, CALL, ...)
is refused before anything runs (ReadOnlyError). The SELECT then runs on a connection that
may read only the dataset's own files (`allowed_paths`, `enable_external_access = false`),
with its configuration locked (`lock_configuration`), so not even a table function can
read or write another file or change a setting back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from pipeline.dataset.layout import Dataset, open_dataset
from pipeline.dataset.tables import TABLES
from pipeline.errors import UserError
from pipeline.stats import Filters, run, session
from pipeline.stats.runner import PYTHON_MODELS, build, build_order, load_models, set_variables, steps

SEVERITIES = ("error", "warning")
POLICY = ("policy_values", "policy_tail", "keep_options")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ReadOnlyError(UserError):
    """A statement `query` does not run: not a single SELECT."""


class QueryError(UserError):
    """The SELECT failed in DuckDB (a syntax error, an unknown column, a refused file); a
    `__cause__` means building a model failed, which is the dataset's fault or a bug."""


def _open(dataset: str | Path | Dataset) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else open_dataset(dataset)


def _limited(table: pa.Table, limit: int | None) -> pa.Table:
    return table if limit is None else table.slice(0, limit)


def games(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    *,
    with_findings: bool = False,
    limit: int | None = None,
    progress: Callable[..., None] | None = None,
) -> pa.Table:
    """rpt_game_list: the games `filters` select (its players: the games they all sat in),
    in order of start; with_findings: only the games with findings. `progress`: as for
    `pipeline.stats.compute`."""
    with session(_open(dataset), filters, with_odds=False) as con:
        set_variables(con, {"f_with_findings": with_findings})
        return _limited(_listed(con, "rpt_game_list", progress, "listing the games"), limit)


def players(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    *,
    limit: int | None = None,
    progress: Callable[..., None] | None = None,
) -> pa.Table:
    """rpt_player_list: each player's games and when they were first and last seen."""
    with session(_open(dataset), filters, with_odds=False) as con:
        return _limited(_listed(con, "rpt_player_list", progress, "listing the players"), limit)


def _listed(con: duckdb.DuckDBPyConnection, model: str, progress: Callable[..., None] | None, what: str) -> pa.Table:
    with steps(con, progress, 1, what, "queries") as step:
        with step(what):
            return run(con, model)


def findings(
    dataset: str | Path | Dataset,
    *,
    codes: Iterable[str] = (),
    severity: str | None = None,
    players: Iterable[str] = (),
    game: str | None = None,
    limit: int | None = None,
    progress: Callable[..., None] | None = None,
) -> pa.Table:
    """rpt_finding_list: the stored findings, as `audit` gives them for the same logs."""
    if severity is not None and severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}: severities are {', '.join(SEVERITIES)}")
    with session(_open(dataset), Filters(players=tuple(players), game=game), with_odds=False) as con:
        set_variables(con, {"f_codes": list(codes) or None, "f_severity": severity})
        return _limited(_listed(con, "rpt_finding_list", progress, "listing the findings"), limit)


def model_names() -> list[str]:
    """Every name `query` knows besides the dataset's tables: the models of `sql/`."""
    return sorted([*load_models(), *PYTHON_MODELS])


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise ReadOnlyError unless `sql` is exactly one SELECT statement (DuckDB's own
    parser decides: a comment or a string that looks like a statement is not one)."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if len(statements) != 1:
        raise ReadOnlyError(f"one SELECT statement is run, this is {len(statements)} statements")
    kind = statements[0].type.name
    if kind != "SELECT":
        raise ReadOnlyError(f"only a SELECT runs (read-only): this is a {kind} statement")


def query(
    dataset: str | Path | Dataset, sql: str, *, limit: int | None = None, progress: Callable[..., None] | None = None
) -> pa.Table:
    """The rows of one read-only SELECT over the dataset: its tables by name (`games`,
    `rolls`, ...) and every model of `sql/` (built only when the SELECT names it)."""
    ds = _open(dataset)
    names = set(_WORD.findall(sql))
    models = load_models()
    wanted = sorted(n for n in names if n in models or n in PYTHON_MODELS)
    needs = set()
    for name in build_order(wanted, models):
        model = models.get(name) or PYTHON_MODELS[name]
        needs.update(_WORD.findall(model.sql))
    needs |= names
    with_policy = bool(needs & set(POLICY))
    with session(ds, Filters(), with_odds="exact_odds" in needs, with_policy=with_policy) as con:
        check_read_only(con, sql)
        for table in TABLES:
            con.execute(f"create temp view {table} as select * from src_{table}")
        with steps(con, progress, 2, "running the query", "steps") as step:
            try:
                with step("building the models it names"):
                    build(con, wanted, models)
                    for name in wanted:
                        if models.get(name) and models[name].materialized == "query":
                            con.execute(f"create temp view {name} as\n{models[name].sql}")
            except duckdb.Error as exc:  # a damaged file, say: the caller checks the dataset
                raise QueryError(_first_line(exc)) from exc
            _lock(con, ds)
            try:
                with step("running the query"):
                    result = con.sql(sql)
                    if result is not None and limit is not None:
                        result = result.limit(
                            limit
                        )  # DuckDB stops there: `select * from events` need not be read whole
                    table = result.to_arrow_table() if result is not None else pa.Table.from_batches([], pa.schema([]))
            except duckdb.Error as exc:
                raise QueryError(_first_line(exc)) from None
    return table


def _lock(con: duckdb.DuckDBPyConnection, ds: Dataset) -> None:
    """From here on the connection reads the dataset's files and nothing else, and no
    setting can change."""
    files = [str(p) for table in TABLES for p in ds.table_files(table)]
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(f"set allowed_paths = [{listed}]")
    con.execute("set autoinstall_known_extensions = false")
    con.execute("set autoload_known_extensions = false")
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def catalog() -> dict[str, list[tuple[str, str]]]:
    """Every name `query` can read, the dataset's tables first, then the models in name
    order, each with its columns (name, DuckDB type): what docs/explore.md lists. Found by
    building every model over empty tables, so it costs no dataset."""
    from pipeline.stats import filter_variables
    from pipeline.stats.odds import ODDS_SCHEMA
    from pipeline.stats.runner import MACROS, SQL_DIR
    from pipeline.strategy.judge import KEEPS_SCHEMA, TAIL_SCHEMA, VALUES_SCHEMA

    empty = {f"src_{t}": s for t, s in TABLES.items()}
    empty |= {"exact_odds": ODDS_SCHEMA, "policy_values": VALUES_SCHEMA, "policy_tail": TAIL_SCHEMA}
    empty["keep_options"] = KEEPS_SCHEMA
    con = duckdb.connect()
    try:
        for name, schema in empty.items():
            con.register(name, pa.Table.from_batches([], schema))
        con.execute((SQL_DIR / f"{MACROS}.sql").read_text(encoding="utf-8"))
        set_variables(con, filter_variables(Filters(), [], 150.0))
        models = load_models()
        out: dict[str, list[tuple[str, str]]] = {}
        for table in TABLES:
            out[table] = [(r[0], r[1]) for r in con.execute(f"describe select * from src_{table}").fetchall()]
        for table in ("exact_odds", *POLICY):
            out[table] = [(r[0], r[1]) for r in con.execute(f"describe select * from {table}").fetchall()]
        for name in model_names():
            build(con, [name], models)
            text = (
                models[name].sql if name in models and models[name].materialized == "query" else f"select * from {name}"
            )
            out[name] = [(r[0], r[1]) for r in con.execute(f"describe {text}").fetchall()]
        return out
    finally:
        con.close()


def catalog_markdown() -> str:
    """The table of docs/explore.md ("Tables and models"), one row per name."""
    lines = ["| name | kind | columns |", "|---|---|---|"]
    models = load_models()
    for name, columns in catalog().items():
        if name in TABLES:
            kind = "table"
        elif name == "exact_odds":
            kind = "table (rules engine)"
        elif name in POLICY:
            kind = "table (solver)"
        elif name in PYTHON_MODELS:
            kind = "model (Python)"
        else:
            kind = f"model ({models[name].materialized})" if models[name].materialized != "query" else "report"
        lines.append(f"| `{name}` | {kind} | {', '.join(c for c, _ in columns)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - regenerates the docs' table
    print(catalog_markdown(), end="")

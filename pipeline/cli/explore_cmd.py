"""`farkle-logs games`, `players`, `findings` and `sql`: a dataset read row by row.

Thin commands over pipeline.stats.explore, each printing one table: text that fits the
terminal, `--format csv` (the one CSV writer of `stats`; lists as JSON text) or `--format
json` (one JSON array of row objects, every column), `--limit N` rows.
"""

from __future__ import annotations

import enum
import sys
from typing import TYPE_CHECKING, List, Optional

import typer

from pipeline.cli.common import did_you_mean, live, no_match_error, note, progress_bar, stdout, usage_error
from pipeline.cli.csv_cells import exact_csv_option
from pipeline.cli.dataset_options import (
    PlayersOption,
    RulesFilterOption,
    SinceOption,
    UntilOption,
    dataset_failure,
    dataset_or_exit,
    filters_or_exit,
)
from pipeline.cli.league_render import pylist
from pipeline.cli.main import app

if TYPE_CHECKING:
    import pyarrow as pa

DATASET_ARG = typer.Argument(..., metavar="DATASET", help="A dataset directory written by `farkle-logs ingest`.")
LIMIT_HELP = "At most N rows."


class ListFormat(str, enum.Enum):
    text = "text"
    json = "json"
    csv = "csv"


def _format_option():
    return typer.Option(ListFormat.text, "--format", "-f", metavar="FORMAT", help="text (a table), json or csv.")


def _limit_option():
    return typer.Option(None, "--limit", "-n", min=0, metavar="N", help=LIMIT_HELP)


@app.command(short_help="The games of a dataset: players, winners, findings, how each ended.")
def games(
    dataset: str = DATASET_ARG,
    player: PlayersOption = None,
    rules: RulesFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    with_findings: bool = typer.Option(False, "--with-findings", help="Only the games with audit findings."),
    format: ListFormat = _format_option(),
    limit: Optional[int] = _limit_option(),
    exact_csv: bool = exact_csv_option(),
) -> None:
    """One row per game, in order of start: game id, start (UTC), players in seat order, the
    claimed and the corrected winners, the audit's findings, how the game ended. With
    several --player, the games they all sat in.

    Exit 0; 2: bad usage (DATASET missing or damaged, a filter that matches no game).
    """
    from pipeline.cli.dataset_options import filters_match_or_exit
    from pipeline.stats import explore

    filters = filters_or_exit(player, rules, since, until)
    ds = dataset_or_exit(dataset)
    filters_match_or_exit(ds, filters, rules)
    try:
        with progress_bar("opening the dataset") as advance:
            table = explore.games(ds, filters, with_findings=with_findings, limit=limit, progress=live(advance))
    except Exception as exc:
        dataset_failure(ds, exc)
    if table.num_rows == 0 and limit != 0:
        together = " together" if len(filters.players) > 1 else ""
        findings = " with findings" if with_findings else ""
        usage_error(f"no game{findings} in dataset {ds.path} matches these filters{together}")
    emit(table, format, exact_csv)


@app.command(short_help="The players of a dataset: games, first and last seen.")
def players(
    dataset: str = DATASET_ARG,
    player: PlayersOption = None,
    rules: RulesFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    format: ListFormat = _format_option(),
    limit: Optional[int] = _limit_option(),
    exact_csv: bool = exact_csv_option(),
) -> None:
    """One row per player, by name: games sat in, finished games, the start of their first
    and last game (UTC).

    Exit 0; 2: bad usage (DATASET missing or damaged, a filter that matches no game).
    """
    from pipeline.cli.dataset_options import filters_match_or_exit
    from pipeline.stats import explore

    filters = filters_or_exit(player, rules, since, until)
    ds = dataset_or_exit(dataset)
    filters_match_or_exit(ds, filters, rules)
    try:
        with progress_bar("opening the dataset") as advance:
            table = explore.players(ds, filters, limit=limit, progress=live(advance))
    except Exception as exc:
        dataset_failure(ds, exc)
    emit(table, format, exact_csv)


@app.command(short_help="The audit findings a dataset stores, as `audit` gives them.")
def findings(
    dataset: str = DATASET_ARG,
    code: Optional[List[str]] = typer.Option(None, "--code", "-c", metavar="CODE", help="Only this code (repeatable)."),
    severity: Optional[str] = typer.Option(None, "--severity", metavar="SEVERITY", help="error or warning."),
    player: PlayersOption = None,
    game: Optional[str] = typer.Option(None, "--game", "-g", metavar="ID", help="Only this game_id."),
    format: ListFormat = _format_option(),
    limit: Optional[int] = _limit_option(),
    exact_csv: bool = exact_csv_option(),
) -> None:
    """The findings stored when the logs were ingested: the rows `farkle-logs audit LOGS
    --format json` gives for the same logs, ordered by file, line and seq.

    Exit 0; 2: bad usage (DATASET missing or damaged, a filter that matches no finding).
    """
    from pipeline.stats import explore

    if severity is not None and severity not in explore.SEVERITIES:
        usage_error(f"unknown severity {severity!r}: severities are {', '.join(explore.SEVERITIES)}")
    ds = dataset_or_exit(dataset)
    try:
        with progress_bar("opening the dataset") as advance:
            whole = explore.findings(ds, progress=live(advance))
            table = explore.findings(
                ds,
                codes=code or (),
                severity=severity,
                players=player or (),
                game=game,
                limit=limit,
                progress=live(advance),
            )
    except Exception as exc:
        dataset_failure(ds, exc)
    where = f"the findings of dataset {ds.path}"
    for wanted in code or ():
        known = sorted(set(whole.column("code").to_pylist()))
        if wanted not in known:
            usage_error(f"no finding code {wanted!r} in {where}{did_you_mean(wanted, known)}; its codes: "
                        f"{', '.join(known) or 'none'}")  # fmt: skip
    for name in player or ():
        if name not in set(whole.column("player").to_pylist()):
            no_match_error("player", name, whole.column("player").to_pylist(), where)
    if game is not None and game not in set(whole.column("game_id").to_pylist()):
        no_match_error("game", game, whole.column("game_id").to_pylist(), where)
    if table.num_rows == 0 and whole.num_rows == 0:
        note(f"dataset {ds.path} stores no findings")
    elif table.num_rows == 0 and limit != 0:
        usage_error(f"no finding in dataset {ds.path} matches these filters together")
    emit(table, format, exact_csv)


@app.command(short_help="Read-only SQL over a dataset's tables and the models of sql/.")
def sql(
    dataset: str = DATASET_ARG,
    query: str = typer.Argument(..., metavar="SELECT", help="One SELECT statement (DuckDB SQL)."),
    format: ListFormat = _format_option(),
    limit: Optional[int] = _limit_option(),
    exact_csv: bool = exact_csv_option(),
) -> None:
    """Run one SELECT with DuckDB: every table of the dataset (events, turns, rolls,
    decisions, games, game_players, findings, rejects) and every model of sql/ (stg_, int_,
    fct_ and rpt_ names, built when named) can be read by name; docs/explore.md lists them
    with their columns. Anything but one SELECT is refused, and the SELECT can read no file
    but the dataset's.

    Exit 0; 2: bad usage (DATASET missing or damaged, a statement that is not one SELECT,
    an error in the SQL).
    """
    from pipeline.stats import explore

    ds = dataset_or_exit(dataset)
    try:
        with progress_bar("opening the dataset") as advance:
            table = explore.query(ds, query, limit=limit, progress=live(advance))
    except explore.ReadOnlyError as exc:
        usage_error(f"refused: {exc}")
    except explore.QueryError as exc:
        if exc.__cause__ is not None:  # building a model failed: the dataset, or a bug
            dataset_failure(ds, exc.__cause__)
        usage_error(f"the SQL failed: {exc}")
    except Exception as exc:
        dataset_failure(ds, exc)
    emit(table, format, exact_csv)


# ---- output ------------------------------------------------------------------------------
def emit(table: "pa.Table", format: ListFormat, exact_csv: bool = False) -> None:
    if format is ListFormat.json:
        write_json_rows(table)
    elif format is ListFormat.csv:
        from pipeline.cli.stats_cmd import write_csv

        write_csv(flat(table), exact=exact_csv)
    else:
        print_rows(table)


def flat(table: "pa.Table") -> "pa.Table":
    """Lists and structs as JSON text, which a CSV cell can hold (Arrow's CSV writer takes
    none of them)."""
    import duckdb
    import pyarrow as pa

    nested = [f.name for f in table.schema if pa.types.is_nested(f.type)]
    if not nested:
        return table
    con = duckdb.connect()
    try:
        con.register("t", table)
        cols = ", ".join(
            f'to_json("{c}")::varchar as "{c}"' if c in nested else f'"{c}"'
            for c in (name.replace('"', '""') for name in table.column_names)
        )
        return con.sql(f"select {cols} from t").to_arrow_table()
    finally:
        con.close()


def write_json_rows(table: "pa.Table") -> None:
    """[{column: value, ...}, ...] on one line, a chunk of rows at a time (as `stats`)."""
    import msgspec

    encoder = msgspec.json.Encoder(enc_hook=str)
    out = sys.stdout
    out.write("[")
    fields = [f"f{k}" for k in range(table.num_columns)]
    row = msgspec.defstruct("Row", fields, rename=dict(zip(fields, table.column_names)))
    first = True
    for batch in table.to_batches(max_chunksize=10_000):
        if batch.num_rows:
            rows = list(map(row, *(pylist(column) for column in batch.columns)))
            out.write(("" if first else ",") + encoder.encode(rows).decode()[1:-1])
            first = False
    out.write("]\n")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value) or "-"
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ")[:16] if hasattr(value, "hour") else value.isoformat()
    return str(value)


def print_rows(table: "pa.Table") -> None:
    """The table as text fitted to the terminal: its first column on the left of every part."""
    import pyarrow as pa

    from pipeline.cli.text import fitted_tables

    if table.num_columns == 0:
        return
    names = table.column_names
    keys = [f"c{i}" for i in range(len(names))]  # column names may repeat or be empty in SQL
    rows = [dict(zip(keys, map(_cell, values))) for values in zip(*(pylist(c) for c in table.columns))]
    numbers = {k for k, f in zip(keys, table.schema) if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)}
    columns = list(zip(keys[1:], names[1:]))
    if not columns:  # one column: nothing to spread over parts
        from pipeline.cli.text import plain_table

        part = plain_table((names[0] or "?", keys[0] in numbers))
        for row in rows:
            part.add_row(row[keys[0]])
        stdout.print(part)
    for part in (
        fitted_tables((keys[0], names[0] or "?"), columns, rows, stdout.width, right=numbers) if columns else ()
    ):
        stdout.print(part)
    if not rows:
        note("no rows")

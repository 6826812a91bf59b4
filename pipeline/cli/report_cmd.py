"""`farkle-logs report`: one offline HTML page of a dataset's statistics and audit findings."""
from __future__ import annotations

import datetime as dt
from typing import Optional

import typer

from pipeline.cli.common import EXIT_DATA, RULES_HELP, rules_or_exit, stderr, stdout, usage_error
from pipeline.cli.main import app
from pipeline.dataset_check import DatasetError, open_dataset


@app.command()
def report(
    dataset: str = typer.Argument(..., help="A dataset directory written by `farkle-logs ingest`."),
    out: str = typer.Option("report.html", "--out", "-o", help="The HTML file to write (replaced if it exists)."),
    title: Optional[str] = typer.Option(None, "--title", "-t", help="The page title (default: from the dataset or game)."),
    player: Optional[str] = typer.Option(None, "--player", "-p", help="Only this player's rows, in games they sat in."),
    rules: Optional[str] = typer.Option(None, "--rules", "-r", help="Only games played under this ruleset. " + RULES_HELP),
    since: Optional[dt.datetime] = typer.Option(None, "--since", formats=["%Y-%m-%d"], help="Games started on or after this UTC date (YYYY-MM-DD)."),
    until: Optional[dt.datetime] = typer.Option(None, "--until", formats=["%Y-%m-%d"], help="Games started on or before this UTC date (YYYY-MM-DD)."),
    game: Optional[str] = typer.Option(
        None, "--game", "-g",
        help="A dispute view of this game_id: its turn-by-turn timeline leads the page, which covers it only.",
    ),
) -> None:
    """Write one HTML page (charts, player table, audit findings) that opens offline by
    double-click. Exit 1 when DATASET is not a dataset or --game is not in it; 2: bad usage."""
    from pipeline.report import GameNotFound, write_report
    from pipeline.stats import Filters

    since_day = since.date() if since else None
    until_day = until.date() if until else None
    if since_day and until_day and since_day > until_day:
        usage_error(f"--since {since_day} is after --until {until_day}")
    filters = Filters(
        player=player,
        rules=rules_or_exit(rules) if rules is not None else None,
        since=since_day,
        until=until_day,
    )
    try:
        ds = open_dataset(dataset)
    except DatasetError as exc:
        stderr.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_DATA)
    try:
        path = write_report(ds, out, filters, title=title, game=game)
    except GameNotFound as exc:
        stderr.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_DATA)
    except OSError as exc:
        usage_error(f"cannot write {out}: {exc.strerror or exc}")
    except Exception as exc:  # a damaged Parquet file, a column missing from the contract
        stderr.print(f"error: cannot build the report over {dataset}: {exc}", markup=False)
        raise typer.Exit(EXIT_DATA)
    size = path.stat().st_size
    stdout.print(f"wrote {path.resolve()} ({size / 1e6:.1f} MB)", markup=False)

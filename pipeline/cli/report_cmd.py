"""`farkle-logs report`: one offline HTML page of a dataset's statistics and audit findings."""
from __future__ import annotations

import datetime as dt
from typing import Optional

import typer

from pipeline.cli.common import EXIT_DATA, RULES_HELP, stderr, stdout, usage_error
from pipeline.cli.main import app
from pipeline.cli.dataset_options import dataset_failure, dataset_or_exit, filters_or_exit


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
    double-click. Exit 1 when --game is not in DATASET; 2: bad usage (DATASET missing, not a
    dataset or damaged; OUT not writable)."""
    from pipeline.report import GameNotFound, write_report
    from pipeline.strategy.solver import refusals


    filters = filters_or_exit(player, rules, since, until)
    ds = dataset_or_exit(dataset)
    try:
        with refusals() as unsolved:  # rulesets past the solver's budget: their choices are not judged
            path = write_report(ds, out, filters, title=title, game=game)
    except GameNotFound as exc:
        stderr.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_DATA)
    except OSError as exc:
        usage_error(f"cannot write {out}: {exc.strerror or exc}")
    except Exception as exc:  # a damaged Parquet file (exit 2, the way out) or a bug (re-raised)
        dataset_failure(ds, exc)
    for message in unsolved:
        stderr.print(f"note: {message}; its games' choices are not judged in Decision quality", markup=False)
    size = path.stat().st_size
    stdout.print(f"wrote {path.resolve()} ({size / 1e6:.1f} MB)", markup=False)

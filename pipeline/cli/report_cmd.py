"""`farkle-logs report`: one offline HTML page of a dataset's statistics and audit findings."""

from __future__ import annotations

import dataclasses
from typing import Optional

import typer

from pipeline.cli.common import compiles_announced, live, note, progress_bar, stdout, usage_error
from pipeline.cli.main import app
from pipeline.cli.stats_cmd import LeaguePeriod
from pipeline.cli.dataset_options import (
    PlayersOption,
    RulesFilterOption,
    SinceOption,
    UntilOption,
    dataset_failure,
    dataset_or_exit,
    filters_or_exit,
)


@app.command(short_help="One offline HTML page of a dataset, or of one game.")
def report(
    dataset: str = typer.Argument(..., metavar="DATASET", help="A dataset directory written by `farkle-logs ingest`."),
    out: str = typer.Option(
        "report.html",
        "--out",
        "-o",
        metavar="FILE",
        help="The HTML file to write: a regular file (replaced) or a new name in an existing folder.",
    ),
    title: Optional[str] = typer.Option(
        None, "--title", "-t", metavar="TEXT", help="The page title (default: from the dataset or game)."
    ),
    player: PlayersOption = None,
    rules: RulesFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    game: Optional[str] = typer.Option(
        None,
        "--game",
        "-g",
        metavar="ID",
        help="A dispute view of this game_id: its turn-by-turn timeline leads the page, which covers it only.",
    ),
    min_games: int = typer.Option(
        0, "--min-games", min=0, metavar="N", help="Standings: list the players with at least N rated games."
    ),
    by: LeaguePeriod = typer.Option(
        LeaguePeriod.month, "--by", metavar="PERIOD", help="Player panels: trends per week or month."
    ),
    scoresheet: Optional[str] = typer.Option(
        None,
        "--scoresheet",
        metavar="CSV",
        help="With --game: a hand-kept scoresheet of that game, checked and shown beside the replay.",
    ),
) -> None:
    """Write one HTML page (standings, rating over time, head to head, charts, player table,
    audit findings, a panel per player) that opens offline by double-click.

    Exit 0; 2: bad usage (DATASET missing, not a dataset or damaged, a filter or --game that
    matches no game, a scoresheet without --game, unreadable or with no row of the game, an
    output that cannot be written, a --min-games that leaves no player).
    """
    from pipeline.cli.dataset_options import filters_match_or_exit
    from pipeline.files import check_output_path
    from pipeline.report import write_report
    from pipeline.stats import League
    from pipeline.strategy.solver import refusals

    check_output_path(out)  # before the work: a device, a link, a missing folder (exit 2)
    if scoresheet is not None and game is None:
        usage_error("--scoresheet needs --game ID: the sheet is shown beside that game's replay")
    sheet = None
    if scoresheet is not None:
        from pipeline.audit.run import read_sheet

        sheet = read_sheet(scoresheet)  # unreadable, or the wrong header: exit 2
    filters = filters_or_exit(player, rules, since, until)
    ds = dataset_or_exit(dataset)
    filters_match_or_exit(ds, dataclasses.replace(filters, game=game) if game is not None else filters, rules)
    try:
        # rulesets past the solver's budget: their choices are not judged
        with refusals() as unsolved, progress_bar("opening the dataset") as advance, compiles_announced(advance):
            path = write_report(
                ds,
                out,
                filters,
                title=title,
                game=game,
                league=League(min_games, by.value),
                progress=live(advance),
                scoresheet=sheet,
            )
    except OSError as exc:
        usage_error(f"cannot write {out}: {exc.strerror or exc}")
    except Exception as exc:  # a damaged Parquet file (exit 2, the way out) or a bug (re-raised)
        dataset_failure(ds, exc)
    for message in unsolved:
        note(f"{message}; its games' choices are not judged in Decision quality")
    size = path.stat().st_size
    stdout.print(f"wrote {path.resolve()} ({size / 1e6:.1f} MB)")

"""The HTML report: one self-contained, offline page of a dataset's statistics and audit.

    from pipeline.report import write_report
    write_report("dataset/", "report.html")                       # everything
    write_report("dataset/", "game.html", game="g-17")           # dispute view of one game

Modules: `data` gathers the tables (stats API + the report's SQL models in `sql/`),
`charts` turns them into Altair charts (pure functions), `page` assembles the HTML and
`bundle` provides the Vega JavaScript embedded once per page. See docs/report.md.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Callable

from pipeline.dataset.layout import Dataset
from pipeline.files import check_output_path, replacing
from pipeline.report.bundle import javascript_bundle
from pipeline.report.data import GameNotFound, ReportData, gather
from pipeline.report.page import SECTIONS, render
from pipeline.stats import Filters, League

__all__ = ["GameNotFound", "ReportData", "SECTIONS", "build_report", "default_title", "gather", "write_report"]


def default_title(data: ReportData) -> str:
    if data.dispute_game is not None:
        return f"Farkle dispute: game {data.dispute_game}"
    return f"Farkle report: {Path(data.dataset).name or data.dataset}"


def build_report(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    *,
    title: str | None = None,
    game: str | None = None,
    generated: dt.datetime | None = None,
    league: League = League(),
    progress: Callable[..., None] | None = None,
    scoresheet: tuple[str, str] | None = None,
) -> str:
    """The report page as a string (raises DatasetError, GameNotFound, NoRatedPlayer,
    SheetError). `league`: the standings' --min-games and the trends' period; `progress` is
    told the stages (pipeline.stats.runner.Steps for the tables); `scoresheet`: (name, CSV
    text) of a sheet of `game`, shown beside its replay."""
    data = gather(dataset, filters, dispute_game=game, league=league, progress=progress, scoresheet=scoresheet)
    if progress is not None:
        progress(stage="drawing the charts")
    return render(data, title or default_title(data), javascript_bundle(), generated)


def write_report(
    dataset: str | Path | Dataset,
    out: str | Path,
    filters: Filters = Filters(),
    *,
    title: str | None = None,
    game: str | None = None,
    league: League = League(),
    progress: Callable[..., None] | None = None,
    scoresheet: tuple[str, str] | None = None,
) -> Path:
    """Write the page to `out` (replaced whole: a reader never sees half a page). `out` must
    be a regular file or a new name in an existing folder (OutputPathError otherwise, checked
    before the page is built)."""
    path = check_output_path(out)
    page = build_report(
        dataset, filters, title=title, game=game, league=league, progress=progress, scoresheet=scoresheet
    )
    with replacing(path) as tmp:  # 0644: a page to share, not a secret
        tmp.write(page.encode("utf-8"))
    return path

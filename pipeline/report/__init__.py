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
import os
import tempfile
from pathlib import Path

from pipeline.dataset.layout import Dataset
from pipeline.report.bundle import javascript_bundle
from pipeline.report.data import GameNotFound, ReportData, gather
from pipeline.report.page import SECTIONS, render
from pipeline.stats import Filters

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
    scoresheet: tuple[str, str] | None = None,
) -> str:
    """The report page as a string (raises DatasetError, GameNotFound, SheetError).
    `scoresheet`: (name, CSV text) of a sheet of `game`, shown beside its replay."""
    data = gather(dataset, filters, dispute_game=game, scoresheet=scoresheet)
    return render(data, title or default_title(data), javascript_bundle(), generated)


def write_report(
    dataset: str | Path | Dataset,
    out: str | Path,
    filters: Filters = Filters(),
    *,
    title: str | None = None,
    game: str | None = None,
    scoresheet: tuple[str, str] | None = None,
) -> Path:
    """Write the page to `out` (replaced whole: a reader never sees half a page)."""
    page = build_report(dataset, filters, title=title, game=game, scoresheet=scoresheet)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, delete=False, prefix=f".{path.name}.", suffix=".tmp"
    ) as tmp:
        try:
            tmp.write(page)
        except BaseException:
            tmp.close()
            os.unlink(tmp.name)
            raise
    os.chmod(tmp.name, 0o644)  # a page to share, not a secret (mkstemp makes it 0600)
    os.replace(tmp.name, path)
    return path

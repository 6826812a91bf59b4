"""Options shared by the commands that read a dataset (`stats`, `report`): one parsing of
the filters and one way to refuse a path that is not a dataset, so both say the same."""
from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import typer

from pipeline.cli.common import EXIT_DATA, rules_or_exit, stderr, usage_error
from pipeline.dataset_check import DatasetError, open_dataset

if TYPE_CHECKING:
    from pipeline.stats import Filters


def filters_or_exit(player: str | None, rules: str | None, since: dt.datetime | None,
                    until: dt.datetime | None, game: str | None = None) -> "Filters":
    """Filters from CLI options; exit 2 on a bad ruleset or a --since after --until."""
    from pipeline.stats import Filters

    since_day = since.date() if since else None
    until_day = until.date() if until else None
    if since_day and until_day and since_day > until_day:
        usage_error(f"--since {since_day} is after --until {until_day}")
    return Filters(
        player=player,
        game=game,
        rules=rules_or_exit(rules) if rules is not None else None,
        since=since_day,
        until=until_day,
    )


def dataset_or_exit(path: str):
    """The dataset at `path`, or exit 1 with one line saying why it is not one."""
    try:
        return open_dataset(path)
    except DatasetError as exc:
        stderr.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_DATA)

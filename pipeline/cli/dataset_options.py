"""Options shared by the commands that read a dataset (`stats`, `report`): one parsing of
the filters and one way to refuse a path that is not a dataset, so both say the same."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from pipeline.cli.common import rules_or_exit, usage_error
from pipeline.dataset_check import DatasetError, open_dataset, recovery_hint

if TYPE_CHECKING:
    from pipeline.dataset_check import Dataset
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
    """The dataset at `path`, or exit 2 with one line saying why it is not one (missing,
    foreign, another version) or how to recover it (damaged)."""
    try:
        return open_dataset(path)
    except DatasetError as exc:
        usage_error(str(exc))


def dataset_failure(dataset: "Dataset | str | Path", exc: Exception, suffix: str = "") -> NoReturn:
    """Reading `dataset` failed. If the dataset does not verify (a truncated or foreign
    Parquet file, a missing column), that is the cause: exit 2 with the way out. Otherwise it
    is a bug: re-raised for the crash handler (pipeline/cli/entry.py)."""
    from pipeline.dataset_verify import check_dataset

    path = Path(getattr(dataset, "path", dataset))
    try:
        report = check_dataset(path)
    except DatasetError:  # not a dataset (a new one being ingested): the data is not the cause
        raise exc from None
    if report.problems:
        usage_error(f"{path}: damaged dataset: {report.problems[0]}; {recovery_hint(path)}{suffix}")
    raise exc

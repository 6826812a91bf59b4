"""Options shared by the commands that read a dataset (`stats`, `report`): one declaration
of the filter options (`PlayerOption`, `RulesFilterOption`, `SinceOption`, `UntilOption`),
one parsing of the filters, one way to refuse a path that is not a dataset, and one check
that the filters match something, so both commands say the same.

A filter that matches nothing is a mistake far more often than a question (a typo in a
game id or a name), and an empty table would hide it: it is bad usage (exit 2), and the
message names the closest ids or names the dataset does hold.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, List, NoReturn, Optional

import typer

from pipeline.cli.common import RULES_HELP, no_match_error, rules_or_exit, usage_error
from pipeline.errors import UserError

if TYPE_CHECKING:
    from pipeline.dataset.layout import Dataset
    from pipeline.stats import Filters

# The filter options, declared once: `player: PlayerOption = None` in a command's signature
# (the default goes there, not in typer.Option). `filters_or_exit` turns them into Filters.
PlayerOption = Annotated[
    Optional[str], typer.Option("--player", "-p", metavar="NAME", help="Only this player's rows, in games they sat in.")
]
# --player, repeatable (`-p ana -p bo`): the rows of any of these players.
PlayersOption = Annotated[
    Optional[List[str]],
    typer.Option("--player", "-p", metavar="NAME", help="Only this player's rows, in games they sat in (repeatable)."),
]
RulesFilterOption = Annotated[
    Optional[str],
    typer.Option("--rules", "-r", metavar="RULES", help="Only games played under this ruleset. " + RULES_HELP),
]
SinceOption = Annotated[
    Optional[dt.datetime],
    typer.Option(
        "--since", formats=["%Y-%m-%d"], metavar="YYYY-MM-DD", help="Games started on or after this UTC date."
    ),
]
UntilOption = Annotated[
    Optional[dt.datetime],
    typer.Option(
        "--until", formats=["%Y-%m-%d"], metavar="YYYY-MM-DD", help="Games started on or before this UTC date."
    ),
]


def filters_or_exit(
    player: str | list[str] | None,
    rules: str | None,
    since: dt.datetime | None,
    until: dt.datetime | None,
    game: str | None = None,
) -> "Filters":
    """Filters from CLI options (`player`: one --player or the list of a repeatable one);
    exit 2 on a bad ruleset or a --since after --until."""
    from pipeline.stats import Filters

    since_day = since.date() if since else None
    until_day = until.date() if until else None
    if since_day and until_day and since_day > until_day:
        usage_error(f"--since {since_day} is after --until {until_day}")
    names = tuple([player] if isinstance(player, str) else player or ())
    return Filters(
        players=names,
        game=game,
        rules=rules_or_exit(rules) if rules is not None else None,
        since=since_day,
        until=until_day,
    )


def dataset_or_exit(path: str):
    """The dataset at `path`, or exit 2 with one line saying why it is not one (missing,
    foreign, another version) or how to recover it (damaged)."""
    from pipeline.dataset.layout import open_dataset

    return open_dataset(path)  # DatasetError: a user error, exit 2


def dataset_failure(dataset: "Dataset | str | Path", exc: BaseException, suffix: str = "") -> NoReturn:
    """Reading `dataset` failed. If the dataset does not verify (a truncated or foreign
    Parquet file, a missing column), that is the cause: exit 2 with the way out. Otherwise it
    is a bug: re-raised for the crash handler (pipeline/cli/entry.py). A user error is
    re-raised as it is (exit 2 with its own message)."""
    from pipeline.dataset.layout import DatasetError, recovery_hint
    from pipeline.dataset.verify import check_dataset

    if isinstance(exc, UserError):
        raise exc

    path = Path(getattr(dataset, "path", dataset))  # type: ignore[arg-type]  # a Dataset's, or the path given
    try:
        report = check_dataset(path)
    except DatasetError:  # not a dataset (a new one being ingested): the data is not the cause
        raise exc from None
    if report.problems:
        usage_error(f"{path}: damaged dataset: {report.problems[0]}; {recovery_hint(path)}{suffix}")
    raise exc


def filters_match_or_exit(ds: "Dataset", filters: "Filters", rules_spec: str | None = None) -> None:
    """Exit 2 when a filter matches no game of `ds`: each filter alone first (with the
    closest ids or names), then all of them together."""
    from pipeline.stats import run, session
    from pipeline.stats.odds import matching_rulesets

    if (
        filters.game is None
        and not filters.players
        and filters.rules is None
        and filters.since is None
        and filters.until is None
    ):
        return
    where = f"dataset {ds.path}"
    with session(ds, filters, with_odds=False) as con:
        if filters.game is not None:
            found = con.execute("select count(*) from src_games where game_id = ?", [filters.game]).fetchone()[0]  # type: ignore[index]  # count(*): one row
            if not found:
                ids = [r[0] for r in con.execute("select distinct game_id from src_games").fetchall()]
                no_match_error("game", filters.game, ids, where)
        for name in filters.players:
            found = con.execute("select count(*) from src_game_players where player = ?", [name]).fetchone()[0]  # type: ignore[index]  # count(*): one row
            if not found:
                names = [r[0] for r in con.execute("select distinct player from src_game_players").fetchall()]
                no_match_error("player", name, names, where)
        if filters.rules is not None:
            texts = [r[0] for r in con.execute("select distinct ruleset from src_games").fetchall()]
            if not matching_rulesets(texts, filters.rules):
                names = sorted(
                    {
                        r[0]
                        for r in con.execute("select distinct ruleset_name from src_games").fetchall()
                        if r[0] is not None
                    }
                )
                usage_error(
                    f"no game in {where} was played under the ruleset {rules_spec or filters.rules.name!r} "
                    f"(knob for knob); its games were played under: {', '.join(names) or 'none'}"
                )
        games = run(con, "int_games_in_scope").num_rows
        span = con.execute("select min(first_ts), max(first_ts) from src_games").fetchone() or (None, None)
    if not games:
        parts = _describe(filters, rules_spec)
        dates = ""
        if (filters.since or filters.until) and span[0] is not None:
            dates = f"; its games started from {_day(span[0])} to {_day(span[1])} (UTC)"
        elif filters.since or filters.until:
            dates = "; its games have no timestamps"
        usage_error(f"no game in {where} matches {' with '.join(parts)}{' together' if len(parts) > 1 else ''}{dates}")


def _day(value) -> str:
    return value.astimezone(dt.timezone.utc).date().isoformat() if value.tzinfo else value.date().isoformat()


def _describe(filters: "Filters", rules_spec: str | None) -> list[str]:
    parts = []
    if filters.game is not None:
        parts.append(f"--game {filters.game}")
    parts += [f"--player {name}" for name in filters.players]
    if filters.rules is not None:
        parts.append(f"--rules {rules_spec or filters.rules.name}")
    if filters.since is not None:
        parts.append(f"--since {filters.since.isoformat()}")
    if filters.until is not None:
        parts.append(f"--until {filters.until.isoformat()}")
    return parts

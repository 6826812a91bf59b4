"""Gather what the report shows: the stats tables plus a few report-only SQL models.

Every figure is computed by DuckDB. The stats tables come from the SQL models of `sql/`
(the same ones `farkle-logs stats` runs, through `pipeline.stats.session` and `run`); the
report adds its own models in `pipeline/report/sql/` (headline numbers, the bank-vs-roll
grid, findings by code and period, the most disputed games and the turn-by-turn timelines of
detailed games), written the same way and resolved against the stats models by name. Python
only picks rows to show (top players, top games) and turns Arrow tables into chart data.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset.layout import Dataset, open_dataset
from pipeline.report.league import LeagueData, gather_league
from pipeline.stats import TABLE_NAMES, Filters, League, run, session
from pipeline.stats.runner import PYTHON_MODELS, Model, load_models, set_variables, steps, strip_comments
from pipeline.errors import UserError
from pipeline.report.sheet import SheetView, check

REPORT_SQL_DIR = Path(str(files("pipeline.report"))) / "sql"

# Caps that keep the page small whatever the dataset's size (see docs/report.md).
TOP_PLAYERS = 30  # players one can pick in the per-player charts (by finished turns)
LEADERBOARD_ROWS = 100  # rows of the player table (by games, then wins)
TOP_GAMES = 10  # most disputed games listed and detailed on the page

# The report's own models, in the order they are run.
REPORT_TABLES = (
    "overview",
    "bank_heatmap",
    "findings_by_code",
    "findings_by_period",
    "disputed_games",
)
GAME_TABLES = ("game_players", "game_turns", "game_findings")
# Report models of the winning-chance yardstick (two-player games): run when the dataset's
# rolls and decisions carry the corrected turn state choices are judged in.
RACE_REPORT_TABLES = ("race_loss",)
RACE_GAME_TABLES = ("game_race",)


# Stats tables of the Decision quality section: left out (the page says why) for a dataset
# written before rolls and decisions carried the corrected state they are judged in.
QUALITY_TABLES = ("decision_quality", "decision_loss_by_state", "blunders", "race_quality", "race_costliest")
STATE_COLUMNS = {"rolls": ("points_before", "opened"), "decisions": ("turn_points_corrected", "opened")}


def has_choice_states(con) -> bool:
    for table, columns in STATE_COLUMNS.items():
        names = {d[0] for d in con.execute(f"select * from src_{table} limit 0").description}
        if not set(columns) <= names:
            return False
    return True


class GameNotFound(UserError, LookupError):
    """--game names a game the dataset does not hold."""


@dataclass
class ReportData:
    """The tables one page is drawn from (all small: aggregated or capped)."""

    dataset: str
    filters: Filters
    stats: dict[str, pa.Table]  # pipeline.stats tables, by name (TABLE_NAMES; QUALITY_TABLES may be absent)
    report: dict[str, pa.Table]  # report models, by name (REPORT_TABLES)
    players: list[str]  # the players one can pick in per-player charts, most turns first
    players_total: int  # players in scope (the pick list may be shorter)
    games: dict[str, pa.Table] = field(default_factory=dict)  # GAME_TABLES for detailed games
    detailed_games: list[str] = field(default_factory=list)  # ids, in page order
    dispute_game: str | None = None  # --game: the game whose full timeline leads the page
    league: LeagueData | None = None  # standings, ratings, head to head, player panels (not with --game)
    sheet: SheetView | None = None  # --scoresheet: a hand-kept sheet shown beside the dispute game


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@cache
def report_models() -> dict[str, Model]:
    """The stats models plus the report's, dependencies resolved across both sets."""
    base = load_models()
    mine = load_models(REPORT_SQL_DIR)
    clash = sorted(base.keys() & mine.keys())
    if clash:
        raise RuntimeError(f"report SQL model(s) {', '.join(clash)} also exist in sql/: rename one")
    names = base.keys() | mine.keys() | PYTHON_MODELS.keys()
    models = dict(base)
    for name, model in mine.items():
        words = set(_WORD.findall(strip_comments(model.sql)))
        deps = tuple(sorted(n for n in names if n != name and n in words))
        models[name] = dataclasses.replace(model, depends_on=deps)
    return models


def gather(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    *,
    dispute_game: str | None = None,
    top_games: int = TOP_GAMES,
    league: League = League(),
    progress: Callable[..., None] | None = None,
    scoresheet: tuple[str, str] | None = None,
) -> ReportData:
    """Run every model the page needs over one DuckDB session.

    dispute_game: a game id whose full turn-by-turn timeline leads the page; the statistics
    then cover that game only (filters.game is set to it). Raises GameNotFound if the dataset
    has no such game, DatasetError if `dataset` is not a dataset. `league`: the standings'
    --min-games and the trends' period (NoRatedPlayer when --min-games leaves nobody).
    `progress` is told the tables as they are computed (pipeline.stats.runner.Steps).
    `scoresheet`: (name, CSV text) of a hand-kept sheet of that game, checked against its
    stored turns and shown beside them (SheetError if the sheet has no row of it).
    """
    ds = dataset if isinstance(dataset, Dataset) else open_dataset(dataset)
    if dispute_game is not None:
        filters = dataclasses.replace(filters, game=dispute_game)
    models = report_models()
    if progress is not None:
        progress(stage="opening the dataset and solving its rulesets")
    with session(ds, filters, with_policy=True, league=league) as con:  # decision quality reads the policy
        set_variables(con, {"r_top_games": top_games, "r_games": []})
        if dispute_game is not None:
            found = con.execute("select count(*) from src_games where game_id = ?", [dispute_game]).fetchone()
            if not found or found[0] == 0:
                raise GameNotFound(f"{ds.path}: no game {dispute_game!r} in this dataset")
        judged = has_choice_states(con)
        stat_names = [name for name in TABLE_NAMES if judged or name not in QUALITY_TABLES]
        race = (RACE_REPORT_TABLES, RACE_GAME_TABLES) if judged else ((), ())
        count = len(stat_names) + len(REPORT_TABLES) + len(GAME_TABLES) + len(race[0]) + len(race[1])
        count += dispute_game is None  # the league figures, one step
        with steps(con, progress, count, "computing the tables") as step:

            def table(name: str) -> pa.Table:
                with step(f"computing {name.removeprefix('rpt_').removeprefix('report_').replace('_', ' ')}"):
                    return run(con, name, models)

            stats = {name: table(f"rpt_{name}") for name in stat_names}
            report = {name: table(f"rpt_report_{name}") for name in (*REPORT_TABLES, *race[0])}
            detailed = [dispute_game] if dispute_game is not None else []
            detailed += [g for g in report["disputed_games"].column("game_id").to_pylist() if g not in detailed]
            set_variables(con, {"r_games": detailed})
            games = {name: table(f"rpt_report_{name}") for name in (*GAME_TABLES, *race[1])}
            league_data = None
            if dispute_game is None:  # a dispute page is about one game: no league
                with step("computing the league figures"):
                    league_data = gather_league(
                        con, models, filters, league, stats.get("blunders"), f"dataset {ds.path}", judged
                    )
    sheet = None
    if scoresheet is not None and dispute_game is not None:
        turns = games["game_turns"]
        mine = turns.filter(pc.equal(turns["game_id"], dispute_game)).to_pylist()
        sheet = check(scoresheet[0], scoresheet[1], dispute_game, mine)
    summary = stats["player_summary"]
    per_player = summary.filter(pc.equal(summary["scope"], "player"))
    ranked = per_player.sort_by([("turns", "descending"), ("player", "ascending")])
    return ReportData(
        dataset=str(ds.path),
        filters=filters,
        stats=stats,
        report=report,
        players=ranked.column("player").to_pylist()[:TOP_PLAYERS],
        players_total=per_player.num_rows,
        games=games,
        detailed_games=detailed,
        dispute_game=dispute_game,
        league=league_data,
        sheet=sheet,
    )


def game_rows(data: ReportData, table: str, game_id: str) -> list[dict]:
    """Rows of one detailed game from a GAME_TABLES table."""
    t = data.games[table]
    return t.filter(pc.equal(t["game_id"], game_id)).to_pylist()

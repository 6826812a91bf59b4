"""Gather the league part of the report: standings, rating over time, head-to-head and one
panel per player (their trends, costliest choices and games with findings).

The figures are the stats models `farkle-logs stats` prints for the league sections
(rpt_ratings, rpt_head_to_head, rpt_trends, rpt_games_left_out, all over the finished games
of sql/int_finished_games) and two report models (pipeline/report/sql/): the rating chart's
points (rpt_report_rating_steps) and each shown player's games with findings
(rpt_report_player_games). Python only picks the players and rows shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import UserError
from pipeline.stats import Filters, League, run
from pipeline.stats.runner import Model, set_variables

# Caps that keep the page small whatever the league's size (see docs/report.md).
LEAGUE_PLAYERS = 30  # players with a line in the rating chart and a panel of their own (best rated first)
STANDINGS_ROWS = 100  # rows of the standings table
MATRIX_PLAYERS = 20  # rows and columns of the head-to-head matrix
RATING_POINTS = 1_500  # most points of the rating chart: past it, one per player and day, then week
PLAYER_GAMES = 10  # games with findings listed per player
PLAYER_CHOICES = 5  # costliest choices listed per player
PLAYER_OPPONENTS = 10  # head-to-head rows listed per player (most games together first)
MIN_DECIDED = 5  # a head-to-head cell is coloured only with this many games one of the two won
MIN_PERIOD_GAMES = 5  # a trends row with fewer finished games is marked as too few to read

STATS_TABLES = ("ratings", "head_to_head", "games_left_out", "trends")  # sql/rpt_<name>.sql
REPORT_TABLES = ("rating_steps", "player_games")  # pipeline/report/sql/rpt_report_<name>.sql


class NoRatedPlayer(UserError, LookupError):
    """--min-games leaves no player in the standings."""


@dataclass
class LeagueData:
    """The league tables of one page, already narrowed to what is shown."""

    league: League
    ratings: pa.Table  # rpt_ratings: every listed player, best first
    head_to_head: pa.Table  # rpt_head_to_head (the --player rows, or every pair)
    trends: pa.Table | None  # rpt_trends of the shown players (None: the dataset predates choice states)
    rating_steps: pa.Table  # rpt_report_rating_steps
    player_games: pa.Table  # rpt_report_player_games
    left_out: dict[str, dict]  # rpt_games_left_out, by figure
    shown: list[str]  # players with a rating line and a panel, in page order
    matrix_rows: list[str]  # head-to-head matrix: row players
    matrix_columns: list[str]  # and opponents, in order
    blunders: pa.Table | None = None  # stats `blunders` (None: decision quality not computed)
    filtered: bool = False  # --player given: the shown players are those
    rating_unit: str = "game"  # 'game', 'day' or 'week': one point per rated game, or per day or week


def _players_by_games(h2h: pa.Table, rows: list[str]) -> list[str]:
    """The opponents of `rows`, most games together first (then by name)."""
    mine = h2h.filter(pc.is_in(h2h["player"], value_set=pa.array(rows, pa.string())))
    counts: dict[str, int] = {}
    for r in mine.select(["opponent", "games"]).to_pylist():
        counts[r["opponent"]] = counts.get(r["opponent"], 0) + r["games"]
    return sorted(counts, key=lambda p: (-counts[p], p))


def gather_league(
    con,
    models: dict[str, Model],
    filters: Filters,
    league: League,
    blunders: pa.Table | None,
    where: str = "the dataset",
    judged: bool = True,
) -> LeagueData:
    """Run the league models on `con` (a stats session under `filters` and `league`).

    Raises NoRatedPlayer when `league.min_games` leaves nobody in the standings (as `stats
    --section ratings --min-games N` refuses it). judged=False: the dataset was written before
    rolls and decisions carried their corrected state, which the trends' decision loss needs:
    no trends."""
    names = STATS_TABLES if judged else tuple(n for n in STATS_TABLES if n != "trends")
    tables = {name: run(con, f"rpt_{name}", models) for name in names}
    ratings = tables["ratings"]
    if league.min_games and ratings.num_rows == 0:
        raise NoRatedPlayer(f"no player in {where} has {league.min_games:,} rated games (--min-games)")
    rated = ratings.column("player").to_pylist()
    filtered = bool(filters.players)
    shown = list(filters.players) if filtered else rated[:LEAGUE_PLAYERS]
    set_variables(
        con,
        {"r_league_players": shown, "r_rating_points": RATING_POINTS, "r_player_games": PLAYER_GAMES},
    )
    report = {name: run(con, f"rpt_report_{name}", models) for name in REPORT_TABLES}
    h2h = tables["head_to_head"]
    if filtered:
        rows = list(filters.players)
        columns = _players_by_games(h2h, rows)[:MATRIX_PLAYERS]
    else:
        rows = columns = shown[:MATRIX_PLAYERS]
    trends = tables.get("trends")
    if trends is not None:
        trends = trends.filter(pc.is_in(trends["player"], value_set=pa.array(shown, pa.string())))
    steps = report["rating_steps"]
    units = {u for u in steps.column("unit").to_pylist() if u is not None}
    return LeagueData(
        league=league,
        ratings=ratings,
        head_to_head=h2h,
        trends=trends,
        rating_steps=steps,
        player_games=report["player_games"],
        left_out={r["figure"]: r for r in tables["games_left_out"].to_pylist()},
        shown=shown,
        matrix_rows=rows,
        matrix_columns=columns,
        blunders=blunders,
        filtered=filtered,
        rating_unit=units.pop() if units else "game",
    )


def matrix_cells(data: LeagueData) -> pa.Table:
    """The head-to-head rows between the matrix's row players and its columns."""
    h2h = data.head_to_head
    keep = pc.and_(
        pc.is_in(h2h["player"], value_set=pa.array(data.matrix_rows, pa.string())),
        pc.is_in(h2h["opponent"], value_set=pa.array(data.matrix_columns, pa.string())),
    )
    return h2h.filter(keep)


def rows_of(table: pa.Table, player: str) -> list[dict]:
    return table.filter(pc.equal(table["player"], player)).to_pylist()

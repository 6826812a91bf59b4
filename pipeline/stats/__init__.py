"""Player statistics: the SQL models of `sql/`, run by DuckDB over a farkle-logs dataset.

    from pipeline.stats import Filters, compute
    tables = compute("dataset/", Filters(player="ana"), ["bust", "players"])
    tables["bust_rate_by_dice_left"]   # a pyarrow.Table

The statistics are computed in SQL only; Python opens the dataset, resolves `--rules` to the
stored ruleset texts, builds the exact-odds table with the rules engine and binds the filters.
The report command draws the same tables through `compute` (or `session` + `run` for a model
of its own).
"""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import pyarrow as pa

from pipeline.dataset.layout import Dataset, DatasetError, open_dataset
from pipeline.rules import Ruleset
from pipeline.stats.model_cache import IDENTITY_VARIABLE, dataset_identity
from pipeline.stats.odds import exact_odds_table, matching_rulesets
from pipeline.stats.runner import close, connect, run, set_variables, steps
from pipeline.strategy.judge import DEFAULT_BLUNDER_THRESHOLD

#: Winning chance (percentage points) a choice must lose to be a mistake / a blunder:
#: pipeline.solved.judge and docs/stats.md say why these.
RACE_MISTAKE_PP = 1.0
RACE_BLUNDER_PP = 4.0

# Section -> the reports (sql/rpt_<table>.sql) it shows, in display order.
SECTIONS: dict[str, tuple[str, ...]] = {
    "bust": ("bust_rate_by_dice_left",),
    "turns": ("turn_value", "turn_value_buckets"),
    "decisions": ("bank_vs_roll_by_dice_left", "bank_vs_roll_by_points"),
    "players": ("player_summary", "player_findings"),
    "dice": ("dice_fairness",),
    # judged against the exact single-turn policy (pipeline.strategy.judge), and the choices
    # of two-player games by the winning chance they cost (pipeline.solved.judge)
    "decisions-quality": ("decision_quality", "decision_loss_by_state", "blunders", "race_quality", "race_costliest"),
}
# The league figures (pipeline.stats.league): standings by rating, each player's rating after
# every game, who finishes above whom, and each player's figures per week or month. Opt-in,
# and not among TABLE_NAMES (the tables the report draws).
LEAGUE_SECTIONS: dict[str, tuple[str, ...]] = {
    "ratings": ("ratings",),
    "rating-history": ("rating_history",),
    "head-to-head": ("head_to_head",),
    "trends": ("trends",),
}
ALL_SECTIONS: dict[str, tuple[str, ...]] = {**SECTIONS, **LEAGUE_SECTIONS}
# The long lists (worst first: up to one row per choice) -> the model holding their rows
# before the report words them. `compute(list_rows=N)` has the reports word only the rows
# that can be among the worst N and counts the whole list in that model, for a caller that
# shows N rows of lists that can hold hundreds of thousands.
LONG_LISTS: dict[str, str] = {"race_costliest": "int_race_costly_choices", "blunders": "int_blunder_rows"}
#: The metadata key of a cut long list's table: how many rows the whole list has.
ROWS_TOTAL = b"rows_total"
# Sections whose models read the policy tables (policy_values, policy_tail, keep_options):
# trends shows each period's decision loss.
POLICY_SECTIONS = ("decisions-quality", "trends")
PERIODS = ("week", "month")
LEFT_OUT_TABLE = "games_left_out"
# Computed when no section is named: all but the opt-in ones. decisions-quality solves each
# ruleset and judges every choice (~0.7 s per million events): asked for by name only.
OPT_IN_SECTIONS = ("decisions-quality", *LEAGUE_SECTIONS)
DEFAULT_SECTIONS: tuple[str, ...] = tuple(s for s in SECTIONS if s not in OPT_IN_SECTIONS)
TABLE_NAMES: tuple[str, ...] = tuple(t for tables in SECTIONS.values() for t in tables)
ALL_TABLE_NAMES: tuple[str, ...] = tuple(t for tables in ALL_SECTIONS.values() for t in tables)

__all__ = [
    "ALL_SECTIONS",
    "ALL_TABLE_NAMES",
    "DEFAULT_SECTIONS",
    "LEAGUE_SECTIONS",
    "SECTIONS",
    "TABLE_NAMES",
    "Dataset",
    "DatasetError",
    "Filters",
    "League",
    "compute",
    "filter_variables",
    "open_dataset",
    "run",
    "session",
]


@dataclass(frozen=True)
class Filters:
    """Which rows the statistics cover; None = no filter.

    players: rows of these players in games one of them sat in (`player` is the one name
    when there is one, so `Filters(player="ana")` and `Filters(players=("ana",))` are the
    same; a `player` not among `players` replaces them); game: one game_id; rules: games
    whose ruleset equals this one knob for knob; since/until: games whose first event falls
    on those UTC dates (both inclusive; games without timestamps are then left out).
    """

    player: str | None = None
    game: str | None = None
    rules: Ruleset | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    players: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = tuple(dict.fromkeys(self.players))
        if self.player is not None and self.player not in names:
            names = (self.player,)
        object.__setattr__(self, "players", names)
        object.__setattr__(self, "player", names[0] if len(names) == 1 else None)

    def describe(self) -> dict[str, object]:
        return {
            "player": list(self.players) if len(self.players) > 1 else self.player,
            "game": self.game,
            "rules": self.rules.to_dict() if self.rules is not None else None,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }


@dataclass(frozen=True)
class League:
    """Options of the league figures. min_games: the standings (`ratings`) list the players
    with at least this many rated games (every game is rated all the same); by: the trends'
    period, `week` (from Monday, UTC) or `month`."""

    min_games: int = 0
    by: str = "month"

    def __post_init__(self) -> None:
        if self.by not in PERIODS:
            raise ValueError(f"unknown period {self.by!r}: periods are {', '.join(PERIODS)}")
        if self.min_games < 0:
            raise ValueError(f"min_games is {self.min_games}: it cannot be negative")


def _midnight_utc(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


def _last_instant_utc(day: dt.date) -> dt.datetime:
    """The day's last microsecond (timestamps are stored in microseconds): an inclusive
    bound, which exists for 9999-12-31 too, where the next midnight does not."""
    return dt.datetime.combine(day, dt.time.max, tzinfo=dt.timezone.utc)


def filter_variables(
    filters: Filters,
    ruleset_texts: list[str],
    blunder_threshold: float,
    league: "League | None" = None,
    list_rows: int | None = None,
) -> dict[str, object]:
    """The models' variables (f_players, f_rulesets, ...) for `filters`: bound by DuckDB's
    `set variable` here, and as literals by the Spark engine (pipeline.engines.spark).
    f_player is the one --player when there is one (the report's own models read it);
    f_list_rows, when set, has the long lists (LONG_LISTS) word only their worst rows."""
    league = league or League()
    return {
        "f_player": filters.player,
        "f_players": list(filters.players) or None,
        "f_min_games": int(league.min_games),
        "f_period": league.by,
        # the exploring lists' own filters (pipeline.stats.explore), unset here
        "f_codes": None,
        "f_severity": None,
        "f_with_findings": False,
        "f_game": filters.game,
        "f_rulesets": matching_rulesets(ruleset_texts, filters.rules) if filters.rules is not None else None,
        "f_since": _midnight_utc(filters.since) if filters.since else None,
        "f_until": _last_instant_utc(filters.until) if filters.until else None,
        "f_blunder_threshold": float(blunder_threshold),
        "f_race_mistake_pp": RACE_MISTAKE_PP,
        "f_race_blunder_pp": RACE_BLUNDER_PP,
        "f_list_rows": list_rows,
    }


@contextmanager
def session(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    with_odds: bool = True,
    with_policy: bool = False,
    blunder_threshold: float = DEFAULT_BLUNDER_THRESHOLD,
    league: League = League(),
    list_rows: int | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection ready to run any model of `sql/` (see `run`) under `filters`.

    with_odds=False skips the exact-odds table (models reading `exact_odds` then fail):
    building it costs the rules engine's enumeration for each ruleset in the dataset.
    with_policy=True registers policy_values, policy_tail and keep_options, which the
    decision-quality models read: each ruleset solved by pipeline.strategy the first time, then read from the stats cache (pipeline.stats.cache);
    `blunder_threshold` is the DuckDB variable f_blunder_threshold, `list_rows` f_list_rows.
    """
    ds = dataset if isinstance(dataset, Dataset) else open_dataset(dataset)
    if filters.since and filters.until and filters.since > filters.until:
        raise ValueError(f"since {filters.since} is after until {filters.until}")
    con = connect(ds)
    try:
        texts = [row[0] for row in con.execute("select distinct ruleset::varchar from src_games").fetchall()]
        set_variables(con, filter_variables(filters, texts, blunder_threshold, league, list_rows))
        set_variables(con, {IDENTITY_VARIABLE: dataset_identity(ds)})  # the model cache's key
        if with_odds:
            con.register("exact_odds", exact_odds_table(texts))
        if with_policy:
            from pipeline.stats.cache import policy_tables

            for name, table in policy_tables(texts).items():
                con.register(name, table)
        yield con
    finally:
        close(con)


def plan_sections(sections: list[str] | tuple[str, ...] | None) -> tuple[list[str], bool, bool]:
    """(report tables, whether exact_odds is needed, whether the policy tables are): one
    plan for every engine, so DuckDB and Spark compute the same tables from the same input.
    With a league section the tables end with games_left_out (rpt_games_left_out): the
    games each league figure does not count, for the figure to say so."""
    chosen = list(DEFAULT_SECTIONS) if sections is None else list(sections)
    unknown = [s for s in chosen if s not in ALL_SECTIONS]
    if unknown:
        raise ValueError(f"unknown section {unknown[0]!r}: sections are {', '.join(ALL_SECTIONS)}")
    tables = [t for s in chosen for t in ALL_SECTIONS[s]]
    if any(s in LEAGUE_SECTIONS for s in chosen):  # what the league figures left out, said with them
        tables.append(LEFT_OUT_TABLE)
    with_odds = any(s in ("bust", "players") for s in chosen)  # the sections reading exact_odds
    with_policy = any(s in POLICY_SECTIONS for s in chosen)
    return tables, with_odds, with_policy


def compute(
    dataset: str | Path | Dataset,
    filters: Filters = Filters(),
    sections: list[str] | tuple[str, ...] | None = None,
    blunder_threshold: float = DEFAULT_BLUNDER_THRESHOLD,
    league: League = League(),
    progress: Callable[..., None] | None = None,
    list_rows: int | None = None,
) -> dict[str, pa.Table]:
    """The report tables of `sections` (DEFAULT_SECTIONS by default: all but the opt-in
    decisions-quality and league sections), keyed by table name (ALL_SECTIONS).
    `blunder_threshold`: expected points a choice must give up to count as a blunder;
    `league`: the standings' --min-games and the trends' period; `progress` is told the
    tables as they are computed (pipeline.stats.runner.Steps). `list_rows`: the long lists
    (LONG_LISTS) cut to their worst `list_rows` rows, each with the length of the whole
    list in its metadata (ROWS_TOTAL); None: every row."""
    tables, with_odds, with_policy = plan_sections(sections)
    if progress is not None:
        progress(stage="opening the dataset" + (" and solving its rulesets" if with_policy else ""))
    with session(
        dataset,
        filters,
        with_odds=with_odds,
        with_policy=with_policy,
        blunder_threshold=blunder_threshold,
        league=league,
        list_rows=list_rows,
    ) as con:
        with steps(con, progress, len(tables), "computing") as step:
            out = {}
            for t in tables:
                with step(f"computing {t.replace('_', ' ')}"):
                    out[t] = run(con, f"rpt_{t}")
                    if list_rows is not None and t in LONG_LISTS:
                        out[t] = _cut_list(con, out[t], LONG_LISTS[t], list_rows)
            return out


def _cut_list(con: duckdb.DuckDBPyConnection, rows: pa.Table, source: str, list_rows: int) -> pa.Table:
    """A long list's worst `list_rows` rows (the report gave those that can be, ties at the
    edge included), with the number of rows of the whole list (its model `source`) in the
    metadata under ROWS_TOTAL."""
    ((total,),) = con.execute(f"select count(*) from {source}").fetchall()
    return rows.slice(0, list_rows).replace_schema_metadata({**(rows.schema.metadata or {}), ROWS_TOTAL: b"%d" % total})

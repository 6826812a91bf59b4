"""`farkle-logs stats`: player statistics over a dataset, computed by the SQL in `sql/`."""
from __future__ import annotations

import datetime as dt
import enum
import json
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING, List, Optional

import typer
from rich.table import Table

from pipeline.cli.common import RULES_HELP, stderr, stdout, usage_error
from pipeline.cli.main import app
from pipeline.cli.dataset_options import dataset_failure, dataset_or_exit, filters_or_exit
from pipeline.cli.engine_options import Engine, check_engine, engine_option, master_option, spark_or_exit

if TYPE_CHECKING:  # pyarrow and duckdb load only when stats runs, not for every command
    import pyarrow as pa


class StatsFormat(str, enum.Enum):
    text = "text"
    json = "json"
    csv = "csv"


TITLES = {
    "bust_rate_by_dice_left": "Bust rate by dice left (exact = rules engine odds; OFF = exact outside the 95 % Wilson interval)",
    "turn_value": "Points per turn (farkled turns count as 0; corrected points)",
    "turn_value_buckets": "Points per turn, distribution",
    "bank_vs_roll_by_dice_left": "Bank vs roll after a keep, by dice left",
    "bank_vs_roll_by_points": "Bank vs roll after a keep, by turn points so far",
    "player_summary": "Players",
    "player_findings": "Audit findings against players",
    "dice_fairness": "Dice faces (chi-square against fair dice, 5 df)",
    "decision_quality": "Decision quality: expected points given up per choice against the exact single-turn policy",
    "decision_loss_by_state": "Decision quality by kind of choice, dice and turn points",
    "blunders": "Blunders: choices that gave up more than the threshold",
}
# Tables judged by pipeline.strategy's single-turn model: their text output carries its caveat.
MODEL_TABLES = {"decision_quality", "decision_loss_by_state", "blunders"}

# Columns shown on a terminal (json and csv carry every column), with their headers.
TEXT_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "bust_rate_by_dice_left": [
        ("dice", "dice"), ("rolls", "rolls"), ("farkles", "farkles"), ("bust_rate", "observed"),
        ("wilson_lo", "95% lo"), ("wilson_hi", "95% hi"), ("exact_rate", "exact"), ("p_value", "p"), ("off", "off"),
    ],
    "turn_value": [
        ("turns", "turns"), ("farkled_turns", "farkled"), ("mean_points", "mean"), ("median_points", "median"),
        ("banked_turns", "banked"), ("mean_banked_only", "mean (banked turns only)"),
    ],
    "turn_value_buckets": [("bucket", "points"), ("turns", "turns"), ("share", "share")],
    "bank_vs_roll_by_dice_left": [
        ("dice_left", "dice left"), ("decisions", "decisions"), ("banks", "banked"), ("rolls", "rolled"),
        ("bank_rate", "bank rate"), ("farkle_rate_after_roll", "farkled after rolling"),
    ],
    "bank_vs_roll_by_points": [
        ("bucket", "turn points"), ("decisions", "decisions"), ("banks", "banked"), ("rolls", "rolled"),
        ("bank_rate", "bank rate"), ("farkle_rate_after_roll", "farkled after rolling"),
    ],
    "player_summary": [
        ("games", "games"), ("wins", "wins"), ("win_rate", "win rate"), ("turns", "turns"),
        ("mean_turn_value", "mean turn"), ("bust_rate", "bust rate"), ("hot_dice_per_100_turns", "hot dice/100 turns"),
        ("banks_below_300", "banks <300"), ("findings", "findings"), ("claimed_points", "claimed pts"),
        ("corrected_points", "corrected pts"),
    ],
    "player_findings": [("code", "code"), ("findings", "findings")],
    "dice_fairness": [
        ("face_1", "1s"), ("face_2", "2s"), ("face_3", "3s"), ("face_4", "4s"), ("face_5", "5s"), ("face_6", "6s"),
        ("dice", "dice"), ("chi2", "chi2"), ("p_value", "p"),
    ],
    "decision_quality": [
        ("judged", "judged"), ("not_judged", "not judged"), ("mean_loss", "mean loss"),
        ("optimal_share", "optimal"), ("blunders", "blunders"), ("mean_keep_loss", "keep loss"),
        ("mean_action_loss", "bank/roll loss"),
    ],
    "decision_loss_by_state": [
        ("kind", "choice"), ("dice", "dice"), ("bucket", "turn points"), ("judged", "judged"),
        ("mean_loss", "mean loss"), ("optimal_share", "optimal"),
    ],
    "blunders": [
        ("game_id", "game"), ("seq", "seq"), ("kind", "choice"), ("points", "turn pts"), ("dice", "dice"),
        ("roll", "roll"), ("made", "made"), ("best", "best"), ("loss", "loss"),
    ],
}
TEXT_BLUNDERS = 25  # blunders shown on a terminal, worst first
PERCENT_COLUMNS = {"bust_rate", "wilson_lo", "wilson_hi", "exact_rate", "share", "bank_rate",
                   "farkle_rate_after_roll", "win_rate", "optimal_share"}


@app.command()
def stats(
    dataset: str = typer.Argument(..., help="A dataset directory written by `farkle-logs ingest`."),
    player: Optional[str] = typer.Option(None, "--player", "-p", help="Only this player's rows, in games they sat in."),
    rules: Optional[str] = typer.Option(None, "--rules", "-r", help="Only games played under this ruleset. " + RULES_HELP),
    since: Optional[dt.datetime] = typer.Option(None, "--since", formats=["%Y-%m-%d"], help="Games started on or after this UTC date (YYYY-MM-DD)."),
    until: Optional[dt.datetime] = typer.Option(None, "--until", formats=["%Y-%m-%d"], help="Games started on or before this UTC date (YYYY-MM-DD)."),
    game: Optional[str] = typer.Option(None, "--game", "-g", help="Only this game_id."),
    format: StatsFormat = typer.Option(StatsFormat.text, "--format", "-f", help="text (tables), json or csv (one table)."),
    section: Optional[List[str]] = typer.Option(
        None, "--section", "-s",
        help="bust, turns, decisions, players, dice, decisions-quality, or a table name (repeatable; "
             "default: all but decisions-quality, which solves each ruleset and judges every choice).",
    ),
    blunder_threshold: float = typer.Option(
        150.0, "--blunder-threshold", min=0.0,
        help="decisions-quality: a choice giving up more than this many expected points is a blunder.",
    ),
    engine: Engine = engine_option(),
    spark_master: Optional[str] = master_option(),
) -> None:
    """Bust rates against the exact odds, turn value, bank-or-roll choices, player summaries
    and dice fairness. Exit 2 when DATASET is missing, not a farkle-logs dataset, or damaged."""
    from pipeline.stats import DEFAULT_SECTIONS, SECTIONS, TABLE_NAMES, compute
    from pipeline.strategy.solver import MODEL_NOTE, refusals

    wanted_sections, wanted_tables = _selection(section or list(DEFAULT_SECTIONS), SECTIONS, TABLE_NAMES)
    if format is StatsFormat.csv and len(wanted_tables) != 1:
        usage_error(
            "csv holds one table: choose it with --section, one of " + ", ".join(TABLE_NAMES)
        )
    filters = filters_or_exit(player, rules, since, until, game)
    check_engine(engine, spark_master)
    ds = dataset_or_exit(dataset)
    with ExitStack() as stack:
        spark = stack.enter_context(spark_or_exit(spark_master)) if engine is Engine.spark else None
        try:
            with refusals() as unsolved:  # rulesets past the solver's budget: their choices are not judged
                if spark is not None:
                    tables = _spark_compute(spark, ds, filters, wanted_sections, blunder_threshold)
                else:
                    tables = compute(ds, filters, wanted_sections, blunder_threshold=blunder_threshold)
        except Exception as exc:  # a damaged Parquet file (exit 2, the way out) or a bug (re-raised)
            dataset_failure(ds, exc)
    for message in unsolved:
        stderr.print(f"note: {message}; its games' choices are not judged", markup=False)
    tables = {name: tables[name] for name in wanted_tables}
    if all(t.num_rows == 0 for t in tables.values()):
        stderr.print("note: no rows match these filters", markup=False)
    if format is StatsFormat.json:
        payload = {
            "dataset": str(dataset),
            "filters": filters.describe(),
            **({"blunder_threshold": blunder_threshold, "model": MODEL_NOTE}
               if MODEL_TABLES & set(tables) else {}),
            "tables": {name: table.to_pylist() for name, table in tables.items()},
        }
        sys.stdout.write(json.dumps(payload, default=str) + "\n")  # compact: pipe to jq to read
    elif format is StatsFormat.csv:
        _write_csv(next(iter(tables.values())))
    else:
        for name, table in tables.items():
            stdout.print(_rich_table(name, table))
        if MODEL_TABLES & set(tables):
            stdout.print(f"note: {MODEL_NOTE}; blunder = loss above {blunder_threshold:g} points. "
                         "Choices whose state is not valid (findings in the turn) are not judged.", markup=False)


def _spark_compute(spark, ds, filters, sections, blunder_threshold):
    from pipeline.engines.spark.stats import compute as spark_compute

    return spark_compute(ds, filters, sections, blunder_threshold, spark=spark)


def _selection(chosen: list[str], sections: dict[str, tuple[str, ...]], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(sections to compute, tables to show) from --section values: sections or table names."""
    if not chosen:
        return list(sections), list(names)
    wanted_sections: list[str] = []
    wanted_tables: list[str] = []
    for item in chosen:
        if item in sections:
            owners, tables = [item], list(sections[item])
        else:
            owners = [s for s, ts in sections.items() if item in ts]
            if not owners:
                usage_error(
                    f"unknown section {item!r}: sections are {', '.join(sections)}; tables are {', '.join(names)}"
                )
            tables = [item]
        wanted_sections += [s for s in owners if s not in wanted_sections]
        wanted_tables += [t for t in tables if t not in wanted_tables]
    return wanted_sections, wanted_tables


def _write_csv(table: pa.Table) -> None:
    import pyarrow.csv as pacsv

    sys.stdout.flush()
    pacsv.write_csv(table, sys.stdout.buffer)
    sys.stdout.buffer.flush()


def _cell(column: str, value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "OFF" if value else ""
    if isinstance(value, float):
        if column in PERCENT_COLUMNS:
            return f"{100 * value:.2f}%"
        if column == "p_value":
            return f"{value:.2g}"
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _rich_table(name: str, table: pa.Table) -> Table:
    columns = TEXT_COLUMNS[name]
    out = Table(title=TITLES[name], title_justify="left")
    out.add_column("player")
    for _, header in columns:
        out.add_column(header, justify="right")
    rows = table.to_pylist()
    if name == "blunders" and len(rows) > TEXT_BLUNDERS:
        out.caption = f"the worst {TEXT_BLUNDERS} of {len(rows):,} (json and csv have them all)"
        rows = rows[:TEXT_BLUNDERS]
    for row in rows:
        who = row["player"] if row["scope"] == "player" else "all"
        out.add_row(who, *(_cell(col, row[col]) for col, _ in columns))
    return out

"""`farkle-logs stats`: player statistics over a dataset, computed by the SQL in `sql/`."""

from __future__ import annotations

import enum
import io
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer

from pipeline.cli.common import compiles_announced, did_you_mean, live, note, progress_bar, stdout, usage_error
from pipeline.cli.main import app
from pipeline.cli.csv_cells import exact_csv_option
from pipeline.cli.dataset_options import (
    PlayersOption,
    RulesFilterOption,
    SinceOption,
    UntilOption,
    dataset_failure,
    dataset_or_exit,
    filters_or_exit,
)
from pipeline.cli.engine_options import Engine, check_engine, engine_option, master_option, routing

if TYPE_CHECKING:  # pyarrow and duckdb load only when stats runs, not for every command
    import pyarrow as pa


class LeaguePeriod(str, enum.Enum):
    week = "week"
    month = "month"


class StatsFormat(str, enum.Enum):
    text = "text"
    json = "json"
    csv = "csv"


TITLES = {
    "bust_rate_by_dice_left": (
        "Bust rate by dice left (exact = rules engine odds; p = exact binomial test; Holm = p corrected for "
        "testing every row, OFF below 0.05)"
    ),
    "turn_value": "Points per turn (farkled turns count as 0; corrected points)",
    "turn_value_buckets": "Points per turn, distribution",
    "bank_vs_roll_by_dice_left": "Bank vs roll after a keep, by dice left",
    "bank_vs_roll_by_points": "Bank vs roll after a keep, by turn points so far",
    "player_summary": "Players",
    "player_findings": "Audit findings against players",
    "dice_fairness": (
        "Dice faces (chi-square against fair dice, 5 df; p exact up to 100 dice; Holm = p corrected for "
        "testing every player, OFF below 0.05)"
    ),
    "decision_quality": "Decision quality: expected points given up per choice against the exact single-turn policy",
    "decision_loss_by_state": "Decision quality by kind of choice, dice and turn points",
    "blunders": "Blunders: choices that gave up more than the threshold",
    "race_quality": "Decision quality, two-player games: winning chance lost per choice (yardstick: the chance of "
    "winning the game under best play by both; percentage points)",
    "race_costliest": "Costliest choices of two-player games (winning chance lost, percentage points)",
}
P_COLUMNS = {"p_value", "p_adjusted"}  # printed one way (significance.format_p)
# A flagged row says OFF after its adjusted p-value (one column less on a terminal).
FLAGGED_BY = {"p_adjusted": "off"}
# Tables judged by pipeline.strategy's single-turn model: their text output carries its caveat.
MODEL_TABLES = {"decision_quality", "decision_loss_by_state", "blunders"}
# Tables judged by the two-player winning chance (pipeline.strategy.race).
RACE_TABLES = {"race_quality", "race_costliest"}

# Columns shown on a terminal (json and csv carry every column), with their headers.
TEXT_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "bust_rate_by_dice_left": [
        ("dice", "dice"),
        ("rolls", "rolls"),
        ("farkles", "farkles"),
        ("bust_rate", "observed"),
        ("wilson_lo", "95% lo"),
        ("wilson_hi", "95% hi"),
        ("exact_rate", "exact"),
        ("p_value", "p"),
        ("p_adjusted", "Holm"),
    ],
    "turn_value": [
        ("turns", "turns"),
        ("farkled_turns", "farkled"),
        ("mean_points", "mean"),
        ("median_points", "median"),
        ("banked_turns", "banked"),
        ("mean_banked_only", "mean (banked turns only)"),
    ],
    "turn_value_buckets": [("bucket", "points"), ("turns", "turns"), ("share", "share")],
    "bank_vs_roll_by_dice_left": [
        ("dice_left", "dice left"),
        ("decisions", "decisions"),
        ("banks", "banked"),
        ("rolls", "rolled"),
        ("bank_rate", "bank rate"),
        ("farkle_rate_after_roll", "farkled after rolling"),
    ],
    "bank_vs_roll_by_points": [
        ("bucket", "turn points"),
        ("decisions", "decisions"),
        ("banks", "banked"),
        ("rolls", "rolled"),
        ("bank_rate", "bank rate"),
        ("farkle_rate_after_roll", "farkled after rolling"),
    ],
    "player_summary": [
        ("games", "games"),
        ("wins", "wins"),
        ("win_rate", "win rate"),
        ("turns", "turns"),
        ("mean_turn_value", "mean turn"),
        ("bust_rate", "bust rate"),
        ("hot_dice_per_100_turns", "hot dice/100 turns"),
        ("banks_below_300", "banks <300"),
        ("findings", "findings"),
        ("claimed_points", "claimed pts"),
        ("corrected_points", "corrected pts"),
    ],
    "player_findings": [("code", "code"), ("findings", "findings")],
    "dice_fairness": [
        ("face_1", "1s"),
        ("face_2", "2s"),
        ("face_3", "3s"),
        ("face_4", "4s"),
        ("face_5", "5s"),
        ("face_6", "6s"),
        ("dice", "dice"),
        ("chi2", "chi2"),
        ("p_value", "p"),
        ("p_adjusted", "Holm"),
    ],
    "decision_quality": [
        ("judged", "judged"),
        ("not_judged", "not judged"),
        ("mean_loss", "mean loss"),
        ("optimal_share", "optimal"),
        ("blunders", "blunders"),
        ("mean_keep_loss", "keep loss"),
        ("mean_action_loss", "bank/roll loss"),
    ],
    "decision_loss_by_state": [
        ("kind", "choice"),
        ("dice", "dice"),
        ("bucket", "turn points"),
        ("judged", "judged"),
        ("mean_loss", "mean loss"),
        ("optimal_share", "optimal"),
    ],
    "race_quality": [
        ("games", "games"),
        ("judged", "judged"),
        ("not_judged", "not judged"),
        ("loss_per_choice", "loss/choice pp"),
        ("loss_per_game", "loss/game pp"),
        ("accuracy", "accuracy"),
        ("optimal_share", "optimal"),
        ("mistakes", "mistakes"),
        ("blunders", "blunders"),
    ],
    "race_costliest": [
        ("game_id", "game"),
        ("seq", "seq"),
        ("scores", "totals"),
        ("points", "turn pts"),
        ("situation", "kept from / dice left"),
        ("made", "made"),
        ("best", "best"),
        ("chance_best", "chance"),
        ("loss_pp", "loss pp"),
    ],
    "blunders": [
        ("game_id", "game"),
        ("seq", "seq"),
        ("points", "turn pts"),
        ("situation", "kept from / dice left"),
        ("made", "made"),
        ("best", "best"),
        ("loss", "loss"),
    ],
}
TEXT_BLUNDERS = 25  # blunders shown on a terminal, worst first
# Tables with several rows per player (one per dice count or points bucket): on a terminal,
# past TEXT_PLAYERS players they show the overall rows only (and, for bust rates, the player
# rows whose exact odds fall outside the interval), so `stats` over a league is a page, not
# thousands of lines; --player, --all, json and csv give every row.
PER_SITUATION_TABLES = {
    "bust_rate_by_dice_left",
    "turn_value_buckets",
    "bank_vs_roll_by_dice_left",
    "bank_vs_roll_by_points",
}
TEXT_PLAYERS = 10
PERCENT_COLUMNS = {
    "bust_rate",
    "wilson_lo",
    "wilson_hi",
    "exact_rate",
    "share",
    "bank_rate",
    "farkle_rate_after_roll",
    "win_rate",
    "optimal_share",
    "chance_best",
}


@app.command(short_help="Player statistics of a dataset against the exact odds.")
def stats(
    dataset: str = typer.Argument(..., metavar="DATASET", help="A dataset directory written by `farkle-logs ingest`."),
    player: PlayersOption = None,
    rules: RulesFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    game: Optional[str] = typer.Option(None, "--game", "-g", metavar="ID", help="Only this game_id."),
    format: StatsFormat = typer.Option(
        StatsFormat.text, "--format", "-f", metavar="FORMAT", help="text (tables), json or csv (one table)."
    ),
    section: Optional[List[str]] = typer.Option(
        None,
        "--section",
        "-s",
        metavar="SECTION",
        help="bust, turns, decisions, players, dice, decisions-quality, ratings, rating-history, "
        "head-to-head, trends, or a table name (repeatable; default: all but decisions-quality, which "
        "solves each ruleset and judges every choice, and the league sections from ratings on).",
    ),
    by: LeaguePeriod = typer.Option(
        LeaguePeriod.month, "--by", metavar="PERIOD", help="trends: one row per player and week or month."
    ),
    min_games: int = typer.Option(
        0, "--min-games", min=0, metavar="N", help="ratings: list the players with at least N rated games."
    ),
    blunder_threshold: float = typer.Option(
        150.0,
        "--blunder-threshold",
        min=0.0,
        metavar="POINTS",
        help="decisions-quality: a choice giving up more than this many expected points is a blunder.",
    ),
    all_rows: bool = typer.Option(
        False,
        "--all",
        help=f"Text: every row of every table. By default decisions-quality shows its summary per player "
        f"and the worst {TEXT_BLUNDERS} blunders (with --player, also that player's situations), and "
        f"past {TEXT_PLAYERS} players the per-dice and per-bucket tables show the overall rows (and "
        "the OFF bust rates); json and csv always hold every row.",
    ),
    exact_csv: bool = exact_csv_option(),
    engine: Engine = engine_option(),
    spark_master: Optional[str] = master_option(),
) -> None:
    """Bust rates against the exact odds, turn value, bank-or-roll choices, player summaries,
    dice fairness and decision quality.

    Exit 0; 2: bad usage (DATASET missing, not a farkle-logs dataset or damaged, a filter
    that matches no game).
    """
    from pipeline.cli.dataset_options import filters_match_or_exit
    from pipeline import engines
    from pipeline.cli import league_render
    from pipeline.stats import ALL_SECTIONS as SECTIONS
    from pipeline.stats import ALL_TABLE_NAMES as TABLE_NAMES
    from pipeline.stats import DEFAULT_SECTIONS, LEFT_OUT_TABLE, LONG_LISTS, League
    from pipeline.strategy.solver import MODEL_NOTE, refusals

    section = _section_items(section or [], SECTIONS, TABLE_NAMES)
    wanted_sections, wanted_tables = _selection(section or list(DEFAULT_SECTIONS), SECTIONS, TABLE_NAMES)
    from pipeline.stats import POLICY_SECTIONS

    # the sections that judge choices may compile the two-player judge on a first run
    judging = compiles_announced if set(wanted_sections) & set(POLICY_SECTIONS) else _nothing
    if format is StatsFormat.csv and len(wanted_tables) != 1:
        usage_error("csv holds one table: choose it with --section, one of " + ", ".join(TABLE_NAMES))
    filters = filters_or_exit(player, rules, since, until, game)
    league = League(min_games=min_games, by=by.value)
    check_engine(engine, spark_master)
    ds = dataset_or_exit(dataset)
    filters_match_or_exit(ds, filters, rules)
    named = set(section or [])
    several = len(filters.players) > 1  # text shows each of their rows, as --player gives one player's
    # text shows the long lists' worst rows (unless asked for all): only those are worded
    cut = format is StatsFormat.text and not (all_rows or several or named & set(LONG_LISTS))
    try:
        # rulesets past the solver's budget: their choices are not judged
        with refusals() as unsolved, progress_bar("opening the dataset") as advance, judging(advance):
            tables = engines.stats(
                ds,
                filters,
                wanted_sections,
                routing(engine, spark_master),
                blunder_threshold=blunder_threshold,
                league=league,
                progress=live(advance),
                list_rows=TEXT_BLUNDERS if cut else None,
            )
    except Exception as exc:  # a damaged Parquet file (exit 2, the way out) or a bug (re-raised)
        dataset_failure(ds, exc)
    for message in unsolved:
        note(f"{message}; its games' choices are not judged")
    left_out = tables[LEFT_OUT_TABLE].to_pylist() if LEFT_OUT_TABLE in tables else []
    if min_games and "ratings" in tables and tables["ratings"].num_rows == 0:  # a filter matching nothing
        usage_error(f"no player in dataset {ds.path} has {min_games:,} rated games (--min-games)")
    tables = {name: tables[name] for name in wanted_tables}
    if all(t.num_rows == 0 for t in tables.values()):
        note("no rows match these filters")
    if format is StatsFormat.json:
        head = {
            "dataset": str(dataset),
            "filters": filters.describe(),
            **({"blunder_threshold": blunder_threshold, "model": MODEL_NOTE} if MODEL_TABLES & set(tables) else {}),
            **({"league": {"min_games": min_games, "by": by.value}} if left_out else {}),
            **({"games_left_out": {r.pop("figure"): r for r in left_out}} if left_out else {}),
        }
        _write_json(head, tables)
    elif format is StatsFormat.csv:
        write_csv(next(iter(tables.values())), exact=exact_csv)
    else:
        for name, table in tables.items():
            if name in league_render.TITLES:
                league_render.print_table(
                    name, table, all_rows=all_rows or bool(filters.players) or name in named, left_out=left_out
                )
                continue
            if name == "decision_loss_by_state" and not (all_rows or filters.players or name in named):
                note(
                    "decisions-quality by situation (kind of choice, dice, turn points): "
                    "--section decision_loss_by_state, or --all"
                )
                continue
            if name in RACE_TABLES and table.num_rows == 0:
                continue  # no two-player game in scope: the single-turn tables say it all
            _print_text_table(name, table, all_rows=all_rows or name in named or several, player=filters.player)
        if MODEL_TABLES & set(tables):
            stdout.line(
                f"note: single-turn yardstick (every game): {MODEL_NOTE}; blunder = loss above "
                f"{blunder_threshold:g} points. Choices whose state is not valid (findings in the turn) are not judged.",
                indent="  ",
            )
        if any(tables[name].num_rows for name in RACE_TABLES & set(tables)):
            from pipeline.stats import RACE_BLUNDER_PP, RACE_MISTAKE_PP

            stdout.line(
                "note: winning-chance yardstick (two-player games only; games of three or more players keep the "
                f"single-turn one): loss = chance after the best choice - after the choice made; mistake > "
                f"{RACE_MISTAKE_PP:g} pp, blunder > {RACE_BLUNDER_PP:g} pp; accuracy = mean over choices of "
                "103.1668 e^(-0.4354 loss) - 3.1669, clipped to 0-100.",
                indent="  ",
            )
    if engine is Engine.local:  # a Spark session ends the usual way
        from pipeline.cli import entry

        entry.skip_teardown()  # the output is out: the process need not free every object


@contextmanager
def _nothing(advance: object) -> Iterator[None]:
    yield


def _section_items(values: list[str], sections: dict[str, tuple[str, ...]], names: tuple[str, ...]) -> list[str]:
    """--section values as users type them: `bust,turns` is two, case is ignored, and `_`
    and `-` are the same in a section's name (`decisions_quality`)."""
    items = []
    for value in values:
        for item in filter(None, (part.strip() for part in value.split(","))):
            lower = item.lower()
            if lower in names:
                items.append(lower)
            else:
                dashed = lower.replace("_", "-")
                items.append(dashed if dashed in sections else item)
    return items


def _selection(
    chosen: list[str], sections: dict[str, tuple[str, ...]], names: tuple[str, ...]
) -> tuple[list[str], list[str]]:
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
                    f"unknown section {item!r}{did_you_mean(item, [*sections, *names])}: sections are "
                    f"{', '.join(sections)}; tables are {', '.join(names)}"
                )
            tables = [item]
        wanted_sections += [s for s in owners if s not in wanted_sections]
        wanted_tables += [t for t in tables if t not in wanted_tables]
    return wanted_sections, wanted_tables


JSON_ROWS_PER_CHUNK = 10_000
# From this many rows a table of plain columns is encoded by polars (in Rust, about 2.5 times
# msgspec's speed with the rows made in Python), which pays for importing polars (~0.4 s):
# decisions-quality's lists of a 3 M-event dataset hold ~280 k rows (docs/performance.md).
POLARS_JSON_ROWS = 50_000
POLARS_ROWS_PER_CHUNK = 25_000


def _write_json(head: dict[str, object], tables: dict[str, pa.Table]) -> None:
    """`head` with "tables": {name: [row, ...]} added, as one line of compact JSON (pipe it to
    jq to read). Written a chunk of rows at a time: a 20 M-event dataset has ~700 k blunders,
    which as one list of dicts and one string would take most of a GiB. msgspec encodes ten
    times faster than json.dumps, and writes NaN as null, which is valid JSON.
    A row is a msgspec Struct made of the table's columns (its fields renamed to the column
    names), not the dict of `to_pylist`: the same bytes in about half the time. A large table
    of plain columns goes through polars instead (`_polars_rows`: the same bytes again, a
    test holds the two equal). The encoders give UTF-8 bytes, written as they are to stdout's
    byte stream: decoding them to text for the text stream to encode again showed in the
    command's time (docs/performance.md)."""
    import msgspec

    encoder = msgspec.json.Encoder(enc_hook=str)
    write = _byte_writer()
    opening = encoder.encode(head)[:-1]  # '{"dataset":...' without its closing brace
    write(opening + (b"," if head else b"") + b'"tables":{')
    for i, (name, table) in enumerate(tables.items()):
        write((b"," if i else b"") + encoder.encode(name) + b":[")
        chunks = _polars_rows(table) if _polars_encodes(table) else _msgspec_rows(table, encoder)
        for k, chunk in enumerate(chunks):
            if k:
                write(b",")
            write(chunk)
        write(b"]")
    write(b"}}\n")
    sys.stdout.flush()


def _byte_writer() -> Callable[[bytes], object]:
    """Where UTF-8 bytes go to stdout: its byte stream, after the text written before them;
    a stdout without one (a test's StringIO) gets them as text."""
    out = sys.stdout
    binary = getattr(out, "buffer", None)
    if binary is None:
        return lambda data: out.write(data.decode())
    out.flush()
    return binary.write


def _msgspec_rows(table: pa.Table, encoder) -> Iterator[bytes]:
    """The table's rows as JSON objects, comma-separated, a chunk of rows per UTF-8 string."""
    import msgspec

    from pipeline.cli.league_render import pylist

    fields = [f"f{k}" for k in range(table.num_columns)]
    row = msgspec.defstruct("Row", fields, rename=dict(zip(fields, table.column_names)))
    for batch in table.to_batches(max_chunksize=JSON_ROWS_PER_CHUNK):
        if batch.num_rows:
            rows = list(map(row, *(pylist(column) for column in batch.columns)))
            yield encoder.encode(rows)[1:-1]


def _polars_encodes(table: pa.Table) -> bool:
    """Whether polars writes this table as msgspec would: only integers, doubles, booleans
    and text (a float32, a timestamp, a list and the like are written otherwise), and only
    when it is large."""
    import pyarrow as pa

    plain = (pa.types.is_integer, pa.types.is_boolean, pa.types.is_string, pa.types.is_large_string, pa.types.is_null)
    return table.num_rows >= POLARS_JSON_ROWS and all(
        field.type == pa.float64() or any(test(field.type) for test in plain) for field in table.schema
    )


def _polars_rows(table: pa.Table) -> Iterator[bytes]:
    """`_msgspec_rows` by polars' JSON writer (NaN and infinities as null, as msgspec). polars
    lets go of the interpreter while it encodes, so the next two chunks are encoded while
    one is written (at most three chunks' text held)."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    import polars as pl

    def encoded(start: int) -> bytes:  # a chunk is never empty: its rows without the brackets
        out = io.BytesIO()
        pl.DataFrame(table.slice(start, POLARS_ROWS_PER_CHUNK)).write_json(out)
        return out.getbuffer()[1:-1].tobytes()

    starts = range(0, table.num_rows, POLARS_ROWS_PER_CHUNK)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = deque(pool.submit(encoded, start) for start in starts[:2])
        for start in starts[2:]:
            pending.append(pool.submit(encoded, start))
            yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def write_csv(table: pa.Table, exact: bool = False) -> None:
    """`table` as CSV on stdout; text cells that start like a formula defused unless `exact`
    (pipeline/cli/csv_cells.py)."""
    import pyarrow.csv as pacsv

    from pipeline.cli.csv_cells import defused_table

    sys.stdout.flush()
    pacsv.write_csv(table if exact else defused_table(table), sys.stdout.buffer)
    sys.stdout.buffer.flush()


def _cell(column: str, value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "OFF" if value else ""
    if isinstance(value, float):
        if column in PERCENT_COLUMNS:
            return f"{100 * value:.2f}%"
        if column in P_COLUMNS:
            from pipeline.stats.significance import format_p  # loaded with the stats already

            return format_p(value)
        if column in ("loss_pp", "loss_per_choice", "loss_per_game"):
            return f"{value:,.3f}"
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _print_text_table(name: str, table: pa.Table, *, all_rows: bool, player: str | None) -> None:
    """One stats table as text that fits the terminal: split into parts side by side if
    it is wider, never a number cut; long tables are cut only where the caption says so."""
    from pipeline.cli.text import fitted_tables, plural
    from pipeline.stats import LONG_LISTS, ROWS_TOTAL

    notes: list[str] = []
    # the long lists (worst first): only the rows shown are made into Python (there can be
    # 100,000s); the local engine gives them cut already, with the whole list's length
    total = int((table.schema.metadata or {}).get(ROWS_TOTAL, table.num_rows))
    if name in LONG_LISTS and total > TEXT_BLUNDERS and not all_rows:
        what = "the costliest {} of {:,}" if name == "race_costliest" else "the worst {} of {:,} blunders"
        notes.append(what.format(TEXT_BLUNDERS, total) + " (--all, json and csv have them all)")
        table = table.slice(0, TEXT_BLUNDERS)
    rows = table.to_pylist()
    if name == "decision_loss_by_state" and not all_rows:
        kept = [r for r in rows if r["scope"] != "player" or r["player"] == player]
        if len(kept) < len(rows):
            notes.append(
                f"{plural(len(rows) - len(kept), 'row')} of single players left out: --player NAME for one, "
                "--all for every row (json and csv have them all)"
            )
        rows = kept
    if name in PER_SITUATION_TABLES and not all_rows and player is None:
        players = {r["player"] for r in rows if r["scope"] == "player"}
        if len(players) > TEXT_PLAYERS:
            kept = [r for r in rows if r["scope"] != "player" or r.get("off")]
            flagged = " (the OFF ones are shown)" if name == "bust_rate_by_dice_left" else ""
            notes.append(
                f"{plural(len(rows) - len(kept), 'row')} of single players left out{flagged}: "
                "--player NAME for one, --all for every row (json and csv have them all)"
            )
            rows = kept
    if name == "player_summary":
        notes += _wins_note(rows)
    columns = TEXT_COLUMNS[name]
    if name in ("blunders", "race_costliest"):  # one column: the roll kept from, or the dice left
        rows = [{**r, "situation": r["roll"] if r["kind"] == "keep" else _dice_left(r["dice"])} for r in rows]
    shown = []
    for row in rows:
        cells = {"player": row["player"] if row["scope"] == "player" else "all"}
        cells.update({col: _cell(col, row[col]) for col, _ in columns})
        for col, flag in FLAGGED_BY.items():
            if col in cells and row.get(flag):
                cells[col] += " OFF"
        shown.append(cells)
    numbers = {col for col, _ in columns if not rows or not isinstance(rows[0][col], str)}
    stdout.line(TITLES[name], indent="  ")
    for part in fitted_tables(("player", "player"), columns, shown, stdout.width, right=numbers):
        stdout.print(part)
    for text in notes:
        stdout.line(f"note: {text}", indent="  ")


def _dice_left(n: int) -> str:
    """What a bank-or-roll was judged with, as a referee would say it ("1 die left")."""
    return f"{n} {'die' if n == 1 else 'dice'} left"


def _wins_note(rows: list[dict]) -> list[str]:
    """Ties count a win for each tied player, so wins can add up to more than the games."""
    overall = next((r for r in rows if r["scope"] != "player"), None)
    if overall and overall["wins"] is not None and overall["games"] is not None and overall["wins"] > overall["games"]:
        return [
            f"wins add up to {overall['wins']:,} over {overall['games']:,} games: a tied game counts as a win "
            "for each tied player"
        ]
    return []

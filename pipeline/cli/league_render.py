"""How `stats` shows the league tables (ratings, rating history, head-to-head, trends) as
text, and what it says about the games they leave out.

Their rows have no `scope`: a league figure is per player (or per pair), never an overall
row, so they get a printer of their own; json and csv hold every row and column as the
other tables do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.cli.common import stdout

if TYPE_CHECKING:
    import pyarrow as pa

TITLES = {
    "ratings": "Standings: openskill Plackett-Luce ratings over the finished games (sorted by ordinal = mu - 3 sigma)",
    "rating_history": "Rating after every rated game",
    "head_to_head": "Head-to-head: corrected final totals in finished games both sat in (share: 95 % Wilson interval)",
    "trends": "Trends per period of game start (UTC)",
}
# (field, header) after the key column; the key is the first field of each table.
TEXT_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "ratings": [
        ("ordinal", "ordinal"),
        ("mu", "mu"),
        ("sigma", "sigma"),
        ("games", "games"),
        ("wins", "wins"),
        ("win_share", "win share"),
        ("mean_final_total", "mean final"),
        ("change_last_10", "change, last 10"),
    ],
    "rating_history": [
        ("game_order", "#"),
        ("game_id", "game"),
        ("start_ts", "start"),
        ("place", "place"),
        ("ordinal", "ordinal"),
        ("mu", "mu"),
        ("sigma", "sigma"),
    ],
    "head_to_head": [
        ("opponent", "opponent"),
        ("games", "games"),
        ("above", "above"),
        ("below", "below"),
        ("tied", "tied"),
        ("share", "share"),
        ("share_lo", "95% lo"),
        ("share_hi", "95% hi"),
        ("before_share", "share sitting before"),
        ("after_share", "share sitting after"),
    ],
    "trends": [
        ("period", "period"),
        ("games", "games"),
        ("wins", "wins"),
        ("win_share", "win share"),
        ("bust_rate", "bust rate"),
        ("mean_turn_value", "mean turn"),
        ("mean_decision_loss", "decision loss"),
    ],
}
PERCENT = {"win_share", "share", "share_lo", "share_hi", "before_share", "after_share", "bust_rate"}
PRECISE = {"ordinal", "mu", "sigma", "change_last_10"}  # ratings: two decimals
TEXT_ROWS = 50  # rows per table on a terminal by default (--player, --all, json and csv: all)
LEFT_OUT_FIGURE = {
    "ratings": "ratings",
    "rating_history": "ratings",
    "head_to_head": "head_to_head",
    "trends": "trends",
}


def cell(column: str, value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if column in PERCENT:
            return f"{100 * value:.1f}%"
        if column in PRECISE:
            return f"{value:,.2f}"
        return f"{value:,.1f}"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if hasattr(value, "isoformat"):
        return value.isoformat()[:10] if column == "period" else value.isoformat(sep=" ")[:16]
    return str(value)


def left_out_note(name: str, left_out: list[dict]) -> str | None:
    """What the figure of table `name` did not count, in one line (None when nothing)."""
    row = next((r for r in left_out if r["figure"] == LEFT_OUT_FIGURE.get(name)), None)
    if row is None or not (row["unfinished"] or row["one_player"]):
        return None
    parts = []
    if row["unfinished"]:
        parts.append(f"{row['unfinished']:,} not finished (no game_end, or abandoned)")
    if row["one_player"]:
        parts.append(f"{row['one_player']:,} of one player")
    what = "win shares count" if name == "trends" else "counted"
    games = f"{row['games']:,} game{'s' if row['games'] != 1 else ''}"
    return f"{what} {row['counted']:,} of {games}; left out: {', '.join(parts)}"


def print_table(name: str, table: "pa.Table", *, all_rows: bool, left_out: list[dict]) -> None:
    """One league table as text that fits the terminal; past TEXT_ROWS rows (and without
    --all) the first ones, with a note saying how to see the rest."""
    from pipeline.cli.text import fitted_tables

    rows = [dict(zip(table.column_names, values)) for values in zip(*map(pylist, table.columns))]
    notes = []
    if len(rows) > TEXT_ROWS and not all_rows:
        notes.append(
            f"the first {TEXT_ROWS} of {len(rows):,} rows: --player NAME for a player's, --all for every row "
            "(json and csv have them all)"
        )
        rows = rows[:TEXT_ROWS]
    note = left_out_note(name, left_out)
    if note:
        notes.append(note)
    columns = TEXT_COLUMNS[name]
    shown = [{"player": r["player"], **{c: cell(c, r[c]) for c, _ in columns}} for r in rows]
    numbers = {c for c, _ in columns if c not in ("opponent", "game_id", "period", "start_ts")}
    stdout.line(TITLES[name], indent="  ")
    for part in fitted_tables(("player", "player"), columns, shown, stdout.width, right=numbers):
        stdout.print(part)
    for text in notes:
        stdout.line(f"note: {text}", indent="  ")


def pylist(column) -> list:
    """column.to_pylist(), but a timestamp with a time zone becomes an aware UTC datetime
    without pyarrow's conversion, which imports pandas for the zone."""
    import datetime as dt

    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) and kind.tz is not None:
        utc = dt.timezone.utc
        naive = column.cast(pa.timestamp(kind.unit)).to_pylist()
        return [None if v is None else v.replace(tzinfo=utc) for v in naive]
    return column.to_pylist()

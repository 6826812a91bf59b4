"""Write small datasets straight from rows, for tests (here and in the report's tests).

Rows are dicts keyed by the column names of pipeline.dataset.tables; missing columns are null
(but the rolls' dice keys, computed from their dice as the replays do, a game's `ended`, and
each decision's link to the roll its keep came from, found among the rolls given with it).
This is not ingest: nothing is checked, so a test controls every figure.
The layout is the simplest the format allows: one snapshot whose manifest sits in the
dataset directory itself (`_current.json` names `manifest.json`), tables in `<table>/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset.layout import FORMAT, MANIFEST, POINTER, Pointer
from pipeline.dataset.tables import DATASET_VERSION, TABLES
from pipeline.rules.play import dice_key


def write_manifest(root: Path, **extra: Any) -> None:
    """Make `root` a dataset of the Parquet files now in `root/<table>/` (subdirectories
    too): a manifest listing them (in name order) and the pointer naming that manifest.
    Call it again after adding or removing files."""
    root.mkdir(parents=True, exist_ok=True)
    tables = {t: sorted(p.relative_to(root / t).as_posix() for p in (root / t).rglob("*.parquet")) for t in TABLES}
    manifest = {
        "format": FORMAT,
        "dataset_version": DATASET_VERSION,
        "snapshot": 1,
        "tables": tables,
        "files": [],
        "ingests": [],
        **extra,
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (root / POINTER).write_text(json.dumps(Pointer(1, MANIFEST).to_json()) + "\n", encoding="utf-8")


def write_table(root: Path, table: str, rows: Iterable[Mapping[str, Any]], part: str = "part-0.parquet") -> Path:
    schema = TABLES[table]
    rows = list(rows)
    unknown = {k for row in rows for k in row} - set(schema.names)
    if unknown:
        raise KeyError(f"{table} has no column(s) {', '.join(sorted(unknown))}")
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    if table == "games":  # a game with a game_end ended "finished" unless a row says otherwise
        columns["ended"] = [
            row["ended"] if "ended" in row else ("finished" if row.get("complete") else None) for row in rows
        ]
    if table == "rolls":  # the dice keys, as the replays write them, unless a row gives them
        for key in DICE_KEYS:
            columns[key] = [_dice_key(row, key) for row in rows]
    directory = root / table
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / part
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)
    return path


def write_dataset(root: str | Path, tables: Mapping[str, Iterable[Mapping[str, Any]]], manifest: bool = True) -> Path:
    """A dataset at `root` with the given rows; every other table is written empty."""
    root = Path(root)
    rows: dict[str, list[Mapping[str, Any]]] = {table: list(tables.get(table, ())) for table in TABLES}
    rows["decisions"] = linked_decisions(rows["decisions"], rows["rolls"])
    for table in TABLES:
        write_table(root, table, rows[table])
    if manifest:
        write_manifest(root)
    return root


LINK = ("from_roll_key", "from_kept_key", "from_points_before")
#: the rolls' dice key columns and the list each is the key of
DICE_KEYS = {"roll_key": "dice", "kept_key": "kept"}


def _dice_key(roll: Mapping[str, Any], key: str) -> int | None:
    """A roll row's dice key `key` as given, else the key of its dice list (null: no list)."""
    if key in roll:
        return roll[key]
    dice = roll.get(DICE_KEYS[key])
    return None if dice is None else dice_key(dice)


def linked_decisions(decisions: list[Mapping[str, Any]], rolls: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The decisions with the link the replays store (`from_*`): the last roll of the same
    game, player and turn before the choice's seq, its dice keys and turn points before it
    (sql/int_choice_links.sql derives it the same way). A row that gives any link column is
    left as it is, so a test can plant a link no replay would write."""
    out: list[Mapping[str, Any]] = []
    for decision in decisions:
        row = dict(decision)
        if not any(name in row for name in LINK):
            before = [
                r
                for r in rolls
                if (r.get("game_id"), r.get("player"), r.get("turn"))
                == (row.get("game_id"), row.get("player"), row.get("turn"))
                and r.get("seq") is not None
                and row.get("seq") is not None
                and r["seq"] < row["seq"]
            ]
            if before and row.get("player") is not None:
                roll = max(before, key=lambda r: r["seq"])
                row["from_roll_key"] = _dice_key(roll, "roll_key")
                row["from_kept_key"] = _dice_key(roll, "kept_key")
                row["from_points_before"] = roll.get("points_before")
        out.append(row)
    return out

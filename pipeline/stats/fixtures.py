"""Write small datasets straight from rows, for tests (here and in the report's tests).

Rows are dicts keyed by the column names of pipeline.dataset.tables; missing columns are null
(but the rolls' dice keys, computed from their dice as the replays do, and a game's `ended`).
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

from pipeline.dataset.batches import DICE_KEYS
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
        for key, dice in DICE_KEYS.items():
            columns[key] = [
                row[key] if key in row else (None if row.get(dice) is None else dice_key(row[dice])) for row in rows
            ]
    directory = root / table
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / part
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)
    return path


def write_dataset(root: str | Path, tables: Mapping[str, Iterable[Mapping[str, Any]]], manifest: bool = True) -> Path:
    """A dataset at `root` with the given rows; every other table is written empty."""
    root = Path(root)
    for table in TABLES:
        write_table(root, table, tables.get(table, ()))
    if manifest:
        write_manifest(root)
    return root

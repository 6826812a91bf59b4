"""Open a farkle-logs dataset, or say clearly why a directory is not one.

A dataset is a directory written by `farkle-logs ingest`: `manifest.json` with top-level
`"format": "farkle-logs"` and `"dataset_version"` (pipeline.tables.DATASET_VERSION), and one
directory per table holding `<table>/**/*.parquet` (hive partitions allowed). Ingest makes
`manifest.json` and the table directories symlinks into the current snapshot; the tables
are read next to the file `manifest.json` resolves to.

Readers (stats, report) call `open_dataset` first, so a typo in a path or a directory of
something else fails with one line instead of a DuckDB glob error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.tables import DATASET_VERSION, TABLES

MANIFEST = "manifest.json"
FORMAT = "farkle-logs"


class DatasetError(ValueError):
    """The path is missing, unreadable, or not a farkle-logs dataset of a version we read."""


@dataclass(frozen=True)
class Dataset:
    """An opened dataset. `path` is what the user named; `root` is where its tables are
    read: the snapshot `manifest.json` resolves to (ingest's `.current/` symlink), resolved
    once, so a reader sees one consistent snapshot even if an ingest commits meanwhile."""

    path: Path
    manifest: dict[str, Any] = field(compare=False)
    root: Path | None = None

    @property
    def version(self) -> int:
        return int(self.manifest["dataset_version"])

    def table_dir(self, table: str) -> Path:
        if table not in TABLES:
            raise KeyError(f"unknown table {table!r}: tables are {', '.join(TABLES)}")
        return (self.root or self.path) / table

    def table_glob(self, table: str) -> str:
        """The glob DuckDB reads: DATASET/<table>/**/*.parquet."""
        return str(self.table_dir(table) / "**" / "*.parquet")

    def has_files(self, table: str) -> bool:
        """True when the table has at least one Parquet file (an empty table may have none)."""
        directory = self.table_dir(table)
        return directory.is_dir() and next(directory.rglob("*.parquet"), None) is not None


def open_dataset(path: str | Path) -> Dataset:
    """Check `path` is a farkle-logs dataset this version reads; raise DatasetError if not."""
    root = Path(path)
    if not root.exists():
        raise DatasetError(f"{root}: no such dataset (run `farkle-logs ingest LOGS --out {root}` first)")
    if not root.is_dir():
        raise DatasetError(f"{root}: not a dataset directory (a dataset is the directory `ingest --out` wrote)")
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise DatasetError(f"{root}: not a farkle-logs dataset (no {MANIFEST}; create it with `farkle-logs ingest`)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(f"{manifest_path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise DatasetError(
            f"{root}: not a farkle-logs dataset ({MANIFEST} has format {found!r}, expected {FORMAT!r})"
        )
    version = manifest.get("dataset_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise DatasetError(f"{manifest_path}: dataset_version must be an integer, got {version!r}")
    if version != DATASET_VERSION:
        raise DatasetError(
            f"{root}: dataset version {version}, this farkle-logs reads version {DATASET_VERSION}; "
            "re-ingest the logs with this version"
        )
    return Dataset(root, manifest, manifest_path.resolve().parent)

"""Verify a dataset deeply: what `farkle-logs dataset check` reports and what `repair` relies
on to call a snapshot complete.

`open_dataset` (pipeline/dataset/layout.py) is the cheap check every reader pays: pointer,
manifest, listed files exist. This module also opens every listed file as Parquet, compares
its schema with the table's contract (pipeline.dataset.tables), counts rows from the footers, and
cross-checks the counts the manifest recorded at ingest. With `full`, it reads every row,
which finds damage inside a file that a footer cannot show. It never writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.dataset.layout import (
    CURRENT_LINK,
    DAMAGED,
    MANIFEST,
    POINTER,
    SNAPSHOTS,
    STAGING,
    DatasetDamaged,
    DatasetError,
    manifest_problem,
    own_symlinks,
    parse_json,
    read_pointer,
)
from pipeline.dataset.copies import Copies, find_copies
from pipeline.dataset.tables import TABLES


@dataclass
class Problem:
    """Something that makes the dataset (or a snapshot) unusable: `where` is a path relative
    to the dataset directory."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class SnapshotCheck:
    """One snapshot's manifest and files, verified."""

    manifest: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.manifest is not None and not self.problems


@dataclass
class CheckReport:
    path: Path
    snapshot: int | None
    manifest_path: str | None
    problems: list[Problem]
    notes: list[str]
    rows: dict[str, int]
    files: dict[str, int]
    copies: Copies = field(default_factory=Copies)  # events stored twice from two sources

    @property
    def healthy(self) -> bool:
        return not self.problems and not self.copies

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": str(self.path),
            "healthy": self.healthy,
            "snapshot": self.snapshot,
            "manifest": self.manifest_path,
            "tables": {t: {"files": self.files.get(t, 0), "rows": self.rows.get(t)} for t in TABLES},
            "problems": [{"where": p.where, "what": p.what} for p in self.problems],
            "copies": {"events": len(self.copies), "examples": self.copies.examples, "by_file": self.copies.sources},
            "notes": self.notes,
        }


def verify_snapshot(root: Path, manifest_relative: str, snapshot: int | None, *, full: bool = False) -> SnapshotCheck:
    """Check the manifest at `root/manifest_relative` (as snapshot `snapshot`, None: any)
    and every file it lists."""
    path = root / manifest_relative
    try:
        manifest = parse_json(path.read_bytes())
    except FileNotFoundError:
        return SnapshotCheck(None, [Problem(manifest_relative, "missing")])
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return SnapshotCheck(None, [Problem(manifest_relative, f"unreadable ({_cause(exc)})")])
    problem = manifest_problem(manifest, snapshot)
    if problem:
        return SnapshotCheck(None, [Problem(manifest_relative, problem)])
    check = SnapshotCheck(manifest)
    base = path.parent
    for table in TABLES:
        names = manifest["tables"].get(table, [])
        check.files[table] = len(names)
        check.rows[table] = 0
        for name in names:
            where = os.path.relpath(base / table / name, root)
            rows = _verify_file(base / table / name, table, full)
            if isinstance(rows, str):
                check.problems.append(Problem(where, rows))
            else:
                check.rows[table] += rows
    check.problems += _count_problems(manifest, check.rows, manifest_relative) if not check.problems else []
    return check


def _verify_file(path: Path, table: str, full: bool) -> int | str:
    """The file's row count, or what is wrong with it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        return "missing" if not os.path.lexists(path) else "not a regular file"
    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
        if not schema.equals(TABLES[table]):
            theirs = {f.name: f.type for f in schema}
            ours = {f.name: f.type for f in TABLES[table]}
            missing = [n for n in ours if n not in theirs]
            extra = [n for n in theirs if n not in ours]
            differ = [n for n in ours if n in theirs and theirs[n] != ours[n]]
            detail = (
                "; ".join(
                    part
                    for part in (
                        f"missing columns {', '.join(missing)}" if missing else "",
                        f"unexpected columns {', '.join(extra)}" if extra else "",
                        f"other types for {', '.join(differ)}" if differ else "",
                    )
                    if part
                )
                or "column order or nullability differs"
            )
            return f"not the {table} table's schema ({detail})"
        rows = parquet.metadata.num_rows
        if full:
            read = sum(batch.num_rows for batch in parquet.iter_batches(batch_size=65_536))
            if read != rows:
                return f"holds {read} rows, its footer says {rows}"
        return rows
    except (OSError, pa.ArrowException, ValueError) as exc:
        return f"not a readable Parquet file ({_cause(exc)})"


def _count_problems(manifest: dict[str, Any], rows: dict[str, int], where: str) -> list[Problem]:
    """The events and rejects tables hold what each reading of each input file stored, less
    the rows a later reading of the same file superseded: their rows must equal the sum over
    the manifest's `files` entries of `events - superseded_events` (and of rejects), less
    the copies `dataset repair` dropped (an `ingests` record's `dropped`). An entry without
    the `superseded_*` keys superseded nothing."""
    problems: list[Problem] = []
    files = manifest.get("files", [])
    if not files or not all(isinstance(f, dict) for f in files):
        return problems
    dropped = [
        d.get("events", 0) for i in manifest.get("ingests", []) if isinstance(i, dict) for d in i.get("dropped", [])
    ]
    for table in ("events", "rejects"):
        counts = [f.get(table) for f in files]
        gone = [f.get(f"superseded_{table}", 0) for f in files] + (dropped if table == "events" else [])
        if all(isinstance(c, int) and not isinstance(c, bool) for c in counts + gone):
            expected = sum(counts) - sum(gone)
            if rows.get(table) != expected:
                net = f" ({sum(counts):,} less {sum(gone):,} superseded)" if sum(gone) else ""
                problems.append(
                    Problem(where, f"{table} has {rows.get(table):,} rows, its input files gave {expected:,}{net}")
                )
    return problems


def check_dataset(path: str | Path, *, full: bool = False) -> CheckReport:
    """Everything `dataset check` says about `path`. Raises DatasetError when `path` is not
    a farkle-logs dataset at all (missing, foreign, another version): that is bad usage, not
    a problem found."""
    root = Path(path)
    if not root.exists():
        raise DatasetError(f"{root}: no such dataset")
    if not root.is_dir():
        raise DatasetError(f"{root}: not a dataset directory")
    problems: list[Problem] = []
    notes: list[str] = []
    snapshot = manifest_relative = None
    copies = Copies()
    rows: dict[str, int] = {}
    files: dict[str, int] = {}
    try:
        pointer = read_pointer(root)
    except DatasetDamaged as exc:
        problems.append(Problem(POINTER, exc.what.removeprefix(f"{POINTER} ")))
        pointer = None
    if pointer is not None:
        snapshot, manifest_relative = pointer.snapshot, pointer.manifest
        result = verify_snapshot(root, pointer.manifest, pointer.snapshot, full=full)
        problems += result.problems
        rows, files = result.rows, result.files
        if result.manifest is not None:
            notes += _unlisted(root, pointer.manifest, result.manifest)
            if result.complete:
                base = (root / pointer.manifest).parent / "events"
                copies = find_copies(result.manifest, [base / name for name in result.manifest["tables"]["events"]])
    if problems:
        best = newest_complete_snapshot(root, below=None, full=full)
        if best is not None:
            notes.append(f"`farkle-logs dataset repair {path}` would point the dataset at snapshot {best[0]}")
        else:
            notes.append("no snapshot verifies: `dataset repair` has nothing to point at")
    notes += _leftovers(root, snapshot)
    problems += [
        Problem(link, "a symbolic link: ingest and repair refuse to write this dataset (remove the link)")
        for link in own_symlinks(root)
    ]
    return CheckReport(root, snapshot, manifest_relative, problems, notes, rows, files, copies)


def snapshot_numbers(root: Path) -> list[int]:
    """Snapshot directories present, newest first."""
    snapshots = root / SNAPSHOTS
    if not snapshots.is_dir():
        return []
    return sorted((int(p.name) for p in snapshots.iterdir() if p.name.isdigit() and p.is_dir()), reverse=True)


def newest_complete_snapshot(root: Path, below: int | None, *, full: bool = False) -> tuple[int, SnapshotCheck] | None:
    """The newest snapshot (numbered below `below`, if given) whose manifest and files verify."""
    for number in snapshot_numbers(root):
        if below is not None and number >= below:
            continue
        check = verify_snapshot(root, f"{SNAPSHOTS}/{number:06d}/{MANIFEST}", number, full=full)
        if check.complete:
            return number, check
    return None


def _unlisted(root: Path, manifest_relative: str, manifest: dict[str, Any]) -> list[str]:
    base = (root / manifest_relative).parent
    notes = []
    for table in TABLES:
        directory = base / table
        if not directory.is_dir():
            continue
        listed = set(manifest["tables"].get(table, []))
        extra = sorted(
            name
            for p in directory.rglob("*")
            if not p.is_dir() and (name := p.relative_to(directory).as_posix()) not in listed
        )
        if extra:
            notes.append(
                f"{os.path.relpath(directory, root)}: {len(extra)} file(s) the manifest does not list "
                f"(ignored by farkle-logs; a tool reading the directory would see them): {', '.join(extra[:3])}"
            )
    return notes


def _leftovers(root: Path, current: int | None) -> list[str]:
    notes = []
    staging = root / STAGING
    if os.path.lexists(staging):
        notes.append(f"{STAGING}: left by an interrupted ingest (or one running now); the next ingest removes it")
    others = [n for n in snapshot_numbers(root) if current is None or n not in (current, current - 1)]
    if others and current is not None:
        notes.append(
            f"{SNAPSHOTS}: snapshot(s) {', '.join(map(str, sorted(others)))} are not current; the next "
            "ingest removes them"
        )
    if (root / DAMAGED).is_dir():
        notes.append(f"{DAMAGED}: snapshots `dataset repair` moved aside; delete them once you have re-ingested")
    link = root / CURRENT_LINK
    if current is not None and link.is_symlink():
        if os.path.normpath(os.path.join(root, os.readlink(link))) != os.path.normpath(
            root / SNAPSHOTS / f"{current:06d}"
        ):
            notes.append(
                f"{CURRENT_LINK}: the convenience link points at another snapshot; the next ingest "
                "or `dataset repair` re-points it"
            )
    return notes


def _cause(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

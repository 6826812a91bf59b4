"""Open a farkle-logs dataset, or say clearly why a directory is not one (or is damaged).

Format version 2 (docs/dataset.md, "Layout"): `DATASET/_current.json` is the one authority
for which snapshot is current. It names that snapshot's manifest, and the manifest lists
every file of every table. Readers read exactly those files, never a glob of a directory:
a glob would also read a stray or half-copied file, and a dataset path holding `[`, `*` or
`?` would be a pattern matching other directories.

This module is the only reader of the pointer and the manifest. Stats and the report call
`open_dataset`; ingest's `Store` and `dataset check` / `repair` use the lower-level
`read_pointer` / `read_manifest`. It never writes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard, cast

from pipeline.dataset.tables import DATASET_VERSION, TABLES
from pipeline.errors import UserError

FORMAT = "farkle-logs"
POINTER = "_current.json"  # the commit point: written last, atomically
MANIFEST = "manifest.json"  # one per snapshot, next to its table directories
SNAPSHOTS = ".snapshots"
CURRENT_LINK = ".current"  # convenience symlink for users' own tools; never read here
STAGING = ".staging"
LOCK = ".lock"
DAMAGED = ".damaged"  # where `dataset repair` moves snapshots it cannot verify


class DatasetError(UserError, ValueError):
    """The path is missing, unreadable, or not a farkle-logs dataset of a version we read."""


class DatasetVersionError(DatasetError):
    """A farkle-logs dataset of another format version."""


class DatasetDamaged(DatasetError):
    """The directory is a farkle-logs dataset, but its pointer, its manifest or a file the
    manifest lists is missing or unreadable. The message ends with how to recover; `what`
    is the problem alone."""

    def __init__(self, path: str | Path, what: str):
        super().__init__(f"{path}: damaged dataset: {what}", recovery_hint(path))
        self.path, self.what = Path(path), what


def recovery_hint(path: str | Path) -> str:
    return f"to recover: farkle-logs dataset repair {path} (farkle-logs dataset check {path} shows what is wrong)"


damaged = DatasetDamaged


@dataclass(frozen=True)
class Pointer:
    """The content of `_current.json`: the current snapshot and its manifest's path,
    relative to the dataset directory."""

    snapshot: int
    manifest: str

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "dataset_version": DATASET_VERSION,
            "snapshot": self.snapshot,
            "manifest": self.manifest,
        }


def snapshot_manifest_path(number: int) -> str:
    """Where ingest keeps snapshot `number`'s manifest, relative to the dataset directory."""
    return f"{SNAPSHOTS}/{number:06d}/{MANIFEST}"


def _load_json(path: Path) -> Any:
    """JSON of a small file; OSError, UnicodeDecodeError or ValueError when unusable."""
    return parse_json(path.read_bytes())


def parse_json(data: bytes) -> Any:
    """json.loads, with nesting too deep for the decoder as a ValueError like any other
    malformed JSON (a hostile manifest must not end in a RecursionError)."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _version_error(path: Path | str, version: Any) -> DatasetVersionError:
    if isinstance(version, int) and not isinstance(version, bool) and version < DATASET_VERSION:
        return DatasetVersionError(
            f"{path}: dataset version {version}, this farkle-logs reads version {DATASET_VERSION}; "
            "ingest the logs again into a new directory"
        )
    return DatasetVersionError(
        f"{path}: dataset version {version!r}, this farkle-logs reads version {DATASET_VERSION} "
        "(was it written by a newer farkle-logs?)"
    )


def read_pointer(root: Path) -> Pointer:
    """`root/_current.json`, checked. Raises DatasetDamaged when it is unusable and
    DatasetError when the directory holds no pointer at all (see `explain_missing_pointer`)."""
    path = root / POINTER
    if not os.path.lexists(path):
        raise explain_missing_pointer(root)
    try:
        data = _load_json(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise damaged(root, f"{POINTER} is unreadable ({_cause(exc)})") from None
    return check_pointer(root, data)


def check_pointer(root: Path | str, data: Any) -> Pointer:
    """The pointer in `data` (the parsed `_current.json` of `root`), checked: DatasetDamaged
    or DatasetError (another format or version) when it is unusable."""
    if not isinstance(data, dict):
        raise damaged(root, f"{POINTER} is not a JSON object")
    if data.get("format") != FORMAT:
        raise DatasetError(f"{root}: not a farkle-logs dataset ({POINTER} has format {data.get('format')!r})")
    if data.get("dataset_version") != DATASET_VERSION:
        raise _version_error(root, data.get("dataset_version"))
    snapshot, manifest = data.get("snapshot"), data.get("manifest")
    if isinstance(snapshot, bool) or not isinstance(snapshot, int) or snapshot < 1:
        raise damaged(root, f"{POINTER} has no valid snapshot number ({snapshot!r})")
    if not _is_inside(manifest):
        raise damaged(root, f"{POINTER} names no manifest inside the dataset ({manifest!r})")
    return Pointer(snapshot, manifest)


def _is_inside(relative: Any) -> TypeGuard[str]:
    """A relative path that stays inside the dataset directory."""
    if not isinstance(relative, str) or not relative or "\0" in relative or "\\" in relative:
        return False
    parts = PurePosixPath(relative).parts
    return not PurePosixPath(relative).is_absolute() and ".." not in parts and bool(parts)


def _is_table_file(name: Any) -> bool:
    """A path relative to its table's directory: a file name, or `key=value/name` for a
    partitioned table; never outside the directory."""
    return (
        isinstance(name, str) and _is_inside(name) and not name.endswith("/") and "." not in PurePosixPath(name).parts
    )


def read_manifest(root: Path, pointer: Pointer) -> dict[str, Any]:
    """The manifest `pointer` names, checked: right format and version, the same snapshot
    number, and `tables` mapping table names to lists of file paths inside each table's
    directory. Tables it does not
    list (none in version 2) come back empty. Raises DatasetDamaged."""
    path = root / pointer.manifest
    try:
        manifest = _load_json(path)
    except FileNotFoundError:
        raise damaged(root, f"{pointer.manifest} (the manifest {POINTER} names) is missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise damaged(root, f"{pointer.manifest} is unreadable ({_cause(exc)})") from None
    return check_manifest(root, pointer, manifest)


def check_manifest(root: Path | str, pointer: Pointer, manifest: Any) -> dict[str, Any]:
    """The manifest `pointer` names (parsed), checked and completed; DatasetDamaged if unusable."""
    problem = manifest_problem(manifest, pointer.snapshot)
    if problem:
        raise damaged(root, f"{pointer.manifest}: {problem}")
    manifest = dict(manifest)
    manifest["tables"] = {name: list(manifest["tables"].get(name, [])) for name in TABLES}
    manifest.setdefault("files", [])
    manifest.setdefault("ingests", [])
    return manifest


def manifest_problem(manifest: Any, snapshot: int | None) -> str | None:
    """What makes `manifest` unusable as snapshot `snapshot`'s manifest, or None."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    if manifest.get("format") != FORMAT or manifest.get("dataset_version") != DATASET_VERSION:
        return (
            f"format {manifest.get('format')!r} version {manifest.get('dataset_version')!r}, "
            f"expected {FORMAT!r} version {DATASET_VERSION}"
        )
    if snapshot is not None and manifest.get("snapshot") != snapshot:
        return f"it is snapshot {manifest.get('snapshot')!r}, {POINTER} says {snapshot}"
    tables = manifest.get("tables")
    if not isinstance(tables, dict):
        return "no `tables` object"
    for name, files in tables.items():
        if not isinstance(files, list) or not all(_is_table_file(f) for f in files):
            return f"`tables.{name}` is not a list of file paths inside the table's directory"
        if len(set(files)) != len(files):
            return f"`tables.{name}` lists a file twice"
    for key in ("files", "ingests"):
        entries = manifest.get(key, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return f"`{key}` is not a list of objects"
    for entry in manifest.get("files", []):
        if not (
            isinstance(entry.get("path"), str)
            and isinstance(entry.get("ingest_id"), str)
            and _is_int_or_null(entry.get("size"))
            and isinstance(entry.get("sha256"), (str, type(None)))
        ):
            return "an entry of `files` lacks its path, ingest_id, size or sha256"
    return None


def _is_int_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def explain_missing_pointer(root: Path) -> DatasetError:
    """Why a directory without `_current.json` is not a readable dataset: a version-1
    dataset, a damaged one (snapshots but no pointer), a first ingest that never committed,
    or something else entirely."""
    legacy = root / MANIFEST
    try:
        old = _load_json(legacy) if legacy.exists() else None
    except (OSError, UnicodeDecodeError, ValueError):
        old = None
    if isinstance(old, dict) and old.get("format") == FORMAT and old.get("dataset_version") != DATASET_VERSION:
        return _version_error(root, old.get("dataset_version"))
    if committed_traces(root):
        return damaged(root, f"{POINTER} is missing")
    try:
        names = {p.name for p in root.iterdir()}
    except OSError as exc:
        return DatasetError(f"{root}: cannot read the directory ({_cause(exc)})")
    if names and all(name in {LOCK, STAGING, SNAPSHOTS} or is_pointer_temporary(name) for name in names):
        return DatasetError(
            f"{root}: no committed snapshot yet (an ingest is running, or one stopped before "
            "its first commit: run it again)"
        )
    return DatasetError(
        f"{root}: not a farkle-logs dataset (no {POINTER}; create one with `farkle-logs ingest LOGS --out {root}`)"
    )


def is_pointer_temporary(name: str) -> bool:
    """A temporary file of the pointer's atomic write (`._current.json.<random>.tmp`; before
    that, `_current.json.tmp`), left only by a run killed while writing it."""
    return name == POINTER + ".tmp" or (name.startswith(f".{POINTER}.") and name.endswith(".tmp"))


def committed_traces(root: Path) -> list[str]:
    """Signs that snapshots of this directory were committed once: a snapshot with a
    manifest, or ingest's convenience links. A directory with these and no usable pointer
    is damaged, never a new dataset (ingesting into it as new would drop what it holds)."""
    traces = []
    snapshots = root / SNAPSHOTS
    if snapshots.is_dir():
        traces += [str(p.relative_to(root)) for p in sorted(snapshots.glob(f"*/{MANIFEST}"))]
    for name in (CURRENT_LINK, MANIFEST):
        if os.path.lexists(root / name):
            traces.append(name)
    return traces


# The dataset's own entries, which farkle-logs writes, renames and removes: none of them may
# be a symlink (a link planted at one would make a writer write or remove its target).
# The convenience links (`.current`, `manifest.json`, one per table) are links by design.
OWN_ENTRIES = (POINTER, LOCK, STAGING, SNAPSHOTS, DAMAGED)


def own_symlinks(root: Path) -> list[str]:
    """The dataset's own entries that are symlinks, relative to `root`: the pointer, the lock,
    staging, `.snapshots` and `.damaged`, each snapshot directory and everything in it
    (scanned by directory listing, no stat per file). Empty for a sound dataset."""
    found = [name for name in OWN_ENTRIES if os.path.islink(root / name)]
    snapshots = root / SNAPSHOTS
    if SNAPSHOTS in found or not snapshots.is_dir():
        return found
    try:
        with os.scandir(snapshots) as entries:
            for snap in entries:
                where = f"{SNAPSHOTS}/{snap.name}"
                if snap.is_symlink():
                    found.append(where)
                elif snap.is_dir(follow_symlinks=False):
                    found += _links_below(Path(snap.path), where)
    except OSError:
        pass  # an unreadable directory is the readers' problem to report
    return found


def _links_below(directory: Path, where: str) -> list[str]:
    found = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_symlink():
                    found.append(f"{where}/{entry.name}")
                elif entry.is_dir(follow_symlinks=False):
                    found += _links_below(Path(entry.path), f"{where}/{entry.name}")
    except OSError:
        pass
    return found


def symlink_refusal(root: Path, found: list[str]) -> str:
    """The one line that refuses to write a dataset whose own entries are symlinks."""
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (
        f"{root}: {shown} {'is a symbolic link' if len(found) == 1 else 'are symbolic links'}: a dataset's own "
        "entries never are (a link there would make farkle-logs write to its target); nothing was written: "
        "remove the link, or ingest into a new directory"
    )


def _cause(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def duckdb_path(path: str | Path) -> str:
    """`path` as DuckDB's read_parquet takes it literally: DuckDB expands `*`, `?` and `[...]`
    even in a list of files, so each is bracketed (`[*]`, `[?]`, `[[]`). Without this, a
    dataset at `data*x` would also read `dataAx`."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in str(path))


@dataclass(frozen=True)
class Dataset:
    """An opened dataset. `path` is what the user named; `root` is the directory of the
    current snapshot's manifest, whose `<table>/` directories hold the listed files. The
    pointer is read once, so a reader sees one consistent snapshot even if an ingest commits
    meanwhile (the files of the previous snapshot stay until the commit after)."""

    path: Path | str  # a URL (str) for a dataset on an object store (pipeline/dataset/remote.py)
    manifest: dict[str, Any] = field(compare=False)
    root: Path | str | None = None

    @property
    def remote(self) -> bool:
        """On an object store (a URL), not a local directory."""
        return isinstance(self.path, str)

    @property
    def version(self) -> int:
        return int(self.manifest["dataset_version"])

    @property
    def snapshot(self) -> int:
        return int(self.manifest.get("snapshot", 0))

    def table_files(self, table: str) -> list[Path]:
        """The table's Parquet files, exactly as the manifest lists them."""
        if table not in TABLES:
            raise KeyError(f"unknown table {table!r}: tables are {', '.join(TABLES)}")
        base = self.root or self.path
        if isinstance(base, str):  # a URL: the files are URLs too (what DuckDB, pyarrow and fsspec open)
            urls = [f"{base.rstrip('/')}/{table}/{name}" for name in self.manifest["tables"].get(table, [])]
            return cast(list[Path], urls)
        return [base / table / name for name in self.manifest["tables"].get(table, [])]

    def duckdb_paths(self, table: str) -> list[str]:
        """`table_files` for DuckDB's read_parquet (glob characters escaped)."""
        return [duckdb_path(p) for p in self.table_files(table)]

    def has_files(self, table: str) -> bool:
        """True when the table has at least one Parquet file (an empty table may have none)."""
        return bool(self.manifest["tables"].get(table))


def open_dataset(path: str | Path, *, check_files: bool = True) -> Dataset:
    """The dataset at `path`: its pointer, its manifest and (check_files) that every file the
    manifest lists exists. Raises DatasetError (not a dataset, another version) or
    DatasetDamaged (ours, but unusable: the message says how to recover)."""
    from pipeline.storage import is_url

    if is_url(path):
        from pipeline.dataset.remote import open_remote_dataset

        return open_remote_dataset(str(path), check_files=check_files)
    root = Path(path)
    if not root.exists():
        raise DatasetError(f"{root}: no such dataset (run `farkle-logs ingest LOGS --out {root}` first)")
    if not root.is_dir():
        raise DatasetError(f"{root}: not a dataset directory (a dataset is the directory `ingest --out` wrote)")
    pointer = read_pointer(root)
    manifest = read_manifest(root, pointer)
    dataset = Dataset(root, manifest, (root / pointer.manifest).parent)
    if check_files:
        check_listed_files_exist(root, [p for table in TABLES for p in dataset.table_files(table)])
    return dataset


def check_listed_files_exist(root: Path, files: list[Path]) -> None:
    """Raise DatasetDamaged if any of `files` (what a manifest lists) is not a file: one stat
    each, cheap next to reading them, and it turns DuckDB's "no files found" into the way out."""
    missing = [p for p in files if not p.is_file()]
    if missing:
        shown = ", ".join(str(p.relative_to(root)) for p in missing[:2])
        more = f" and {len(missing) - 2} more" if len(missing) > 2 else ""
        raise damaged(root, f"{len(missing)} file(s) its manifest lists are missing ({shown}{more})")

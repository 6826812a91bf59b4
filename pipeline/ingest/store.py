"""The dataset directory: immutable Parquet files, snapshots, the manifest and the atomic commit.

Layout (docs/dataset.md has the user's version):

    DATASET/
      manifest.json  -> .current/manifest.json      (symlinks, made once, never change)
      events         -> .current/events
      turns          -> .current/turns   ... one per table of pipeline.tables.TABLES
      .current       -> .snapshots/000007            (the one thing a commit changes)
      .snapshots/000007/manifest.json
      .snapshots/000007/<table>/part-<ingest_id>-<n>.parquet
      .staging/<ingest_id>/<table>/...              (files being written; never read)
      .lock                                          (one ingest at a time)

A Parquet file, once written, never changes: a snapshot directory holds hard links to the
files of the previous snapshot it keeps, plus the new ones. Committing = building the next
snapshot completely, then one `os.replace` of the `.current` symlink. Every reader path goes
through `.current`, so readers see either the old dataset or the new one, never a mix, and a
crash at any moment before the replace leaves the old one untouched (the half-built
snapshot and staging files are removed by the next run). The previous snapshot is kept until
the next commit, so a reader that listed a directory just before a commit never sees that
listing emptied under it.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.tables import DATASET_VERSION, TABLES

FORMAT = "farkle-logs"
MANIFEST = "manifest.json"
CURRENT = ".current"
SNAPSHOTS = ".snapshots"
STAGING = ".staging"
LOCK = ".lock"


class StoreError(Exception):
    """The output path cannot hold a dataset (not ours, another ingest running, unwritable)."""


def _crash_point(name: str) -> None:
    """Tests of atomicity kill the process at a named step (FARKLE_LOGS_CRASH_AT=name)."""
    if os.environ.get("FARKLE_LOGS_CRASH_AT") == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def empty_manifest() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "dataset_version": DATASET_VERSION,
        "snapshot": 0,
        "tables": {name: [] for name in TABLES},
        "ingests": [],
        "files": [],
    }


@dataclass
class Store:
    root: Path
    manifest: dict[str, Any] = field(default_factory=empty_manifest)
    _lock_fd: int | None = None

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, root: Path) -> "Store":
        """Open (creating if needed) a dataset for writing, take its lock, clean leftovers."""
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise StoreError(f"{root} exists and is not a directory")
        if root.is_dir() and not (root / LOCK).exists() and not (root / MANIFEST).is_symlink():
            unrelated = [p.name for p in root.iterdir()]
            if unrelated:
                raise StoreError(
                    f"{root} is a non-empty directory that is not a farkle-logs dataset "
                    f"(has {', '.join(sorted(unrelated)[:3])}); give a new or empty directory"
                )
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {root}: {exc.strerror or exc}") from None
        store = cls(root)
        store._lock()
        store._load_manifest()
        store._clean()
        return store

    @classmethod
    def attach(cls, root: Path) -> "Store":
        """The dataset as another process of the same ingest sees it: no lock, no cleaning
        (the ingest that started this process holds the lock)."""
        store = cls(Path(root))
        store._load_manifest()
        return store

    def _lock(self) -> None:
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise StoreError(f"another ingest is writing to {self.root}; wait for it to finish") from None
            raise
        self._lock_fd = fd

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _load_manifest(self) -> None:
        path = self.root / CURRENT / MANIFEST
        if not path.exists():
            self.manifest = empty_manifest()
            return
        manifest = json.loads(path.read_text())
        if manifest.get("format") != FORMAT:
            raise StoreError(f"{self.root}: manifest.json is not a farkle-logs manifest")
        if manifest.get("dataset_version") != DATASET_VERSION:
            raise StoreError(
                f"{self.root} is dataset version {manifest.get('dataset_version')}, this farkle-logs "
                f"writes version {DATASET_VERSION}: ingest into a new directory"
            )
        for name in TABLES:  # a table added by a later version of this program
            manifest["tables"].setdefault(name, [])
        self.manifest = manifest

    def _clean(self) -> None:
        """Remove what a killed run left: staging files and unfinished snapshots."""
        shutil.rmtree(self.root / STAGING, ignore_errors=True)
        self._remove_snapshots(keep_from=int(self.manifest.get("snapshot", 0)) - 1, keep_to=int(self.manifest.get("snapshot", 0)))

    def _remove_snapshots(self, keep_from: int, keep_to: int) -> None:
        """Delete snapshot directories outside keep_from..keep_to. The one before the current
        is kept until the next commit: a reader that listed a table's directory just before
        a commit may still be reading that listing, and deleting its entries under it would
        show it part of a table."""
        snapshots = self.root / SNAPSHOTS
        if not snapshots.is_dir():
            return
        for entry in snapshots.iterdir():
            number = int(entry.name) if entry.name.isdigit() else -1
            if not keep_from <= number <= keep_to:
                shutil.rmtree(entry, ignore_errors=True)

    # ------------------------------------------------------------------ reading
    def current_snapshot_dir(self) -> Path | None:
        link = self.root / CURRENT
        if not link.is_symlink():
            return None
        return self.root / os.readlink(link)

    def table_files(self, table: str) -> list[Path]:
        """Absolute paths of the live files of a table (through the snapshot, not the symlink)."""
        snap = self.current_snapshot_dir()
        if snap is None:
            return []
        return [snap / table / name for name in self.manifest["tables"][table]]

    def staging_dir(self, ingest_id: str) -> Path:
        path = self.root / STAGING / ingest_id
        for table in TABLES:
            (path / table).mkdir(parents=True, exist_ok=True)
        return path

    def discard_staging(self) -> None:
        shutil.rmtree(self.root / STAGING, ignore_errors=True)

    # ------------------------------------------------------------------ commit
    def commit(
        self,
        manifest: dict[str, Any],
        new_files: dict[str, list[Path]],
        removed: dict[str, set[str]],
    ) -> None:
        """Publish the next snapshot: previous files minus `removed`, plus `new_files`.

        `manifest` is the new manifest without its `tables` and `snapshot` keys, which this
        fills. Files in `new_files` are moved (renamed) out of staging into the snapshot.
        """
        number = int(self.manifest.get("snapshot", 0)) + 1
        name = f"{number:06d}"
        snap = self.root / SNAPSHOTS / name
        old = self.current_snapshot_dir()
        tables: dict[str, list[str]] = {}
        for table in TABLES:
            directory = snap / table
            directory.mkdir(parents=True, exist_ok=True)
            kept = [f for f in self.manifest["tables"][table] if f not in removed.get(table, set())]
            for fname in kept:
                _link_or_copy(old / table / fname, directory / fname)
            added = []
            for path in new_files.get(table, []):
                os.rename(path, directory / path.name)
                added.append(path.name)
            tables[table] = kept + added
        _crash_point("snapshot_built")
        manifest = dict(manifest)
        manifest["snapshot"] = number
        manifest["tables"] = tables
        _write_json(snap / MANIFEST, manifest)
        _fsync_dir(snap)
        # The symlinks readers use: made once, pointing through .current.
        for entry in list(TABLES) + [MANIFEST]:
            link = self.root / entry
            if not link.is_symlink():
                if link.exists():
                    raise StoreError(f"{link} exists and is not the dataset's symlink")
                os.symlink(f"{CURRENT}/{entry}", link)
        _crash_point("before_flip")
        tmp = self.root / f"{CURRENT}.tmp"
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(f"{SNAPSHOTS}/{name}", tmp)
        os.replace(tmp, self.root / CURRENT)  # the commit point
        _fsync_dir(self.root)
        _crash_point("after_flip")
        self.manifest = manifest
        self._remove_snapshots(keep_from=number - 1, keep_to=number)
        shutil.rmtree(self.root / STAGING, ignore_errors=True)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # a filesystem without hard links: copy (files are immutable either way)
        shutil.copy2(src, dst)


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        json.dump(value, fh, indent=1)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

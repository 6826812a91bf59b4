"""The dataset directory as ingest writes it: immutable Parquet files, snapshots, the manifest,
and the commit (dataset format version 2; docs/dataset.md has the user's version).

    DATASET/
      _current.json                      the commit point: names the current snapshot's manifest
      .snapshots/000007/manifest.json    lists every file of every table of snapshot 7
      .snapshots/000007/<table>/part-<ingest_id>-<n>.parquet
      .staging/<ingest_id>/<table>/...   files being written; never read
      .lock                              one ingest at a time (flock)
      .current -> .snapshots/000007      convenience symlinks for users' own tools,
      manifest.json -> .current/manifest.json   re-pointed after the commit point;
      events -> .current/events  ...            nothing in farkle-logs reads them

A Parquet file, once written, never changes: a snapshot directory holds hard links to the
files of the previous snapshot it keeps, plus the new ones. Committing = building the next
snapshot completely (files, then its manifest), then replacing `_current.json` in one atomic
step (temp file + rename here; one PUT of a small object on an object store, which has
neither rename nor symlinks). Readers read the pointer, then exactly the files its manifest
lists, so they see the old dataset or the new one, never a mix; a crash at any moment
before the replace leaves the old one untouched (the next run removes the half-built
snapshot and the staging files, which no pointer ever named).

A directory that holds snapshots but no usable pointer is damaged, never "a new dataset":
ingesting into it as new would drop what it holds. `Store.open` refuses it with the way out
(`farkle-logs dataset repair`, pipeline/dataset/repair.py).

Every problem of the filesystem (read-only, full, permissions) before the commit point is a
StoreError naming the path and the cause, with the previous snapshot intact; after the
commit point nothing can fail the ingest (the links are conveniences: a problem there is a
warning).
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

from pipeline.dataset.layout import (
    CURRENT_LINK,
    FORMAT,
    LOCK,
    MANIFEST,
    POINTER,
    SNAPSHOTS,
    STAGING,
    DatasetDamaged,
    DatasetError,
    DatasetVersionError,
    Pointer,
    check_listed_files_exist,
    explain_missing_pointer,
    is_pointer_temporary,
    own_symlinks,
    read_manifest,
    read_pointer,
    snapshot_manifest_path,
    symlink_refusal,
)
from pipeline.dataset.tables import DATASET_VERSION, TABLES
from pipeline.errors import UserError
from pipeline.files import replacing

# DATASET/<name> -> .current/<name>; made in this order at the first commit, the manifest's
# last, so a tool that finds manifest.json finds every table's link too
LINKS = (*TABLES, MANIFEST)


class StoreError(UserError):
    """The output path cannot hold a dataset (not ours, damaged, another ingest running,
    unwritable, full). Nothing was committed; the previous snapshot is intact."""


def crash_point(name: str) -> None:
    """Tests of atomicity kill the process at a named step (FARKLE_LOGS_CRASH_AT=name)."""
    if os.environ.get("FARKLE_LOGS_CRASH_AT") == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _fail_point(name: str, path: Path) -> None:
    """Tests of a full disk make the named write step fail with ENOSPC
    (FARKLE_LOGS_FAIL_AT=name), as a real full disk would at that step."""
    if os.environ.get("FARKLE_LOGS_FAIL_AT") == name:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def describe_os_error(exc: OSError, fallback: Path | str) -> str:
    """'PATH: cause' for an OSError (pyarrow's carry errno but no file name)."""
    cause = os.strerror(exc.errno) if exc.errno else (exc.strerror or str(exc))
    return f"{exc.filename or fallback}: {cause}"


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
    _snapshot_dir: Path | None = None  # directory of the current manifest (None: no commit yet)
    warnings: list[str] = field(default_factory=list)  # problems after a commit point, for the user

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, root: Path) -> "Store":
        """Open (creating if needed) a dataset for writing, take its lock, clean leftovers.

        Raises StoreError if `root` is not a dataset of this version, is damaged (snapshots
        but no usable pointer or manifest), is locked by another ingest, or cannot be
        written."""
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise StoreError(f"{root} exists and is not a directory")
        if root.is_dir():
            _refuse_foreign(root)
            refuse_symlinks(root)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {describe_os_error(exc, root)}") from None
        store = cls(root)
        store._lock()
        try:
            store._load_manifest()
            store._clean()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def attach(cls, root: Path) -> "Store":
        """The dataset as another process of the same ingest sees it: no lock, no cleaning
        (the ingest that started this process holds the lock)."""
        store = cls(Path(root))
        store._load_manifest()
        return store

    def _lock(self) -> None:
        self._lock_fd = acquire_lock(self.root)

    def close(self) -> None:
        """Release the lock. A run that did not commit leaves no staging files behind (they
        can be large, and the disk may be full because of them)."""
        if self._lock_fd is not None:
            shutil.rmtree(self.root / STAGING, ignore_errors=True)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _load_manifest(self) -> None:
        """The current manifest, or an empty one for a directory that never had a commit.
        A directory with committed snapshots but no usable pointer or manifest, or with a
        file its manifest lists missing, is damaged: StoreError with the way out."""
        if not os.path.lexists(self.root / POINTER):
            reason = explain_missing_pointer(self.root)
            if isinstance(reason, (DatasetDamaged, DatasetVersionError)):
                raise StoreError(str(reason))
            self.manifest = empty_manifest()  # new, or a first ingest that never committed
            self._snapshot_dir = None
            return
        try:
            pointer = read_pointer(self.root)
            manifest = read_manifest(self.root, pointer)
            snap = (self.root / pointer.manifest).parent
            check_listed_files_exist(
                self.root, [snap / t / f for t, files in manifest["tables"].items() for f in files]
            )
        except DatasetError as exc:
            raise StoreError(str(exc)) from None
        self.manifest = manifest
        self._snapshot_dir = snap

    def _clean(self) -> None:
        """Remove what a killed run left: staging files and snapshots the pointer never named
        (numbered above the current one), and snapshots older than the previous one."""
        staging = self.root / STAGING
        try:
            if staging.is_symlink() or staging.is_file():
                staging.unlink()
            elif staging.exists():
                shutil.rmtree(staging)
        except OSError as exc:
            raise StoreError(
                f"cannot remove the leftover staging folder of an interrupted ingest: {describe_os_error(exc, staging)}"
            ) from None
        for name in os.listdir(self.root):
            if is_pointer_temporary(name):  # a run killed while writing the pointer
                try:
                    os.unlink(self.root / name)
                except OSError:
                    pass
        current = int(self.manifest.get("snapshot", 0))
        self._remove_snapshots(keep_from=current - 1, keep_to=current)
        if self._snapshot_dir is not None:
            self._point_links(self._snapshot_dir)  # a crash after the last commit point

    def _remove_snapshots(self, keep_from: int, keep_to: int) -> None:
        """Delete snapshot directories outside keep_from..keep_to. The one before the current
        is kept until the next commit: a user's tool that listed a table's directory (through
        the convenience links) just before a commit may still be reading that listing."""
        snapshots = self.root / SNAPSHOTS
        if not snapshots.is_dir():
            return
        for entry in snapshots.iterdir():
            number = int(entry.name) if entry.name.isdigit() else -1
            if not keep_from <= number <= keep_to and entry != self._snapshot_dir:
                shutil.rmtree(entry, ignore_errors=True)

    # ------------------------------------------------------------------ reading
    def current_snapshot_dir(self) -> Path | None:
        return self._snapshot_dir

    def table_files(self, table: str) -> list[Path]:
        """Absolute paths of the live files of a table, as the current manifest lists them."""
        snap = self._snapshot_dir
        if snap is None:
            return []
        return [snap / table / name for name in self.manifest["tables"][table]]

    def staging_dir(self, ingest_id: str) -> Path:
        path = self.root / STAGING / ingest_id
        try:
            for table in TABLES:
                (path / table).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot write to the dataset: {describe_os_error(exc, path)}") from None
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
        Raises StoreError (and leaves the previous snapshot current) if anything before the
        commit point fails.
        """
        number = int(self.manifest.get("snapshot", 0)) + 1
        relative = snapshot_manifest_path(number)
        snap = (self.root / relative).parent
        for name in LINKS:  # checked before anything is written: refuse early, not half-way
            link = self.root / name
            if os.path.lexists(link) and not link.is_symlink():
                raise StoreError(f"{link} exists and is not the dataset's symlink; move it out of the dataset")
        try:
            tables = self._build_snapshot(snap, new_files, removed)
            crash_point("snapshot_built")
            manifest = dict(manifest)
            manifest["format"], manifest["dataset_version"] = FORMAT, DATASET_VERSION
            manifest["snapshot"] = number
            manifest["tables"] = tables
            _fail_point("manifest", snap / MANIFEST)
            write_json(snap / MANIFEST, manifest)
            _fsync_dir(snap)
            crash_point("before_flip")
            _fail_point("pointer", self.root / POINTER)
            write_json(self.root / POINTER, Pointer(number, relative).to_json())  # the commit point
        except OSError as exc:
            shutil.rmtree(snap, ignore_errors=True)  # never named by a pointer: garbage
            raise StoreError(
                f"cannot write to the dataset: {describe_os_error(exc, snap)}; nothing was committed, "
                f"snapshot {number - 1} is still current"
            ) from None
        _fsync_dir(self.root)
        crash_point("after_flip")
        self.manifest = manifest
        self._snapshot_dir = snap
        self._point_links(snap)
        self._remove_snapshots(keep_from=number - 1, keep_to=number)
        shutil.rmtree(self.root / STAGING, ignore_errors=True)

    def _build_snapshot(
        self, snap: Path, new_files: dict[str, list[Path]], removed: dict[str, set[str]]
    ) -> dict[str, list[str]]:
        old = self._snapshot_dir
        tables: dict[str, list[str]] = {}
        for table in TABLES:
            directory = snap / table
            directory.mkdir(parents=True, exist_ok=True)
            kept = [f for f in self.manifest["tables"][table] if f not in removed.get(table, set())]
            for fname in kept:
                assert old is not None
                if "/" in fname:  # a partitioned table of a hand-made dataset
                    (directory / fname).parent.mkdir(parents=True, exist_ok=True)
                _link_or_copy(old / table / fname, directory / fname)
            added = []
            for path in new_files.get(table, []):
                os.rename(path, directory / path.name)
                added.append(path.name)
            tables[table] = kept + added
            _fsync_dir(directory)
        return tables

    def _point_links(self, snap: Path) -> None:
        warning = point_links(self.root, snap)
        if warning:
            self.warnings.append(warning)


def refuse_symlinks(root: Path) -> None:
    """StoreError if any of the dataset's own entries is a symlink (see
    pipeline.dataset.layout.own_symlinks): checked before anything is written."""
    found = own_symlinks(root)
    if found:
        raise StoreError(symlink_refusal(root, found))


def acquire_lock(root: Path) -> int:
    """Take the dataset's lock (one writer at a time: ingest or repair); the fd holds it.
    Opened without following a symlink (`refuse_symlinks` names one planted there)."""
    try:
        fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(symlink_refusal(root, [LOCK])) from None
        raise StoreError(f"cannot write to the dataset: {describe_os_error(exc, root / LOCK)}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise StoreError(
                f"another ingest (or `dataset repair`) is writing to {root}; wait for it to finish"
            ) from None
        raise StoreError(f"cannot lock {describe_os_error(exc, root / LOCK)}") from None
    return fd


def point_links(root: Path, snap: Path) -> str | None:
    """Re-point the convenience symlinks (`.current`, `DATASET/<table>`, `manifest.json`)
    at snapshot directory `snap`. Returns a warning, or None. A filesystem without symlinks
    gets none, silently: nothing in farkle-logs reads them."""
    try:
        target = os.path.relpath(snap, root)
        link = root / CURRENT_LINK
        if not (link.is_symlink() and os.readlink(link) == target):
            tmp = root / f"{CURRENT_LINK}.tmp"
            if os.path.lexists(tmp):
                tmp.unlink()
            os.symlink(target, tmp)
            os.replace(tmp, link)
        for name in LINKS:
            link = root / name
            if not os.path.lexists(link):
                os.symlink(f"{CURRENT_LINK}/{name}", link)
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
            return None
        return (
            f"committed, but the convenience links (DATASET/<table>) were not updated: {describe_os_error(exc, root)}"
        )
    return None


def _refuse_foreign(root: Path) -> None:
    """Refuse, before writing anything (not even the lock file), a non-empty directory that
    is neither a dataset nor the leftovers of a first ingest that never committed."""
    try:
        names = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        raise StoreError(f"cannot read {describe_os_error(exc, root)}") from None
    if names and not set(names) & {POINTER, LOCK, SNAPSHOTS, CURRENT_LINK}:
        raise StoreError(
            f"{root} is a non-empty directory that is not a farkle-logs dataset "
            f"(has {', '.join(names[:3])}); give a new or empty directory"
        )


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ENOENT, errno.EACCES):
            raise
        shutil.copy2(src, dst)  # a filesystem without hard links: copy (files are immutable either way)


def write_json(path: Path, value: Any) -> None:
    """Write `path` atomically: a temporary file created exclusively beside it (never through
    a link planted there), fsync, rename over it."""
    with replacing(path, sync=True) as fh:
        fh.write(json.dumps(value, indent=1).encode("utf-8") + b"\n")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

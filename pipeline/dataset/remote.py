"""A dataset on an object store (`s3://bucket/prefix`, any fsspec URL): the same format 2,
the same commit point, written with what an object store has.

    URL/_current.json                     the commit point: names the current manifest
    URL/.snapshots/000007/manifest.json   lists every file of every table of snapshot 7
    URL/.snapshots/000007/<table>/part-<ingest_id>-<n>.parquet
    URL/.lock                             the writer's lock object, with a lease

An object store has no rename, no hard link, no directory and no lock. So:
- **Files**: an ingest writes its new files straight under the next snapshot's prefix
  (its number is known once the lock is held); the files the next snapshot keeps from the
  current one are copied there by the store (a server-side copy on S3). Readers never list
  a prefix: they read the pointer, then the manifest, then exactly the files it lists, so a
  half-written snapshot is invisible.
- **Commit**: the manifest is created only if absent (`If-None-Match: *` on S3; fsspec's
  `open(..., "xb")` on every store that has a conditional create), then `_current.json` is
  written last, in one PUT of a small object: a PUT replaces an object whole, and S3 has
  read-after-write consistency, so a reader gets the old pointer or the new one. A crash
  at any moment before that PUT leaves the previous snapshot current; the next writer
  removes the unnamed snapshot.
- **One writer at a time**: `.lock` is created only if absent, holding a random token and
  a lease (an expiry time). A thread renews the lease while the ingest runs. Another
  writer that finds the lock is refused (exit 2, saying until when), unless the lease ran
  out more than one lease ago (a writer that died): then it deletes the lock and
  creates its own, again only if absent. Before its commit a writer checks that the lock
  still holds its token with at least half a lease left, and the exclusive create of the
  manifest fences off any writer that still slipped through: two writers can never both
  commit snapshot n.

What is not used: conditional overwrite (`If-Match` on an ETag, a compare-and-swap),
which S3 has had since late 2024 and moto serves, but fsspec does not expose across stores.
The lease judges expiry by the clocks of the two writers: they must agree within LEASE
seconds (the grace period before a dead writer's lock is taken over).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pipeline import storage
from pipeline.dataset.layout import (
    FORMAT,
    LOCK,
    MANIFEST,
    POINTER,
    SNAPSHOTS,
    Dataset,
    DatasetError,
    Pointer,
    check_manifest,
    check_pointer,
    damaged,
    parse_json,
    snapshot_manifest_path,
)
from pipeline.dataset.tables import DATASET_VERSION, TABLES

LEASE_ENV = "FARKLE_LOGS_LOCK_LEASE"  # seconds (tests shorten it)
DEFAULT_LEASE = 120.0


def lease_seconds() -> float:
    value = os.environ.get(LEASE_ENV, "")
    try:
        return max(0.5, float(value)) if value else DEFAULT_LEASE
    except ValueError:
        return DEFAULT_LEASE


# ---------------------------------------------------------------------- reading
def read_remote_pointer(url: str) -> Pointer | None:
    """The pointer of the dataset at `url`, or None when there is no `_current.json`."""
    try:
        data = storage.read_bytes(storage.join(url, POINTER))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatasetError(f"{url}: cannot read {POINTER} ({_cause(exc)})") from None
    try:
        parsed = parse_json(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise damaged(url, f"{POINTER} is unreadable ({exc})") from None
    return check_pointer(url, parsed)


def read_remote_manifest(url: str, pointer: Pointer) -> dict[str, Any]:
    try:
        data = storage.read_bytes(storage.join(url, pointer.manifest))
    except FileNotFoundError:
        raise damaged(url, f"{pointer.manifest} (the manifest {POINTER} names) is missing") from None
    except OSError as exc:
        raise damaged(url, f"{pointer.manifest} is unreadable ({_cause(exc)})") from None
    try:
        parsed = parse_json(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise damaged(url, f"{pointer.manifest} is unreadable ({exc})") from None
    return check_manifest(url, pointer, parsed)


def open_remote_dataset(url: str, *, check_files: bool = True) -> Dataset:
    """`layout.open_dataset` for a URL."""
    url = url.rstrip("/")
    pointer = read_remote_pointer(url)
    if pointer is None:
        if _committed_traces(url):
            raise damaged(url, f"{POINTER} is missing")
        raise DatasetError(
            f"{url}: no such dataset (no {POINTER}; create one with `farkle-logs ingest LOGS --out {url}`)"
        )
    manifest = read_remote_manifest(url, pointer)
    root = storage.parent(storage.join(url, pointer.manifest))
    dataset = Dataset(url, manifest, root)
    if check_files:
        listed = [str(p) for t in TABLES for p in dataset.table_files(t)]
        _check_listed(url, root, listed)
    return dataset


def _check_listed(url: str, root: str, files: list[str]) -> None:
    """DatasetDamaged if a listed file is missing: one listing per table prefix."""
    present: set[str] = set()
    for prefix in sorted({storage.parent(f) for f in files}):
        present |= {e["name"].rstrip("/") for e in storage.listing(prefix)}
    missing = [f for f in files if f not in present]
    if missing:
        shown = ", ".join(m[len(url) + 1 :] for m in missing[:2])
        more = f" and {len(missing) - 2} more" if len(missing) > 2 else ""
        raise damaged(url, f"{len(missing)} file(s) its manifest lists are missing ({shown}{more})")


def _committed_traces(url: str) -> list[str]:
    return [e["name"] for e in storage.listing(storage.join(url, SNAPSHOTS))]


def _cause(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


# ---------------------------------------------------------------------- the lock
class LockHeld(Exception):
    """Another writer holds the dataset's lock: the message says who and until when."""


@dataclass
class Lease:
    """The writer's lock object `URL/.lock`, created only if absent and renewed while held."""

    url: str
    owner: str  # what the lock says of its holder (ingest id, host, process)
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    seconds: float = field(default_factory=lease_seconds)
    expires: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    lost: str | None = None  # why the renewal found the lock no longer ours

    @property
    def object(self) -> str:
        return storage.join(self.url, LOCK)

    def _body(self) -> bytes:
        self.expires = time.time() + self.seconds
        return json.dumps(
            {"token": self.token, "owner": self.owner, "expires": self.expires, "lease": self.seconds}
        ).encode()

    def acquire(self) -> None:
        """Create the lock object, or take over a dead writer's; LockHeld otherwise."""
        for _ in range(2):
            try:
                storage.write_bytes(self.object, self._body(), exclusive=True)
            except FileExistsError:
                held = self._read()
                expires = float(held.get("expires", 0)) if isinstance(held, dict) else 0.0
                grace = float(held.get("lease", self.seconds)) if isinstance(held, dict) else self.seconds
                if held is not None and time.time() < expires + grace:
                    until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(expires + grace))
                    raise LockHeld(
                        f"another ingest is writing to {self.url} ({held.get('owner', 'unknown') if isinstance(held, dict) else 'unknown'}); "
                        f"wait for it to finish (if it died, its lock expires at {until})"
                    ) from None
                storage.remove(self.object)  # a dead writer's lock: its lease ran out a lease ago
                continue
            self._thread = threading.Thread(target=self._renew, name="farkle-logs-lease", daemon=True)
            self._thread.start()
            return
        raise LockHeld(f"another ingest took the lock of {self.url} at the same moment; try again")

    def _read(self) -> Any:
        try:
            return parse_json(storage.read_bytes(self.object))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, UnicodeDecodeError):
            return {}

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 4):
            held = self._read()
            if not isinstance(held, dict) or held.get("token") != self.token:
                self.lost = "the lock object was removed or taken over by another writer"
                return
            try:
                storage.write_bytes(self.object, self._body())
            except OSError:  # a passing network problem: the next renewal tries again
                continue

    def check(self) -> None:
        """Raise LockHeld unless the lock still holds our token with half a lease left:
        what keeps a writer that stalled past its lease from committing."""
        held = self._read()
        if self.lost or not isinstance(held, dict) or held.get("token") != self.token:
            raise LockHeld(f"{self.url}: this ingest lost its lock ({self.lost or 'another writer holds it'})")
        if float(held.get("expires", 0)) - time.time() < self.seconds / 2:
            raise LockHeld(
                f"{self.url}: this ingest's lock lease is about to run out (the store or this process stalled)"
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        held = self._read()
        if isinstance(held, dict) and held.get("token") == self.token:
            storage.remove(self.object)


def lock_owner(ingest_id: str | None = None) -> str:
    return f"{ingest_id or 'writer'} on {socket.gethostname()}, process {os.getpid()}"


# ---------------------------------------------------------------------- writing
def snapshot_prefix(url: str, number: int) -> str:
    return storage.parent(storage.join(url, snapshot_manifest_path(number)))


def remove_unnamed_snapshots(url: str, current: int) -> None:
    """Delete the snapshots the pointer never named (above `current`: a writer that died
    before its commit point) and those older than the one before `current`."""
    for entry in storage.listing(storage.join(url, SNAPSHOTS)):
        number_text = storage.name(entry["name"])
        number = int(number_text) if number_text.isdigit() else -1
        if not current - 1 <= number <= current:
            storage.remove(entry["name"], recursive=True)


def commit_remote(
    url: str,
    current: dict[str, Any],
    manifest: dict[str, Any],
    new_files: dict[str, list[str]],
    removed: dict[str, set[str]],
    lease: Lease,
) -> dict[str, Any]:
    """Publish the next snapshot of the dataset at `url`; returns its manifest. Raises
    OSError (nothing committed), LockHeld (the lock was lost) or FileExistsError (another
    writer committed this snapshot number)."""
    number = int(current.get("snapshot", 0)) + 1
    snap = snapshot_prefix(url, number)
    old = snapshot_prefix(url, number - 1) if number > 1 else None
    tables: dict[str, list[str]] = {}
    sources, targets = [], []
    for table in TABLES:
        kept = [f for f in current["tables"][table] if f not in removed.get(table, set())]
        for fname in kept:
            assert old is not None
            sources.append(storage.join(old, table, fname))
            targets.append(storage.join(snap, table, fname))
        added = []
        for path in new_files.get(table, []):
            target = storage.join(snap, table, storage.name(path))
            if path != target:  # written elsewhere (never by ingest): copied into the snapshot
                sources.append(path)
                targets.append(target)
            added.append(storage.name(path))
        tables[table] = kept + added
    storage.copy(sources, targets)
    manifest = dict(manifest)
    manifest["format"], manifest["dataset_version"] = FORMAT, DATASET_VERSION
    manifest["snapshot"] = number
    manifest["tables"] = tables
    lease.check()
    storage.write_bytes(storage.join(snap, MANIFEST), _json(manifest), exclusive=True)
    from pipeline.dataset.store import crash_point

    crash_point("before_flip")
    storage.write_bytes(storage.join(url, POINTER), _json(Pointer(number, snapshot_manifest_path(number)).to_json()))
    crash_point("after_flip")
    return manifest


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1) + "\n").encode("utf-8")


# ---------------------------------------------------------------------- ingest's store
class RemoteStore:
    """`pipeline.dataset.store.Store` for a dataset at a URL: what `ingest` needs of a store
    (the manifest, the live files, where new files go, the commit), by the protocol above."""

    def __init__(self, url: str, lease: Lease):
        from pipeline.dataset.store import empty_manifest

        self.root = url
        self.lease = lease
        self.manifest: dict[str, Any] = empty_manifest()
        self.warnings: list[str] = []
        self.local_spill = Path(tempfile.mkdtemp(prefix="farkle-logs-spill-"))
        self._snapshot_dir: str | None = None
        self._committed = False

    @classmethod
    def open(cls, url: str) -> "RemoteStore":
        """Take the dataset's lock, read its current manifest, remove what a writer that
        died left. Raises StoreError (another writer holds the lock, damaged, unreachable)."""
        from pipeline.dataset.store import StoreError

        url = url.rstrip("/")
        try:
            storage.filesystem(url)
        except storage.StorageUnavailable as exc:
            raise StoreError(str(exc)) from None
        lease = Lease(url, lock_owner())
        try:
            lease.acquire()
        except LockHeld as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"cannot write to the dataset: {url}: {_cause(exc)}") from None
        store = cls(url, lease)
        try:
            store._load()
        except BaseException:
            store.close()
            raise
        return store

    def _load(self) -> None:
        from pipeline.dataset.store import StoreError

        try:
            pointer = read_remote_pointer(self.root)
            if pointer is None:
                if _committed_traces(self.root) and any(
                    storage.exists(storage.join(e, MANIFEST)) for e in _committed_traces(self.root)
                ):
                    raise damaged(self.root, f"{POINTER} is missing")
                foreign = sorted(
                    storage.name(e["name"])
                    for e in storage.listing(self.root)
                    if storage.name(e["name"]) not in (LOCK, SNAPSHOTS, POINTER)
                )
                if foreign:
                    raise StoreError(
                        f"{self.root} holds other objects ({', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}) "
                        "and no dataset: choose an empty prefix for --out"
                    )
                remove_unnamed_snapshots(self.root, 0)
                return
            self.manifest = read_remote_manifest(self.root, pointer)
            self._snapshot_dir = storage.parent(storage.join(self.root, pointer.manifest))
            _check_listed(self.root, self._snapshot_dir, [str(p) for t in TABLES for p in self.table_files(t)])
            remove_unnamed_snapshots(self.root, pointer.snapshot)
        except DatasetError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"cannot read the dataset: {self.root}: {_cause(exc)}") from None

    def current_snapshot_dir(self) -> str | None:
        return self._snapshot_dir

    def table_files(self, table: str) -> list[Path]:
        """URLs of the table's live files (typed as paths: every reader of them takes both)."""
        if self._snapshot_dir is None:
            return []
        return cast(list[Path], [storage.join(self._snapshot_dir, table, f) for f in self.manifest["tables"][table]])

    def staging_dir(self, ingest_id: str) -> Path:
        """The next snapshot's prefix: new files are written where they will stay."""
        return cast(Path, snapshot_prefix(self.root, int(self.manifest.get("snapshot", 0)) + 1))

    def discard_staging(self) -> None:
        self._remove_next()

    def _remove_next(self) -> None:
        if self.lease.lost is None:
            storage.remove(str(self.staging_dir("")), recursive=True)

    def commit(self, manifest: dict[str, Any], new_files: dict[str, list[Path]], removed: dict[str, set[str]]) -> None:
        from pipeline.dataset.store import StoreError

        number = int(self.manifest.get("snapshot", 0)) + 1
        try:
            files = {t: [str(p) for p in paths] for t, paths in new_files.items()}
            committed = commit_remote(self.root, self.manifest, manifest, files, removed, self.lease)
        except FileExistsError:
            self._committed = True  # that snapshot's files are the other writer's now: leave them
            raise StoreError(
                f"{self.root}: another writer committed snapshot {number} while this ingest ran; "
                f"nothing was committed, run the ingest again"
            ) from None
        except LockHeld as exc:
            self._committed = True  # another writer may be writing the same snapshot: leave it
            raise StoreError(f"{exc}; nothing was committed") from None
        except OSError as exc:
            self._remove_next()
            raise StoreError(
                f"cannot write to the dataset: {self.root}: {_cause(exc)}; nothing was committed, "
                f"snapshot {number - 1} is still current"
            ) from None
        self._committed = True
        self.manifest = committed
        self._snapshot_dir = snapshot_prefix(self.root, number)
        try:
            remove_unnamed_snapshots(self.root, number)
        except OSError as exc:  # after the commit point nothing fails the ingest
            self.warnings.append(f"{self.root}: old snapshots not removed ({_cause(exc)}); the next ingest retries")

    def close(self) -> None:
        """Release the lock; a run that did not commit leaves no files behind."""
        import shutil

        try:
            if not self._committed:
                self._remove_next()
        except OSError:
            pass  # the next writer removes the unnamed snapshot
        finally:
            self.lease.release()
            shutil.rmtree(self.local_spill, ignore_errors=True)

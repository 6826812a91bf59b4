"""`farkle-logs dataset repair`: point a damaged dataset at its newest complete snapshot.

A dataset is damaged when its pointer (`_current.json`), the manifest it names, or a file
that manifest lists is missing or unreadable (a copy that left out hidden files, a disk
that filled during a copy, a file deleted by hand). Snapshots are complete on their own
(each holds hard links to every file it lists), so an older one that verifies is a
consistent dataset: it lacks only the ingests that came after it.

Repair changes as little as it can and deletes nothing. It takes the ingest lock, picks the
newest snapshot whose manifest and files verify (pipeline.dataset.verify) -- at most the
one the pointer names, when the pointer is readable: snapshots above it were never
committed --, moves the snapshots above that one into `.damaged/` (out of ingest's way,
for the user to inspect or delete), writes the pointer the way a commit does, and
re-points the convenience links. It says which input files the dropped snapshots held, so
they can be ingested again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline.dataset.layout import (
    DAMAGED,
    POINTER,
    SNAPSHOTS,
    DatasetDamaged,
    DatasetError,
    Pointer,
    explain_missing_pointer,
    read_pointer,
    snapshot_manifest_path,
)
from pipeline.dataset.verify import newest_complete_snapshot, snapshot_numbers, verify_snapshot
from pipeline.dataset.store import (
    StoreError,
    acquire_lock,
    describe_os_error,
    point_links,
    refuse_symlinks,
    write_json,
)


@dataclass
class RepairResult:
    path: Path
    before: int | None  # the snapshot the pointer named (None: no usable pointer)
    after: int | None  # the snapshot current now (None: nothing verifies, nothing changed)
    healthy: bool = False  # nothing needed repair
    actions: list[str] = field(default_factory=list)
    reingest: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.after is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": str(self.path),
            "ok": self.ok,
            "healthy_before": self.healthy,
            "snapshot_before": self.before,
            "snapshot": self.after,
            "actions": self.actions,
            "ingest_again": self.reingest,
            "rows": self.rows,
        }


def repair_dataset(path: str | Path, *, full: bool = False) -> RepairResult:
    """Repair `path` (see the module docstring). Raises DatasetError when `path` is not a
    farkle-logs dataset at all, StoreError when it is locked or cannot be written."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"{root}: no such dataset directory")
    if not os.path.lexists(root / POINTER) and not snapshot_numbers(root):
        reason = explain_missing_pointer(root)
        if not isinstance(reason, DatasetDamaged):
            raise reason
    refuse_symlinks(root)
    fd = acquire_lock(root)
    try:
        return _repair_locked(root, full)
    except OSError as exc:
        raise StoreError(f"cannot repair the dataset: {describe_os_error(exc, root)}") from None
    finally:
        os.close(fd)


def _repair_locked(root: Path, full: bool) -> RepairResult:
    try:
        pointer: Pointer | None = read_pointer(root)
    except DatasetDamaged:
        pointer = None  # DatasetError (another version, not ours) propagates
    if pointer is not None:
        current = verify_snapshot(root, pointer.manifest, pointer.snapshot, full=full)
        if current.complete:
            result = RepairResult(root, pointer.snapshot, pointer.snapshot, healthy=True, rows=current.rows)
            warning = point_links(root, (root / pointer.manifest).parent)
            result.actions.append(f"healthy (snapshot {pointer.snapshot}); nothing to repair")
            if warning:
                result.actions.append(warning)
            return result
    before = pointer.snapshot if pointer is not None else None
    limit = before + 1 if before is not None else None
    found = newest_complete_snapshot(root, below=limit, full=full)
    if found is None:
        result = RepairResult(root, before, None)
        result.actions.append(
            f"no snapshot verifies; nothing was changed (the files are still in {SNAPSHOTS}/): "
            "ingest the logs again into a new directory"
        )
        return result
    number, chosen = found
    result = RepairResult(root, before, number, rows=chosen.rows)
    files = chosen.manifest.get("files", []) if chosen.manifest is not None else []  # found: it verified
    kept_inputs = {(f.get("path"), f.get("sha256")) for f in files if isinstance(f, dict)}
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    unknown = False  # a dropped snapshot's manifest is unreadable: which inputs it added is unknown
    for other in sorted(n for n in snapshot_numbers(root) if n > number):
        check = verify_snapshot(root, snapshot_manifest_path(other), other, full=False)
        if check.manifest is not None:
            for f in check.manifest.get("files", []):
                if (
                    isinstance(f, dict)
                    and (f.get("path"), f.get("sha256")) not in kept_inputs
                    and f.get("path") not in result.reingest
                ):
                    result.reingest.append(str(f.get("path")))
        else:
            unknown = True
        why = (
            str(check.problems[0])
            if check.problems
            else ("complete, but never committed" if before is None or other > before else "complete")
        )
        moved = root / DAMAGED / f"{other:06d}-{stamp}"
        moved.parent.mkdir(exist_ok=True)
        os.rename(root / SNAPSHOTS / f"{other:06d}", moved)
        result.actions.append(f"moved snapshot {other} ({why}) to {os.path.relpath(moved, root)}")
    write_json(root / POINTER, Pointer(number, snapshot_manifest_path(number)).to_json())
    result.actions.append(
        f"pointed the dataset at snapshot {number} ({snapshot_manifest_path(number)}), which verifies: "
        f"{chosen.rows.get('events', 0):,} event{'s' if chosen.rows.get('events', 0) != 1 else ''} in "
        f"{chosen.files.get('events', 0)} file{'s' if chosen.files.get('events', 0) != 1 else ''}"
    )
    if unknown:
        result.actions.append(
            "which input files the dropped snapshots added is unknown (a manifest is unreadable): "
            "ingest all your logs again; files already in the dataset are skipped"
        )
    warning = point_links(root, (root / snapshot_manifest_path(number)).parent)
    if warning:
        result.actions.append(warning)
    return result

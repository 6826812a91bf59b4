"""`dataset repair` drops the later copies of events stored twice from two sources
(pipeline.dataset.copies finds them; docs/dataset.md, "Damage, check and repair").

Dropping a copy is what ingest does to a superseded line, with no new reading: the row
leaves `events`, and each game that held one is replayed whole from its remaining events
(its `seq_error` findings for the copies go, its turns and totals are recomputed), as one
commit. The manifest's `ingests` gets a record of the repair with the copies dropped per
source (`dropped`), which `dataset check` takes into account when it counts rows.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline.dataset.copies import find_copies
from pipeline.dataset.sources import Catalog
from pipeline.dataset.store import Store
from pipeline.ingest import incremental
from pipeline.ingest.incremental import file_key
from pipeline.ingest.route import bucket_count
from pipeline.ingest.workers import Config, Worker
from pipeline.limits import MAX_LINE_BYTES
from pipeline.rules import Ruleset


@dataclass
class DroppedCopies:
    events: int = 0  # copies dropped
    games: int = 0  # games replayed again
    by_file: dict[str, int] = field(default_factory=dict)
    snapshot: int | None = None  # committed, or None when there was nothing to drop
    examples: list[str] = field(default_factory=list)


def drop_copies(out: str | Path) -> DroppedCopies:
    """Drop the later copies in dataset `out` and commit the result (nothing when there is
    none). Raises StoreError when the dataset cannot be written (locked, damaged, a link)."""
    store = Store.open(Path(out))
    try:
        copies = find_copies(store.manifest, store.table_files("events"))
        result = DroppedCopies(examples=copies.examples)
        if not copies:
            return result
        from pipeline.ingest.run import new_ingest_id

        ingest_id = new_ingest_id()
        catalog = Catalog.of(store.manifest["files"])
        stored = incremental.Stored.load(store, [], ingest_id, catalog.unnamed)
        staging = store.staging_dir(ingest_id)
        superseded: list[tuple[str, int, Any]] = [
            (file_key(name, reading, stored.streams), line, game) for name, line, game, reading in copies.rows
        ]
        touched = {game for _, _, game in superseded if game is not None}
        config = Config(
            ingest_id, staging, Ruleset.builtin("standard"), bucket_count(0, 1), MAX_LINE_BYTES, stored.games
        )
        config.spill_dir.mkdir(parents=True, exist_ok=True)
        spill = config.spill_dir / "stored.arrow"
        incremental.spill_stored_games(store, touched, superseded, stored, config.buckets, spill)
        worker = Worker(config, 0)
        for bucket in range(config.buckets):
            worker.replay(bucket, [spill])
        files = worker.close()
        shutil.rmtree(config.spill_dir, ignore_errors=True)
        replaced = incremental.supersede(store, touched, superseded, staging, ingest_id, stored.streams)
        for table, paths in replaced.new_files.items():
            files[table].extend(paths)
        result.events, result.games, result.by_file = len(copies), len(touched), dict(copies.sources)
        manifest = {k: v for k, v in store.manifest.items() if k not in ("tables", "snapshot")}
        record = {
            "ingest_id": ingest_id,
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "repair": "dropped the later copies of events stored twice from two sources",
            "dropped": [{"path": name, "events": n} for name, n in sorted(copies.sources.items())],
            "counts": {"games_recomputed": len(touched), "dropped": len(copies)},
        }
        manifest["ingests"] = list(store.manifest["ingests"]) + [record]
        store.commit(manifest, files, replaced.removed)
        result.snapshot = store.manifest["snapshot"]
        return result
    finally:
        store.close()

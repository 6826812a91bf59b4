"""`farkle-logs ingest`: JSONL logs → a Parquet dataset, incrementally and atomically.

`run.ingest` orchestrates the stages (split, parse, route, replay, write; see run.py);
the records become Arrow tables and a committed snapshot in `pipeline.dataset`
(`batches`, `store`). docs/dataset.md is the user's guide.

The names below are loaded on first use, so that importing one stage module does not
import them all.
"""

from __future__ import annotations

from typing import Any

__all__ = ["IngestSummary", "InputErrors", "StoreError", "ingest"]


def __getattr__(name: str) -> Any:
    if name in ("IngestSummary", "InputErrors", "ingest"):
        from pipeline.ingest import run

        return getattr(run, name)
    if name == "StoreError":
        from pipeline.dataset.store import StoreError

        return StoreError
    raise AttributeError(f"module 'pipeline.ingest' has no attribute {name!r}")

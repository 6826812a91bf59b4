"""`farkle-logs ingest`: JSONL logs → a Parquet dataset, incrementally and atomically.

`run.ingest` orchestrates the stages (split, parse, route, replay, write; see run.py);
`batches` turns records into Arrow tables; `store` owns the dataset directory, its manifest
and the atomic commit. docs/dataset.md is the user's guide.

The names below are loaded on first use, so that importing one stage module (the Spark
engine imports `pipeline.replay.partition`, which uses `batches`) does not import them all.
"""
from __future__ import annotations

from typing import Any

__all__ = ["IngestSummary", "InputErrors", "StoreError", "ingest"]


def __getattr__(name: str) -> Any:
    if name in ("IngestSummary", "InputErrors", "ingest"):
        from pipeline.ingest import run

        return getattr(run, name)
    if name == "StoreError":
        from pipeline.ingest.store import StoreError

        return StoreError
    raise AttributeError(f"module 'pipeline.ingest' has no attribute {name!r}")

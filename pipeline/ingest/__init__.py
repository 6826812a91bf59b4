"""`farkle-logs ingest`: JSONL logs → a Parquet dataset, incrementally and atomically.

`run.ingest` orchestrates the stages (split, parse, route, replay, write; see run.py);
`batches` turns records into Arrow tables; `store` owns the dataset directory, its manifest
and the atomic commit. docs/dataset.md is the user's guide.

The names below are loaded on first use, so that importing one stage module (the Spark
engine imports `pipeline.replay.partition`, which uses `batches`) does not import them all.
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Any

# pyarrow (C++) tries `import dateutil` on every compute call that converts a Python value
# (an option, a scalar); when dateutil is not installed, each try searches sys.path again
# (about 0.2 ms). Ingest makes thousands of such calls, so a missing dateutil is recorded
# as missing once, which makes the import fail at once. Nothing changes if it is installed.
if "dateutil" not in sys.modules and importlib.util.find_spec("dateutil") is None:
    sys.modules["dateutil"] = None  # type: ignore[assignment]

__all__ = ["IngestSummary", "InputErrors", "StoreError", "ingest"]


def __getattr__(name: str) -> Any:
    if name in ("IngestSummary", "InputErrors", "ingest"):
        from pipeline.ingest import run

        return getattr(run, name)
    if name == "StoreError":
        from pipeline.ingest.store import StoreError

        return StoreError
    raise AttributeError(f"module 'pipeline.ingest' has no attribute {name!r}")

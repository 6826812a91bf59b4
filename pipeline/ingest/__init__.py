"""`farkle-logs ingest`: JSONL logs → a Parquet dataset, incrementally and atomically.

`run.ingest` orchestrates; `batches` turns records into Arrow tables; `store` owns the
dataset directory, its manifest and the atomic commit. docs/dataset.md is the user's guide.
"""
from pipeline.ingest.run import IngestSummary, InputErrors, ingest
from pipeline.ingest.store import StoreError

__all__ = ["IngestSummary", "InputErrors", "StoreError", "ingest"]

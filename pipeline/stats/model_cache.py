"""Rows of a few costly models kept between runs, keyed by everything they depend on.

Two league models cost far more than what they return: `rating_history` (every game rated
in turn by openskill, in Python) and `fct_game_decision_loss` (every choice of every game
judged against the exact policy), while their rows are a few per game (the costs are in
docs/performance.md). A dataset's snapshot never changes (ingest
writes new files and a new manifest), so their rows are kept in the stats cache
(pipeline.stats.cache: the same directory, the same switch) under a key made of:

- the dataset: each file the snapshot lists, with its size and modification time;
- the filters and options: every DuckDB variable of the session;
- the code: the SQL of the model and of every model it reads, `sql/macros.sql`, the source
  of pipeline/stats, rules and strategy, and the openskill version.

A file that cannot be read, or holds another schema, is a miss: the model is computed
again. The cache never makes a run fail.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.stats.cache import cache_dir, source_fingerprint, write_atomically

CACHED_MODELS = ("rating_history", "fct_game_decision_loss")
IDENTITY_VARIABLE = "x_dataset_identity"  # set by pipeline.stats.session; null: no caching


def dataset_identity(dataset) -> str:
    """A digest of the snapshot's files (path, size, mtime): another snapshot, a copy
    elsewhere or a file touched since gives another identity."""
    from pipeline.dataset.tables import TABLES

    digest = hashlib.sha256(str(dataset.snapshot).encode())
    for table in TABLES:
        for path in dataset.table_files(table):
            try:
                st = os.stat(path)
            except OSError:
                st = None
            digest.update(f"{Path(path).resolve()}\0{st and st.st_size}\0{st and st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:24]


def _key(con: duckdb.DuckDBPyConnection, name: str, sql_texts: list[str]) -> str | None:
    identity = con.execute(f"select getvariable('{IDENTITY_VARIABLE}')").fetchall()[0][0]
    if identity is None:
        return None
    digest = hashlib.sha256(identity.encode())
    for var, value in con.execute("select name, value::varchar from duckdb_variables() order by name").fetchall():
        digest.update(f"{var}={value}\n".encode())
    for text in sql_texts:
        digest.update(text.encode() + b"\0")
    digest.update(source_fingerprint("stats", "rules", "strategy").encode())
    digest.update(_openskill_version().encode())
    return f"model-{name}-{digest.hexdigest()[:24]}"


def _openskill_version() -> str:
    try:
        from importlib.metadata import version

        return version("openskill")
    except Exception:  # not installed: the ratings cannot be computed either
        return "none"


def _path(key: str) -> Path | None:
    base = cache_dir()
    return None if base is None else base / f"{key}.arrow"


def lookup(con: duckdb.DuckDBPyConnection, name: str, sql_texts: list[str]) -> tuple[str | None, pa.Table | None]:
    """(the cache key, the cached rows or None)."""
    key = _key(con, name, sql_texts)
    path = _path(key) if key else None
    if path is None:
        return key, None
    try:
        return key, pa.ipc.open_file(pa.py_buffer(path.read_bytes())).read_all()
    except (OSError, pa.ArrowException):
        return key, None


def store(key: str | None, table: pa.Table) -> None:
    path = _path(key) if key else None
    if path is None:
        return
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    write_atomically(path, sink.getvalue().to_pybytes())

"""Each model's Spark SQL, kept between runs.

Writing the models of `sql/` as Spark SQL (pipeline.engines.spark.transpile) costs about a
second on every `stats --engine spark`: importing sqlglot, parsing the macros and rewriting
some thirty models, for text that changes only with the model, the macros, the filters, the
tables its joins broadcast and the code that rewrites it. So the result is kept in the cache directory of
pipeline.stats.cache (same setting, same rules: written whole, never a reason for a run to
fail, `FARKLE_LOGS_CACHE_DIR=off` turns it off), keyed by all five and sqlglot's version;
sqlglot is imported only when a model is not there.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any, Mapping

from pipeline.stats.cache import cache_dir, source_fingerprint, write_atomically


def spark_sql(
    sql: str, macros_path: Path, variables: Mapping[str, Any], broadcast: frozenset[str] = frozenset()
) -> str:
    """The model's DuckDB text `sql` as Spark SQL with `variables` bound and the joins with
    `broadcast` hinted (transpile.to_spark), from the cache when it was written before."""
    path = _path(sql, macros_path, variables, broadcast)
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass  # not written yet, or unreadable: written again below
    from pipeline.engines.spark import transpile

    text = transpile.to_spark(sql, transpile.load_macros(macros_path), variables, broadcast)
    if path is not None:
        write_atomically(path, text.encode("utf-8"))
    return text


def _path(
    sql: str, macros_path: Path, variables: Mapping[str, Any], broadcast: frozenset[str] = frozenset()
) -> Path | None:
    base = cache_dir()
    if base is None:
        return None
    digest = hashlib.sha256()
    for part in (
        source_fingerprint("engines.spark"),
        _sqlglot_version(),
        _macros_text(macros_path),
        sql,
        repr(sorted(variables.items())),  # repr tells 1 from 1.0 and "1", a list from a tuple
        repr(sorted(broadcast)),
    ):
        digest.update(part.encode("utf-8") + b"\0")
    return base / f"spark-sql-{digest.hexdigest()[:24]}.sql"


@cache
def _macros_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _sqlglot_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sqlglot")
    except PackageNotFoundError:  # not installed: transpiling will say so
        return "none"

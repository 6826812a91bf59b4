"""Where the work runs and by which path: the seam between the commands and the library.

`Routing` says it: the engine (`local`, this process and its workers, or `spark`), the
replay path (the compiled fast path with the reference engine for unusual games, or the
reference engine for everything), numba or plain Python, the input size from which the
compiled paths are worth their start-up, ingest's worker count. Every path gives the same
results; the choice only moves the work. `Routing.from_environment` is the
one reader of the environment variables that choose; `ingest`, `audit` and `stats` here
run the library call on the routed engine. `pipeline.engines.spark` holds everything
Spark-specific; nothing outside it imports pyspark, and no library package imports this one
(the commands do), so the routing reaches the library as plain arguments.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pipeline.audit.run import AuditReport
    from pipeline.dataset.layout import Dataset
    from pipeline.ingest import IngestSummary
    from pipeline.reader.inputs import InputSource
    from pipeline.rules import Ruleset
    from pipeline.stats import Filters

LOCAL, SPARK = "local", "spark"
REPLAY = "FARKLE_LOGS_REPLAY"  # "reference": every game by the reference engine; "fast": the
# compiled paths whatever the input's size (tests and benchmarks); unset: chosen by size
NO_JIT = "FARKLE_LOGS_NO_JIT"  # set: numba kernels run as plain Python
WORKERS = "FARKLE_LOGS_WORKERS"  # ingest's processes, this one included

# Inputs smaller than this (bytes on disk, all inputs of a run together) take the paths that
# need no compiled code: msgspec's decoder instead of the compiled scan, the reference replay
# instead of the kernel. Loading the compiled code costs about as much as it saves on such an
# input even when it is cached, and compiling it (the first run after an install) costs
# seconds that a small input never wins back.
FAST_MIN_BYTES = 8 << 20


@dataclass(frozen=True)
class Routing:
    engine: str = LOCAL
    spark_master: str | None = None  # --engine spark: None is local[*] (or SPARK_REMOTE)
    reference: bool = False  # every game through the reference engine, no fast path
    jit: bool = True  # numba-compiled kernels (False: the same functions as plain Python)
    workers: int | None = None  # ingest's processes; None: chosen by the input's size
    fast_min_bytes: int = FAST_MIN_BYTES  # smaller inputs take the paths without compiled code

    @classmethod
    def from_environment(
        cls, engine: str = LOCAL, spark_master: str | None = None, environ: Mapping[str, str] | None = None
    ) -> Routing:
        env = os.environ if environ is None else environ
        workers = env.get(WORKERS, "")
        replay = env.get(REPLAY)
        return cls(
            engine=engine,
            spark_master=spark_master,
            reference=replay == "reference",
            jit=not env.get(NO_JIT),
            workers=int(workers) if workers.isdigit() else None,
            fast_min_bytes=0 if replay == "fast" else FAST_MIN_BYTES,
        )


@contextmanager
def _spark(routing: Routing) -> Iterator[SparkSession]:
    from pipeline.engines.spark.session import spark_session

    with spark_session(routing.spark_master) as spark:  # SparkUnavailable: a user error
        yield spark


def ingest(specs: Sequence[str], out: str, rules: Ruleset | None, routing: Routing, **options: Any) -> IngestSummary:
    """pipeline.ingest.ingest (local) or pipeline.engines.spark.ingest.ingest; `options` are theirs."""
    if routing.engine == SPARK:
        from pipeline.engines.spark.ingest import ingest as spark_ingest

        with _spark(routing) as spark:
            return spark_ingest(spark, list(specs), out, rules, reference=routing.reference, jit=routing.jit, **options)
    from pipeline.ingest import ingest as local_ingest

    return local_ingest(
        specs,
        out,
        rules,
        workers=routing.workers,
        reference=routing.reference,
        jit=routing.jit,
        fast_min_bytes=routing.fast_min_bytes,
        **options,
    )


def audit(
    sources: list[InputSource],
    rules: Ruleset | None,
    routing: Routing,
    *,
    games: set[str] | None = None,
    progress: Callable[..., None] | None = None,
    **options: Any,
) -> AuditReport:
    """pipeline.audit.run.audit_sources (local) or pipeline.engines.spark.audit.audit."""
    if routing.engine == SPARK:
        from pipeline.engines.spark.audit import audit as spark_audit

        for local_only in ("trace", "on_problem", "notice"):
            options.pop(local_only, None)
        with _spark(routing) as spark:
            return spark_audit(spark, sources, rules, games=games, **options)
    from pipeline.audit.run import audit_sources

    return audit_sources(
        sources,
        rules,
        games=games,
        progress=progress,
        reference=routing.reference,
        jit=routing.jit,
        fast_min_bytes=routing.fast_min_bytes,
        **options,
    )


def stats(
    dataset: Dataset, filters: Filters, sections: Sequence[str], routing: Routing, **options: Any
) -> dict[str, Any]:
    """pipeline.stats.compute (DuckDB) or pipeline.engines.spark.stats.compute: the named tables."""
    if routing.engine == SPARK:
        from pipeline.engines.spark.stats import compute as spark_compute

        options.pop("progress", None)
        options.pop("list_rows", None)  # Spark gives the long lists whole: the text output cuts them
        with _spark(routing) as spark:
            return spark_compute(dataset, filters, list(sections), spark=spark, **options)
    from pipeline.stats import compute

    return compute(dataset, filters, list(sections), **options)

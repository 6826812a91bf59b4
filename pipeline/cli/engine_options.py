"""`--engine local|spark` and `--spark-master URL`, shared by ingest, audit and stats.

The local engine is the default and needs nothing more; the Spark engine needs the
`[spark]` extra and Java (docs/spark.md). A missing piece is bad usage: one line saying
what to install, exit 2, before any work starts.
"""

from __future__ import annotations

import enum
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Optional

import typer

from pipeline.cli.common import usage_error

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Engine(str, enum.Enum):
    local = "local"
    spark = "spark"


ENGINE_HELP = "Where to run: local (this machine, the default) or spark (docs/spark.md)."
MASTER_HELP = (
    "--engine spark: the Spark master (default local[*]; spark://HOST:7077, yarn, ...). "
    "SPARK_REMOTE=sc://HOST:15002 in the environment uses Spark Connect instead."
)


def engine_option() -> Engine:
    return typer.Option(Engine.local, "--engine", help=ENGINE_HELP, case_sensitive=False)


def master_option() -> Optional[str]:
    return typer.Option(None, "--spark-master", metavar="URL", help=MASTER_HELP)


def check_engine(engine: Engine, spark_master: str | None) -> None:
    """Usage errors that need no Spark: a master without the Spark engine, Spark missing."""
    if engine is Engine.local:
        if spark_master is not None:
            usage_error("--spark-master is for --engine spark")
        return
    from pipeline.engines.spark.session import SparkUnavailable, check_installed

    try:
        check_installed()
    except SparkUnavailable as exc:
        usage_error(str(exc))


@contextmanager
def spark_or_exit(spark_master: str | None) -> Iterator["SparkSession"]:
    """A Spark session for the command (stopped at the end if this started it); exit 2 with
    the reason when Spark cannot start."""
    from pipeline.engines.spark.session import SparkUnavailable, spark_session

    session = spark_session(spark_master)
    try:
        spark = session.__enter__()
    except SparkUnavailable as exc:
        usage_error(str(exc))
    try:
        yield spark
    except BaseException as exc:
        if not session.__exit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        session.__exit__(None, None, None)

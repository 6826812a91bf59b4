"""`--engine local|spark` and `--spark-master URL`, shared by ingest, audit and stats.

The local engine is the default and needs nothing more; the Spark engine needs the
`[spark]` extra and Java (docs/spark.md). A missing piece is bad usage: one line saying
what to install, exit 2, before any work starts.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Optional

import typer

from pipeline.cli.common import usage_error

if TYPE_CHECKING:
    from pipeline.engines import Routing


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
    from pipeline.engines.spark.session import check_installed

    check_installed()  # SparkUnavailable: a user error, exit 2


def routing(engine: Engine, spark_master: str | None) -> "Routing":
    """The command's routing: its --engine and --spark-master, the rest from the environment."""
    from pipeline.engines import Routing

    return Routing.from_environment(engine.value, spark_master)

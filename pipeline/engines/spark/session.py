"""A SparkSession for farkle-logs, and a clear message when one cannot be had.

Three ways to reach Spark, as a Spark user expects:
- `--spark-master URL` (`local[*]` by default, `local[2]`, `spark://host:7077`, `yarn`, ...);
- `SPARK_REMOTE=sc://host:15002` in the environment: Spark Connect (needs the
  `pyspark[connect]` client packages);
- `spark-submit` of `pipeline/cli/spark_submit.py`: the session spark-submit made is used
  as it is, master and settings included.

The settings this program relies on are set here for every session it makes: UTC session
time zone (timestamps are UTC instants in the dataset), Parquet timestamps written as
INT64 microseconds (not Spark's legacy INT96, which DuckDB and pyarrow read differently),
Arrow transfers on, console progress bars off (they would interleave with our output).

Workers must import this same package: on a local master PYSPARK_PYTHON is set to the
running interpreter (so the workers of `.venv/bin/farkle-logs` use `.venv`); on a cluster
the user's PYSPARK_PYTHON wins, else the same path is assumed to exist on the executors
(docs/spark.md, "Where the package must be installed").
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from pipeline.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
LOG4J = Path(str(files("pipeline.engines.spark") / "log4j2.properties"))  # a real file: Java opens it by URI
INSTALL_HINT = "pip install 'farkle-logs[spark]'"

# Set on the sessions made here (a session spark-submit made keeps its own): Arrow batches
# between the JVM and Python of this many rows both ways (mapInArrow's input, createDataFrame
# of an Arrow table, toArrow), instead of 10,000: the event tables are narrow, and fewer,
# larger batches cost less per row. Python workers are reused across tasks and jobs, so each
# imports the package (and loads the compiled scan) once.
DEFAULT_CONF = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    "spark.python.worker.reuse": "true",
}

# Always set: the results depend on them.
REQUIRED_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.showConsoleProgress": "false",
}


class SparkUnavailable(UserError):
    """pyspark or Java is missing, or the session cannot start: the message says which."""


def check_installed() -> None:
    """Raise SparkUnavailable naming what is missing (pyspark, Java), before any work starts."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable(f"--engine spark needs pyspark, which is not installed: {INSTALL_HINT}") from None
    if os.environ.get("SPARK_REMOTE"):
        return  # Spark Connect: the JVM is the server's, not ours
    if java_executable() is None:
        raise SparkUnavailable(
            "--engine spark needs Java (17 or later) to run Spark: none found on PATH or in JAVA_HOME "
            "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless), or set SPARK_REMOTE to use a "
            "Spark Connect server"
        )


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("java")


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def local_cores(master: str) -> int:
    """Cores of a local master: local -> 1, local[4] -> 4, local[*] -> this machine's."""
    if master == "local":
        return 1
    inside = master[master.find("[") + 1 : master.find("]")].split(",")[0].strip()
    if inside.isdigit():
        return max(1, int(inside))
    return os.cpu_count() or 1


def get_session(master: str | None = None, conf: dict[str, str] | None = None) -> "SparkSession":
    """The active session if there is one (spark-submit, tests), else a new one.

    A session made here gets REQUIRED_CONF, a quiet log4j setup and, on a local master,
    as many shuffle partitions as cores (Spark's 200 are meant for clusters and cost
    seconds of task overhead on small inputs). `conf` adds or overrides settings.
    """
    check_installed()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        _apply_required(active)
        return active
    remote = os.environ.get("SPARK_REMOTE")
    settings = {**DEFAULT_CONF, **REQUIRED_CONF}
    if remote:
        builder = SparkSession.builder.remote(remote)
    else:
        master = master or os.environ.get("MASTER") or DEFAULT_MASTER
        if is_local(master):
            os.environ["PYSPARK_PYTHON"] = sys.executable
            settings["spark.sql.shuffle.partitions"] = str(2 * local_cores(master))
            settings["spark.ui.enabled"] = "false"
        else:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"
        builder = SparkSession.builder.master(master)
    settings.update(conf or {})
    builder = builder.appName("farkle-logs")
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except ImportError as exc:  # Spark Connect without its client packages
        raise SparkUnavailable(
            f"SPARK_REMOTE is set, but the Spark Connect client cannot load ({exc}): pip install 'pyspark[connect]'"
        ) from None
    except Exception as exc:  # the JVM did not start, the master is unreachable
        hint = (
            "" if remote or is_local(master or DEFAULT_MASTER) else "; is the master running and reachable from here?"
        )
        raise SparkUnavailable(f"cannot start Spark (master {master or remote}): {_reason(exc)}{hint}") from None
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _reason(exc: Exception) -> str:
    """The innermost Java exception's message of a Py4J error (its first line only says
    "An error occurred while calling ..."), else the error's first line."""
    java = getattr(exc, "java_exception", None)  # py4j's error: ask the JVM for the root cause
    if java is not None:
        try:
            while java.getCause() is not None:
                java = java.getCause()
            message = (java.getMessage() or "").strip().splitlines()
            return java.getClass().getName() + (f": {message[0]}" if message else "")
        except Exception:  # the JVM is gone: fall back to the text
            pass
    text = str(exc).strip()
    causes = [
        m.group(1)
        for m in re.finditer(r"^\s*(?:Caused by: )?((?:[\w$]+\.)+[\w$]*(?:Exception|Error): .*)$", text, re.MULTILINE)
    ]
    if causes:
        return causes[-1].strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _apply_required(spark: "SparkSession") -> None:
    for key, value in REQUIRED_CONF.items():
        if key.startswith("spark.sql."):
            spark.conf.set(key, value)


@contextmanager
def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> Iterator["SparkSession"]:
    """A session for one command: stopped at the end if this call started it, left running
    if it was there already (spark-submit's, or a test's shared one)."""
    check_installed()
    from pyspark.sql import SparkSession

    existed = SparkSession.getActiveSession() is not None
    spark = get_session(master, conf)
    try:
        yield spark
    finally:
        if not existed:
            spark.stop()

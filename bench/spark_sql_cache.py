"""The Spark SQL cache (pipeline.engines.spark.spark_sql): the models of a default `stats
--engine spark` written as Spark SQL, in fresh interpreters, with the cache empty (cold),
filled by the run before (warm) and off, alternating; no Spark session is started.

    .venv/bin/python bench/spark_sql_cache.py [RUNS]

Prints each case's median seconds (imports included: a run pays them either way) and the
warm run's saving against the cache off.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

CODE = """
from pipeline.engines.spark.spark_sql import spark_sql
from pipeline.stats import Filters, filter_variables, plan_sections
from pipeline.stats.runner import MACROS, SQL_DIR, build_order, load_models
models = load_models()
names = [f"rpt_{n}" for n in plan_sections(None)[0]]
variables = filter_variables(Filters(), [], 150.0)
for name in build_order(names, models):
    if name in models:
        spark_sql(models[name].sql, SQL_DIR / f"{MACROS}.sql", variables)
"""


def timed(cache: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", CODE], env=dict(os.environ, FARKLE_LOGS_CACHE_DIR=cache), check=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    seconds: dict[str, list[float]] = {"cold": [], "warm": [], "off": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            seconds["cold"].append(timed(cache))
            seconds["warm"].append(timed(cache))
        seconds["off"].append(timed("off"))
    median = {case: statistics.median(values) for case, values in seconds.items()}
    for case, value in median.items():
        print(f"{case:5} {value:6.3f} s  ({value / median['off']:.2f}x the cache off)")
    print(f"saved per warm run: {median['off'] - median['warm']:.3f} s")


if __name__ == "__main__":
    main()

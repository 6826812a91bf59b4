"""Spark in local mode for the tests: one session for the whole run (starting one costs
seconds), two cores, two shuffle partitions, small logs.

The tests that need Spark take the `spark` fixture. They skip, with the reason shown by
`-rs`, only when Java is truly absent; a missing pyspark is an error, since `make test`
installs the `[spark]` extra.
"""

from __future__ import annotations

import os

import pytest

from pipeline.engines.spark.session import java_executable

TEST_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    # one session runs every model of sql/ (tests/spark/test_stats_engines.py): its cached
    # tables and broadcasts outgrew the default 1 GiB driver heap under load, and 2 GiB once
    # the dataset held four rulesets (int_choice_values broadcasts each one's policy values)
    "spark.driver.memory": "4g",
}


@pytest.fixture(scope="session")
def spark():
    if java_executable() is None and not os.environ.get("SPARK_REMOTE"):
        pytest.skip("Java is not installed (no java on PATH, no JAVA_HOME): Spark cannot run here")
    from pipeline.engines.spark.session import get_session

    session = get_session("local[2]", conf=TEST_CONF)
    yield session
    session.stop()

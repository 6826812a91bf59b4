"""The replay partitions: `spark_hash_int` is Spark's own hash of an int, so the keys
`partition_keys` picks land every bucket's events in partition `bucket mod partitions`."""

from __future__ import annotations

import pytest

from pipeline.engines.spark.ingest import partition_keys, spark_hash_int


def test_spark_hash_int_is_sparks_hash(spark):
    values = list(range(-50, 200)) + [2**31 - 1, -(2**31), 123456789]
    rows = spark.createDataFrame([(v,) for v in values], "k int").selectExpr("k", "hash(k) as h").collect()
    assert {r["k"]: r["h"] for r in rows} == {v: spark_hash_int(v) for v in values}


@pytest.mark.parametrize("partitions", [1, 2, 3, 7])
def test_each_key_lands_in_its_partition(spark, partitions):
    keys = partition_keys(partitions)
    assert len(set(keys)) == partitions
    df = spark.createDataFrame([(k, p) for p, k in enumerate(keys)], "part int, want int")
    got = df.repartition(partitions, "part").selectExpr("want", "spark_partition_id() as got").collect()
    assert sorted((r["want"], r["got"]) for r in got) == [(p, p) for p in range(partitions)]

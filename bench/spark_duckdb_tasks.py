"""Would DuckDB inside Spark's tasks meet the stats goal where Spark SQL does not? One fact's
counts three ways, alternating, in one process:

    .venv/bin/python bench/spark_duckdb_tasks.py DATASET [--runs 3] [--cores 2]

- DuckDB on the driver: `fct_roll_counts`' counting (rolls and farkles per player and dice
  of the rolls of stored games) over the dataset's rolls files;
- DuckDB in Spark's tasks: the same query, each task over its share of the rolls files
  (`mapInArrow`), Spark adding the partial counts up (the fact is additive);
- Spark SQL: the same query over the same files, as `stats --engine spark` runs its models.

The experiment that led to the engine's way (pipeline/engines/spark/fact_tasks.py, which
computes the additive facts so): docs/spark.md ("stats at ten times the log") quotes it. The
first run of a session pays the Python workers' start and DuckDB's import in the tasks.
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COUNTS = """
select r.player, r.dice_count::integer as dice, count(*) as rolls, count(*) filter (where not r.scored) as farkles
from read_parquet({rolls}) as r semi join read_parquet({games}) as g on r.game_id = g.game_id
group by all
"""
SPARK_COUNTS = """
select r.player, cast(r.dice_count as int) as dice, count(*) as rolls, count_if(not r.scored) as farkles
from rolls as r left semi join games as g on r.game_id = g.game_id
group by 1, 2
"""
SCHEMA = "player string, dice int, rolls long, farkles long"


def snapshot_files(dataset: Path, table: str) -> list[str]:
    """The current snapshot's Parquet files of `table` (the bench reads them as stored)."""
    snapshot = sorted(glob.glob(str(dataset / ".snapshots" / "*")))[-1]
    return sorted(glob.glob(f"{snapshot}/{table}/*.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    rolls, games = snapshot_files(args.dataset, "rolls"), snapshot_files(args.dataset, "games")

    import duckdb
    import pyarrow as pa
    from pyspark.sql import functions as F

    from pipeline.engines.spark.session import get_session

    spark = get_session(f"local[{args.cores}]", {})

    def on_driver() -> pa.Table:
        return duckdb.sql(COUNTS.format(rolls=rolls, games=games)).fetch_arrow_table()

    def in_tasks() -> pa.Table:
        def count(batches: Iterator) -> Iterator:
            import duckdb

            for batch in batches:
                paths = batch.column("path").to_pylist()
                if paths:
                    yield from duckdb.sql(COUNTS.format(rolls=paths, games=games)).fetch_arrow_table().to_batches()

        files = spark.createDataFrame([(f,) for f in rolls], "path string").repartition(args.cores)
        partial = files.mapInArrow(count, SCHEMA)
        summed = partial.groupBy("player", "dice").agg(F.sum("rolls").alias("rolls"), F.sum("farkles").alias("farkles"))
        return summed.toArrow()

    def spark_sql() -> pa.Table:
        spark.read.parquet(*rolls).createOrReplaceTempView("rolls")
        spark.read.parquet(*games).createOrReplaceTempView("games")
        return spark.sql(SPARK_COUNTS).toArrow()

    ways: dict[str, Callable[[], pa.Table]] = {
        "duckdb on the driver": on_driver,
        f"duckdb in {args.cores} spark tasks": in_tasks,
        "spark sql": spark_sql,
    }
    want: list[dict] | None = None
    try:
        for n in range(args.runs):
            for name, way in ways.items():
                started = time.perf_counter()
                rows = sorted(way().to_pylist(), key=lambda row: (row["player"], row["dice"]))
                seconds = time.perf_counter() - started
                same = "" if want is None or rows == want else "  DIFFERENT COUNTS"
                want = rows if want is None else want
                print(f"run {n + 1} {name}: {seconds:.2f} s ({len(rows)} rows){same}", flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

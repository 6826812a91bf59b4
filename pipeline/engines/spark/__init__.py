"""The Spark engine: the same ingest, audit and stats on a cluster (docs/spark.md).

- `session`: a SparkSession for `--spark-master` / `SPARK_REMOTE` / spark-submit, and the
  clear "what is missing" errors when pyspark or Java is not there;
- `transpile`: the DuckDB SQL models of `sql/` rewritten for Spark SQL with sqlglot (one
  source of truth per model);
- `stats`: `farkle-logs stats --engine spark`;
- `text`: log files as numbered raw lines, split across tasks with exact line numbers;
- `ingest`, `audit`: parse per split, group by game, replay with the local engine's
  per-partition function, write the dataset's snapshot.

pyspark is an optional extra (`pip install 'farkle-logs[spark]'`): importing this package
does not import it.
"""

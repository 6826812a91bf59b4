"""The Spark engine: the same ingest, audit and stats on a cluster (docs/spark.md).

- `session`: a SparkSession for `--spark-master` / `SPARK_REMOTE` / spark-submit, and the
  clear "what is missing" errors when pyspark or Java is not there;
- `transpile`: the DuckDB SQL models of `sql/` rewritten for Spark SQL with sqlglot (one
  source of truth per model);
- `stats`: `farkle-logs stats --engine spark`;
- `ingest`: `ingest --engine spark`, the local ingest with its parse and replay stages as
  Spark jobs (whole files or byte ranges with exact line numbers, routed by game, replayed
  by `replay_partition`);
- `audit`: `audit --engine spark`, the findings of those jobs;
- `submit`: the entry point for `spark-submit`.

pyspark is an optional extra (`pip install 'farkle-logs[spark]'`): importing this package
does not import it.
"""

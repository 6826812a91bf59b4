"""The `spark-submit` entry point: `spark-submit [spark options] spark_submit.py COMMAND ...`.

Runs the farkle-logs command line inside the session spark-submit made (its master,
resources and settings are used as they are; `--engine spark` finds it as the active
session), e.g.

    spark-submit --master yarn --deploy-mode client \\
        "$(python -c 'import pipeline.cli.spark_submit as m; print(m.__file__)')" \\
        ingest /shared/logs --out /shared/dataset --engine spark
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from pyspark.sql import SparkSession

    SparkSession.builder.appName("farkle-logs").getOrCreate()  # spark-submit's settings
    from pipeline.cli.entry import main as cli

    sys.argv = ["farkle-logs", *(sys.argv[1:] if argv is None else argv)]
    cli()


if __name__ == "__main__":
    main()

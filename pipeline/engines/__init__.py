"""Where the work runs: `local` (this process and its workers, the default) or `spark`.

The commands take `--engine local|spark`; both engines read the same logs with the same
reader, replay with the same engine and run the same SQL models, and write the same
dataset. `pipeline.engines.spark` holds everything Spark-specific; nothing outside it
imports pyspark.
"""

from __future__ import annotations

ENGINES = ("local", "spark")

"""A/B of two checkouts' CLIs (and DuckDB's bare conversion), alternating, in one script.

    .venv/bin/python bench/ab.py duckdb,/path/to/old/checkout,. ingest 3
    .venv/bin/python bench/ab.py /path/to/old/checkout,. audit 5
    .venv/bin/python bench/ab.py duckdb,export:/tmp/main,. audit 5 /work/benchdata/sim3000-s12.jsonl
    .venv/bin/python bench/ab.py /path/to/old/checkout,. stats 5 DATASET   # the default sections
    .venv/bin/python bench/ab.py duckdb,/path/to/old/checkout,. decisions-quality 3 DATASET [LOG]

Each checkout runs its own `.venv/bin/farkle-logs` (an editable install imports its own
tree, and so do the worker processes it spawns); `export:DIR` runs this checkout's CLI with
PYTHONPATH=DIR, for a tree exported without a virtualenv (`git archive main pipeline sql`,
its sql/ moved to pipeline/sql). The log is the 2.9 M-event benchmark log unless named; prints
the median wall and CPU seconds (children included) per checkout. For a change's effect on
a busy machine, compare CPU more than wall. Every issue-12 figure against the baseline is
bench/ratios.py; this is for "did this step help".
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = "/work/benchdata/sim9000.jsonl"
TWO_PLAYER_LOG = "/work/benchdata/sim2p13500.jsonl"  # bench/race.py's: decisions-quality's DATASET ingests it
DATASET_COMMANDS = ("stats", "decisions-quality")  # they read a DATASET; duckdb converts the LOG it came from


def command(tree: str, what: str, out: str, log: str = LOG, source: str = LOG) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if tree == "duckdb":
        log = source if what in DATASET_COMMANDS else log
        sql = f"COPY (SELECT * FROM read_json('{log}')) TO '{out}.parquet' (FORMAT parquet, COMPRESSION zstd)"
        return [sys.executable, "-c", f"import duckdb; duckdb.sql({sql!r})"], env
    if tree.startswith("export:"):
        env["PYTHONPATH"] = tree.removeprefix("export:")
        cli = str(Path(sys.executable).parent / "farkle-logs")
    else:
        cli = str(Path(tree).resolve() / ".venv" / "bin" / "farkle-logs")
    if what == "stats":  # an ingested dataset (the 4th argument) both trees can read, every default section
        return [cli, "stats", log, "--format", "json"], env
    if what == "decisions-quality":
        return [cli, "stats", log, "--section", "decisions-quality", "--format", "json"], env
    return ([cli, "ingest", log, "--out", out] if what == "ingest" else [cli, "audit", log, "--format", "json"]), env


def main() -> None:
    trees = sys.argv[1].split(",")
    what = sys.argv[2] if len(sys.argv) > 2 else "ingest"
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    log = sys.argv[4] if len(sys.argv) > 4 else LOG  # for stats: the DATASET
    if what in DATASET_COMMANDS and len(sys.argv) <= 4:
        sys.exit(f"{what} needs a DATASET (a directory written by farkle-logs ingest)")
    source = sys.argv[5] if len(sys.argv) > 5 else (TWO_PLAYER_LOG if what == "decisions-quality" else LOG)
    work = Path(tempfile.mkdtemp(prefix="farkle-ab-"))
    times: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
    try:
        for _ in range(runs):
            for i, tree in enumerate(trees):
                out = str(work / f"out-{i}")
                shutil.rmtree(out, ignore_errors=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                cmd, env = command(tree, what, out, log, source)
                subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                times[tree].append((time.perf_counter() - start, cpu))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{what} {log}, median of {runs} alternating runs, load average {os.getloadavg()[0]:.1f}")
    for tree, runs_ in times.items():
        wall = statistics.median(w for w, _ in runs_)
        cpu = statistics.median(c for _, c in runs_)
        print(f"{tree:40s} wall {wall:6.2f} s  cpu {cpu:6.2f} s")


if __name__ == "__main__":
    main()

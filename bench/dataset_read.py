"""What format 2's "read the manifest's file lists, never a glob" costs readers, and what
`dataset check` costs, against a glob over the same files.

    .venv/bin/python bench/dataset_read.py [--games 3000] [--ingests 6] [--runs 7]

Builds a dataset by `--ingests` incremental ingests of simulated games (several files per
table, as a real dataset has), then alternates, `--runs` times each:

- baseline: DuckDB over a glob of the convenience links (`DATASET/<table>/*.parquet`), the
  way format 1 read the tables: a bust-rate group-by over `rolls` plus a count of `events`;
- listed: the same queries over `open_dataset(...).duckdb_paths(table)` (pointer, manifest,
  one stat per listed file, glob characters escaped), the way every reader reads now;
- open: `open_dataset` alone;
- check: `check_dataset` (every footer and schema), and `--full` (every row).

Prints medians and each as a ratio to the baseline. The machine is shared: alternate runs,
read the medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from pipeline.dataset.layout import open_dataset  # noqa: E402
from pipeline.dataset.verify import check_dataset  # noqa: E402
from pipeline.ingest import ingest  # noqa: E402

QUERY = "select dice_count, count(*), avg(case when scored then 0 else 1 end) from read_parquet($rolls) group by 1"
COUNT = "select count(*) from read_parquet($events)"


def build(root: Path, games: int, ingests: int) -> Path:
    logs = root / "logs"
    logs.mkdir()
    for i in range(ingests):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pipeline.cli",
                "simulate",
                "-n",
                str(games // ingests),
                "-s",
                str(i + 1),
                "-o",
                str(logs / f"part{i}.jsonl"),
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    ds = root / "ds"
    for i in range(ingests):
        ingest([str(logs / f"part{i}.jsonl")], ds)
    return ds


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--ingests", type=int, default=6)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="farkle-dataset-read-") as tmp:
        ds = build(Path(tmp), args.games, args.ingests)
        con = duckdb.connect()

        def baseline() -> None:
            con.execute(QUERY, {"rolls": f"{ds}/rolls/*.parquet"}).fetchall()
            con.execute(COUNT, {"events": f"{ds}/events/*.parquet"}).fetchall()

        def listed() -> None:
            d = open_dataset(ds)
            con.execute(QUERY, {"rolls": d.duckdb_paths("rolls")}).fetchall()
            con.execute(COUNT, {"events": d.duckdb_paths("events")}).fetchall()

        cases = {
            "baseline (glob)": baseline,
            "listed (manifest)": listed,
            "open_dataset": lambda: open_dataset(ds),
            "dataset check": lambda: check_dataset(ds),
            "dataset check --full": lambda: check_dataset(ds, full=True),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, fn in cases.items():
                times[name].append(timed(fn))
        d = open_dataset(ds)
        events = con.execute(COUNT, {"events": d.duckdb_paths("events")}).fetchone()[0]
        files = sum(len(d.manifest["tables"][t]) for t in d.manifest["tables"])
        print(f"dataset: {events:,} events, {files} files in {args.ingests} ingests; {args.runs} runs each, medians")
        base = statistics.median(times["baseline (glob)"])
        for name, values in times.items():
            median = statistics.median(values)
            print(f"{name:<22} {median * 1000:9.1f} ms   {median / base:6.2f} x baseline")


if __name__ == "__main__":
    main()

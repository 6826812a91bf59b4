"""`ingest --engine spark` at 1 and 2 local cores against the DuckDB baseline, in one script.

Usage: .venv/bin/python bench/spark.py [--events 300000] [--runs 1] [--seed 1] [--dir DIR]

On one simulated log (bench/ingest.py's simulation), alternating, --runs times each, every
run a fresh subprocess:
  (b) the baseline: DuckDB's COPY (SELECT * FROM read_json(log)) TO parquet (zstd);
  (l) `farkle-logs ingest LOG --out DS` (the local engine);
  (s1) `farkle-logs ingest LOG --out DS --engine spark --spark-master local[1]`;
  (s2) the same with local[2].
Prints per command the median wall seconds (Spark's JVM start included), the ingest's own
seconds from its JSON summary (session start excluded), events/s by each, and the ratio of
wall seconds to the baseline's. The machines are shared: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import DUCKDB_SCRIPT, simulate, timed  # noqa: E402  (bench/ingest.py)

CLI = [sys.executable, "-c", "from pipeline.cli.main import app; app()"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir")
    args = ap.parse_args()
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-spark-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "log.jsonl"
    events = simulate(log, args.events, args.seed) if not log.exists() else sum(1 for _ in open(log, "rb"))
    size = log.stat().st_size
    print(f"log: {events:,} lines, {size / 2**20:.1f} MiB")
    commands = {
        "baseline (duckdb)": lambda n: [sys.executable, "-c", DUCKDB_SCRIPT, str(log), str(work / f"b{n}.parquet")],
        "local": lambda n: CLI + ["ingest", str(log), "--out", str(work / f"l{n}"), "-f", "json"],
        "spark local[1]": lambda n: (
            CLI
            + [
                "ingest",
                str(log),
                "--out",
                str(work / f"s1-{n}"),
                "-f",
                "json",
                "--engine",
                "spark",
                "--spark-master",
                "local[1]",
            ]
        ),
        "spark local[2]": lambda n: (
            CLI
            + [
                "ingest",
                str(log),
                "--out",
                str(work / f"s2-{n}"),
                "-f",
                "json",
                "--engine",
                "spark",
                "--spark-master",
                "local[2]",
            ]
        ),
    }
    results: dict[str, list[dict]] = {name: [] for name in commands}
    for n in range(args.runs):
        for name, make in commands.items():
            r = timed(make(n))
            r["seconds"] = json.loads(r["stdout"])["seconds"] if r["stdout"].strip().startswith("{") else r["wall"]
            results[name].append(r)
            for p in work.glob(f"*{n}*"):
                if p != log:
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink()
    base = statistics.median(r["wall"] for r in results["baseline (duckdb)"])
    print(f"{'command':<18} {'wall s':>8} {'ingest s':>9} {'events/s':>10} {'ev/s ingest':>12} {'x baseline':>11}")
    for name, runs in results.items():
        wall = statistics.median(r["wall"] for r in runs)
        own = statistics.median(r["seconds"] for r in runs)
        print(
            f"{name:<18} {wall:>8.1f} {own:>9.1f} {events / wall:>10,.0f} {events / own:>12,.0f} {wall / base:>11.1f}"
        )
    if not args.dir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

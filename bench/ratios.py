"""Every performance goal of issue 12 as a ratio against DuckDB's bare conversion, in one run.

Usage: .venv/bin/python bench/ratios.py [--log FILE] [--runs 3] [--before SRC] [--section ingest]

The baseline is DuckDB alone: COPY (SELECT * FROM read_json(LOG)) TO x.parquet
(FORMAT parquet, COMPRESSION zstd). Each measured command runs in a fresh subprocess,
alternating with the baseline run for run, so machine noise hits both alike; the figures
are medians. `--before SRC` also times the same command from another source tree (say an
export of main: `git archive main | tar -x -C /tmp/main`), for before/after tables.

Sections are functions `<name>(ctx) -> list[Row]` in SECTIONS; other areas add theirs
(stats, report, start-up) the same way.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import timed  # noqa: E402  (bench/ingest.py: wall, CPU and peak RSS of a subprocess)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LOG = Path("/work/benchdata/sim9000.jsonl")  # simulate --games 9000 --players 3 --seed 11
DUCKDB = """
import sys, duckdb
duckdb.sql(f"COPY (SELECT * FROM read_json('{sys.argv[1]}')) TO '{sys.argv[2]}' (FORMAT parquet, COMPRESSION zstd)")
"""


@dataclass
class Context:
    log: Path
    work: Path
    runs: int
    before: Path | None


@dataclass
class Row:
    name: str
    runs: list[dict]
    baseline: list[dict]

    def ratio(self) -> float:
        return statistics.median(r["wall"] for r in self.runs) / statistics.median(b["wall"] for b in self.baseline)


def baseline(ctx: Context) -> dict:
    out = ctx.work / "baseline.parquet"
    result = timed([sys.executable, "-c", DUCKDB, str(ctx.log), str(out)])
    out.unlink(missing_ok=True)
    return result


def _cli(src: Path | None) -> tuple[list[str], dict]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return [sys.executable, "-c", "from pipeline.cli.main import app; app()"], env


def ingest(ctx: Context) -> list[Row]:
    """`farkle-logs ingest LOG --out fresh` (full validation, replay, every table)."""
    variants = [("ingest", None)] + ([("ingest (before)", ctx.before)] if ctx.before else [])
    rows = [Row(name, [], []) for name, _ in variants]
    for _ in range(ctx.runs):
        for row, (_, src) in zip(rows, variants):
            ds = ctx.work / "ds"
            shutil.rmtree(ds, ignore_errors=True)
            cmd, env = _cli(src)
            row.runs.append(timed(cmd + ["ingest", str(ctx.log), "--out", str(ds), "--format", "json"], env=env))
            shutil.rmtree(ds, ignore_errors=True)
            row.baseline.append(baseline(ctx))
    return rows


SECTIONS = {"ingest": ingest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="another source tree to time too")
    parser.add_argument("--section", action="append", choices=sorted(SECTIONS), default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="farkle-ratios-"))
    ctx = Context(args.log, work, args.runs, args.before)
    try:
        print(f"log {args.log} ({args.log.stat().st_size / 1e6:,.0f} MB), {args.runs} runs each, "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        print(f"{'':22} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10} {'all procs':>10} {'baseline s':>11} {'ratio':>7}")
        for name in args.section or list(SECTIONS):
            for row in SECTIONS[name](ctx):
                med = lambda key, runs=row.runs: statistics.median(r[key] for r in runs)  # noqa: E731
                base = statistics.median(b["wall"] for b in row.baseline)
                print(f"{row.name:22} {med('wall'):8.2f} {med('cpu'):8.2f} {med('rss_mib'):6.0f} MiB "
                      f"{med('tree_rss_mib'):6.0f} MiB {base:11.2f} {row.ratio():6.2f}x", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

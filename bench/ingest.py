"""Ingest against the DuckDB baseline, on the same simulated log, in one script.

Usage: .venv/bin/python bench/ingest.py [--events 2000000] [--runs 3] [--seed 1] [--dir DIR] [--gz]

1. Simulates about --events events (`farkle-logs simulate`, or the same library call if
   the command is not there) into DIR/log.jsonl (DIR: a temporary directory by default).
2. Times, alternating, --runs times each, every run in a fresh subprocess so its peak RSS
   is its own (os.wait4):
   (a) `farkle-logs ingest DIR/log.jsonl --out DIR/ds-N` (full validation and replay,
       all eight tables, a fresh dataset each run);
   (b) DuckDB alone: COPY (SELECT * FROM read_json(log)) TO 'x.parquet'
       (FORMAT parquet, COMPRESSION zstd).
3. Prints the medians: wall seconds, CPU seconds (children included), events/s, peak RSS
   (the largest process, as the kernel counts it) and the peak of the summed RSS of the
   whole process tree (sampled every 50 ms: ingest runs two processes), and the ratio a/b.

The machines are noisy (other jobs share the two cores): compare ratios from one run of
this script, not absolute numbers across days. `--events 20000000` checks peak RSS at
20 M events (about 2.3 GB of JSONL; ~10 minutes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DUCKDB_SCRIPT = """
import sys, duckdb
src, dst = sys.argv[1], sys.argv[2]
duckdb.sql(f"COPY (SELECT * FROM read_json('{src}')) TO '{dst}' (FORMAT parquet, COMPRESSION zstd)")
"""


def simulate(path: Path, events: int, seed: int) -> int:
    """About `events` events: the games needed are estimated from a 300-game sample."""
    sample = path.with_name("sample-" + path.name)
    _simulate(sample, 300, seed + 1)
    per_game = max(1.0, _lines(sample) / 300)
    sample.unlink()
    _simulate(path, max(1, math.ceil(events / per_game)), seed)
    return _lines(path)


def _simulate(path: Path, games: int, seed: int) -> None:
    cli = [sys.executable, "-c", "from pipeline.cli.main import app; app()"]
    has_cmd = subprocess.run(cli + ["simulate", "--help"], capture_output=True, cwd=ROOT).returncode == 0
    if has_cmd:
        subprocess.run(
            cli + ["simulate", "--games", str(games), "--seed", str(seed), "--out", str(path)],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    else:
        from pipeline.simulate import simulate as run

        run(str(path), games, seed)


def _lines(path: Path) -> int:
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants, from /proc (Linux)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return total


def timed(cmd: list[str]) -> dict:
    """Wall and CPU seconds of one subprocess (and its children), its peak RSS (largest
    process, from the kernel) and the peak of the summed RSS of its process tree (sampled)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.decode()}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "tree_rss_mib": peak[0] / 2**20,
        "stdout": out.decode(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (kept); default: a temporary one")
    parser.add_argument("--gz", action="store_true", help="simulate a .jsonl.gz instead")
    args = parser.parse_args()

    work = args.dir or Path(tempfile.mkdtemp(prefix="farkle-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / ("log.jsonl.gz" if args.gz else "log.jsonl")
    try:
        t = time.perf_counter()
        lines = simulate(log, args.events, args.seed)
        print(
            f"simulated {lines:,} lines, {log.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - t:.1f} s: {log}"
        )
        ingest_runs, duck_runs = [], []
        for run in range(args.runs):
            ds = work / f"ds-{run}"
            shutil.rmtree(ds, ignore_errors=True)
            a = timed(
                [
                    sys.executable,
                    "-c",
                    "from pipeline.cli.main import app; app()",
                    "ingest",
                    str(log),
                    "--out",
                    str(ds),
                    "--format",
                    "json",
                ]
            )
            summary = json.loads(a["stdout"])
            a["events"] = summary["events"]
            ingest_runs.append(a)
            shutil.rmtree(ds, ignore_errors=True)
            parquet = work / "duckdb.parquet"
            b = timed([sys.executable, "-c", DUCKDB_SCRIPT, str(log), str(parquet)])
            duck_runs.append(b)
            parquet.unlink(missing_ok=True)
            print(
                f"run {run + 1}: ingest {a['wall']:.2f} s ({a['rss_mib']:.0f} MiB), "
                f"duckdb {b['wall']:.2f} s ({b['rss_mib']:.0f} MiB)",
                flush=True,
            )
        events = ingest_runs[0]["events"]

        def med(runs, key):
            return statistics.median(r[key] for r in runs)

        rows = [("(a) farkle-logs ingest", ingest_runs), ("(b) duckdb read_json → parquet", duck_runs)]
        print(f"\n{events:,} events, median of {args.runs} runs, {os.cpu_count()} cores")
        print(f"{'':34} {'wall s':>8} {'cpu s':>8} {'events/s':>12} {'peak RSS':>10} {'all procs':>10}")
        for name, runs in rows:
            wall = med(runs, "wall")
            print(
                f"{name:34} {wall:8.2f} {med(runs, 'cpu'):8.2f} {events / wall:12,.0f} "
                f"{med(runs, 'rss_mib'):6.0f} MiB {med(runs, 'tree_rss_mib'):6.0f} MiB"
            )
        ratio = med(ingest_runs, "wall") / med(duck_runs, "wall")
        cpu_ratio = med(ingest_runs, "cpu") / med(duck_runs, "cpu")
        print(f"ratio (a)/(b): {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu (target: <= 1.5x wall)")
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The first run after a fresh install: `ingest` and `audit` of sample_logs/ with empty caches.

    .venv/bin/python bench/first_run.py                  # 3 rounds
    .venv/bin/python bench/first_run.py --compiled       # also the compiled paths' first run

A fresh install has compiled neither numba's machine code nor Python's bytecode for the
package. Each "first" run here gets both caches empty: the package's sources are copied
(without __pycache__) to a new folder that PYTHONPATH puts ahead of the installed one, and
NUMBA_CACHE_DIR names a new, empty folder (numba writes its cache there instead of next to
the sources, so the bench neither uses nor disturbs the install's own). "again" runs the
same command with the same two folders, now warm. Rounds alternate (first, again, for each
command) so the machine's load hits all alike; the table shows medians, wall and CPU
(process and children).

| figure | goal (issue 24) |
|---|---|
| `ingest sample_logs/ --out NEW`, first run | <= 3 s wall |
| `audit sample_logs/`, first run | as fast as again |
| with --compiled: the same ingest forced onto the compiled paths (FARKLE_LOGS_REPLAY=fast), first run | (what every first ingest cost before: the compile) |
| with --compiled: `farkle-logs warm`, first run | (what `make demo`'s install adds) |
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
GOAL_SECONDS = 3.0


def fresh_install(work: Path) -> dict[str, str]:
    """The environment of a first run: the package's sources without bytecode, an empty
    numba cache."""
    src = work / "src"
    shutil.copytree(ROOT / "pipeline", src / "pipeline", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(ROOT / "sql", src / "pipeline" / "sql", ignore=shutil.ignore_patterns("__pycache__"))
    (work / "numba").mkdir()
    return {**os.environ, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(work / "numba")}


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its children) of one run; exit 0 or 1."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr.decode()[-3000:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="rounds (default: %(default)s)")
    parser.add_argument(
        "--compiled", action="store_true", help="also the compiled paths' first run (tens of seconds each)"
    )
    args = parser.parse_args()
    cli = [str(Path(sys.executable).parent / "farkle-logs")]
    figures: dict[str, list[tuple[float, float]]] = {}
    commands = {
        "ingest": lambda work: cli + ["ingest", str(SAMPLES), "--out", str(work / f"ds-{time.monotonic_ns()}")],
        "audit": lambda work: cli + ["audit", str(SAMPLES)],
    }
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for name, command in commands.items():
            with tempfile.TemporaryDirectory(prefix="farkle-first-run-") as tmp:
                work = Path(tmp)
                env = fresh_install(work)
                figures.setdefault(f"{name}, first run", []).append(measure(command(work), env, work))
                figures.setdefault(f"{name}, again", []).append(measure(command(work), env, work))
        if args.compiled:
            with tempfile.TemporaryDirectory(prefix="farkle-first-run-") as tmp:
                work = Path(tmp)
                env = {**fresh_install(work), "FARKLE_LOGS_REPLAY": "fast"}
                figures.setdefault("ingest on the compiled paths, first run", []).append(
                    measure(commands["ingest"](work), env, work)
                )
                figures.setdefault("ingest on the compiled paths, again", []).append(
                    measure(commands["ingest"](work), env, work)
                )
            with tempfile.TemporaryDirectory(prefix="farkle-first-run-") as tmp:
                work = Path(tmp)
                figures.setdefault("warm, first run", []).append(measure(cli + ["warm"], fresh_install(work), work))
    load_after = os.getloadavg()
    print(
        f"sample_logs/ ({sum(p.stat().st_size for p in SAMPLES.iterdir()):,} bytes); median of {args.runs} "
        f"alternating rounds, {os.cpu_count()} cores, load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after"
    )
    print(f"{'figure':42} {'wall s':>7} {'cpu s':>7} {'x again':>8}  goal")
    for name, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        again = figures.get(name.replace("first run", "again"))
        ratio = f"{wall / statistics.median(w for w, _ in again):7.2f}x" if again and "first" in name else ""
        goal = ""
        if name == "ingest, first run":
            goal = f"<= {GOAL_SECONDS:g} s: " + ("met" if wall <= GOAL_SECONDS else "NOT met")
        print(f"{name:42} {wall:7.2f} {cpu:7.2f} {ratio:>8}  {goal}")


if __name__ == "__main__":
    main()

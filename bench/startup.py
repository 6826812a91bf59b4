"""How long a user waits for the quickest commands, against a bare Python start.

Usage: .venv/bin/python bench/startup.py [--runs 15]

Times, in interleaved rounds (so machine noise hits every command alike), the wall time of
  python     `python -c pass` (the floor: the interpreter and site start-up)
  typer      `python -c "import typer"` (the floor of any Typer app)
  help       `farkle-logs --help`
  score      `farkle-logs score 1 5`
  audit -h   `farkle-logs audit --help`
and prints each one's median and best in seconds, and its median as a ratio to `python`.
The goal (issue 12) is help and score at most 0.25 s; the ratios are what to compare
between machines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
CLI = str(BIN / "farkle-logs")
COMMANDS = {
    "python": [sys.executable, "-c", "pass"],
    "typer": [sys.executable, "-c", "import typer"],
    "help": [CLI, "--help"],
    "score": [CLI, "score", "1", "5"],
    "audit -h": [CLI, "audit", "--help"],
}


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env={**os.environ, "COLUMNS": "80"}
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    for argv in COMMANDS.values():  # warm the page cache and the .pyc files
        wall(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, argv in COMMANDS.items():
            times[name].append(wall(argv))
    floor = statistics.median(times["python"])
    print(f"{'command':<10} {'median s':>9} {'best s':>8} {'x python':>9}   ({args.runs} interleaved runs)")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"{name:<10} {median:>9.3f} {min(runs):>8.3f} {median / floor:>9.2f}")


if __name__ == "__main__":
    main()

"""Audit's text output against its JSONL output, on a log where every game has a finding.

    .venv/bin/python bench/audit_text.py [--games 20000] [--runs 3] [--log FILE]

Simulates `--games` games with one planted error each (`simulate --inject 1`) unless --log is
given, then runs, alternately, `farkle-logs audit LOG -f jsonl > FILE` and `farkle-logs audit
LOG > FILE` (text, written to a file as a referee keeps it), each a fresh process, and prints
the medians and the ratio text / jsonl, wall and CPU. The goal (issue 25): text <= 3x jsonl.
Both commands replay the same games; the difference is rendering a section per game (its
findings, the turns involved, the result). Runs alternate because the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 3.0


def measure(cmd: list[str], out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (children included) of `cmd`, its stdout written to `out`."""
    started = time.perf_counter()
    with open(out, "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.PIPE)
        err = proc.stderr.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode(errors='replace')[-2000:]}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--log", type=Path, help="a log to audit (default: simulated, one error per game)")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "pipeline.cli"]
    with tempfile.TemporaryDirectory(prefix="farkle-audit-text-") as work:
        log = args.log
        if log is None:
            log = Path(work) / "injected.jsonl"
            subprocess.run(
                cli + ["simulate", "--games", str(args.games), "--inject", "1", "--seed", "25", "-o", str(log), "-q"],
                check=True,
                cwd=ROOT,
            )
        runs: dict[str, list[tuple[float, float]]] = {"jsonl": [], "text": []}
        sizes = {}
        for r in range(args.runs):
            for kind, fmt in (("jsonl", ["-f", "jsonl"]), ("text", [])):
                out = Path(work) / f"out.{kind}"
                runs[kind].append(measure(cli + ["audit", str(log), *fmt], out))
                sizes[kind] = out.stat().st_size
                wall, cpu = runs[kind][-1]
                print(f"  round {r + 1} {kind:5s} {wall:7.2f} s  cpu {cpu:7.2f} s", file=sys.stderr, flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    print(f"log {log} ({args.games if args.log is None else '?'} games); median of {args.runs} alternating runs")
    for kind in ("jsonl", "text"):
        wall, cpu = med[kind]
        print(f"{kind:6s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  output {sizes[kind] / 2**20:7.1f} MiB")
    ratio, cpu_ratio = med["text"][0] / med["jsonl"][0], med["text"][1] / med["jsonl"][1]
    met = "met" if ratio <= GOAL else "NOT met"
    print(f"text / jsonl: {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu (goal <= {GOAL}x: {met})")


if __name__ == "__main__":
    main()

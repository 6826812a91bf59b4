"""Peak memory and time of ingest and audit on small gzip files that inflate to millions of
lines or games (issue 25): each must stay within 1 GiB, and blank lines must cost what
reading them costs.

    .venv/bin/python bench/memory.py                      # every case, one and two processes
    .venv/bin/python bench/memory.py --only blank16 games --workers 1

The cases (generated into a temporary directory, a few MB of gzip in all):

| case | what | gzip |
|---|---|---|
| braces | 3,000,000 lines of `{}` (each a bad_event) | 9 KB |
| games | 1,000,000 one-line games (a game_start each, so 1 M game_incomplete findings) | 2.6 MB |
| blank16 | 16 MiB of blank lines | 16 KB |
| blank512 | 512 MiB of blank lines | 0.5 MB |

Each command runs as a user types it, in a fresh process (bench/ratios.py's `measure`: peak
of the process tree's summed resident memory, sampled, and the kernel's peak of the largest
process). `--workers 2` sets FARKLE_LOGS_WORKERS=2: ingest then parses and replays in two
processes, as it does by default for inputs of 32 MiB or more. The baseline `read` is
decompressing the same file in Python (1 MiB reads): what reading the lines costs at least.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ratios import GIB, measure  # noqa: E402  (bench/ is not a package)

CASES = ("braces", "games", "blank16", "blank512")
READ_SCRIPT = """
import sys, zlib
d = zlib.decompressobj(wbits=31)
with open(sys.argv[1], 'rb') as f:
    while chunk := f.read(1 << 20):
        d.decompress(chunk)
"""


def write_case(name: str, path: Path) -> None:
    with gzip.open(path, "wb", compresslevel=6) as f:
        if name == "braces":
            for _ in range(30):
                f.write(b"{}\n" * 100_000)
        elif name == "games":
            for i in range(1_000_000):
                f.write(b'{"game_id":"g%d","seq":1,"type":"game_start","players":["ana","bo"]}\n' % i)
        else:
            size = 16 if name == "blank16" else 512
            for _ in range(size):
                f.write(b"\n" * (1 << 20))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2], help="ingest processes (default: 1 2)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "pipeline.cli"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="farkle-memory-") as work:
        for name in args.only:
            log = Path(work) / f"{name}.jsonl.gz"
            write_case(name, log)
            read = statistics.median(
                measure([sys.executable, "-c", READ_SCRIPT, str(log)]).wall for _ in range(args.runs)
            )
            commands = [("audit", cli + ["audit", str(log), "-f", "jsonl"], None)]
            for workers in args.workers:
                commands.append((f"ingest x{workers}", cli + ["ingest", str(log), "--out", "OUT"], workers))
            for label, command, workers in commands:
                runs = []
                for _ in range(args.runs):
                    out = Path(work) / "ds"
                    cmd = [str(out) if part == "OUT" else part for part in command]
                    if workers is not None:
                        os.environ["FARKLE_LOGS_WORKERS"] = str(workers)
                    try:
                        runs.append(measure(cmd))
                    finally:
                        os.environ.pop("FARKLE_LOGS_WORKERS", None)
                        shutil.rmtree(out, ignore_errors=True)
                wall = statistics.median(r.wall for r in runs)
                cpu = statistics.median(r.cpu for r in runs)
                peak = max(r.tree_rss for r in runs)
                rows.append((name, label, wall, cpu, peak, wall / read))
                print(
                    f"  {name:9s} {label:10s} {wall:7.2f} s  cpu {cpu:7.2f} s  {peak / 2**20:6.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
            rows.append((name, "read", read, None, None, 1.0))
    print(f"{'case':10s} {'command':11s} {'wall s':>8s} {'cpu s':>8s} {'peak MiB':>9s} {'x read':>7s}  <= 1 GiB")
    for name, label, wall, cpu, peak, ratio in rows:
        cpu_text = f"{cpu:8.2f}" if cpu is not None else " " * 8
        peak_text = f"{peak / 2**20:9.0f}" if peak is not None else " " * 9
        met = "" if peak is None else ("met" if peak <= GIB else "NOT met")
        print(f"{name:10s} {label:11s} {wall:8.2f} {cpu_text} {peak_text} {ratio:6.1f}x  {met}")


if __name__ == "__main__":
    main()

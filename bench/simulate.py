"""How fast `simulate` writes games, against merely writing the same number of lines.

Runs, in one process so the ratios are fair whatever the machine:

  simulate     bots play N games, events encoded and written to a .jsonl file
  simulate.gz  the same, gzip-compressed (.jsonl.gz)
  8 tables     the same games, 8 played at once, their lines interleaved by time
  write only   the baseline: write as many pre-built lines (copies of a real game's lines)
               to a file, no game played, no encoding

and prints events/s for each, the ratio to the baseline, and the process's peak memory
(the output is streamed, so it must not grow with N). Target: >= 200,000 events/s.

    .venv/bin/python bench/simulate.py                 # 6,250 games, about 2 M events
    .venv/bin/python bench/simulate.py --games 500 --repeat 1
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tempfile
import time

from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from pipeline.simulate.writer import encode_lines
from pipeline.simulate.game import game_rng, play_game, seat_players


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=6250)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the best time of each is shown")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rules", default="standard")
    ap.add_argument("--no-gz", action="store_true", help="skip the gzip run")
    args = ap.parse_args(argv)
    rules = Ruleset.builtin(args.rules) if not args.rules.startswith("{") else Ruleset.from_json_text(args.rules)

    # Baseline lines: one real game's encoded lines, repeated to the same count.
    rng = game_rng(args.seed, 0)
    events, _ = play_game("bench", rng, seat_players(rng, 2, 4), rules, 0)
    block = encode_lines(events)
    per_block = len(events)

    with tempfile.TemporaryDirectory() as tmp:
        plain, gz, base = (os.path.join(tmp, n) for n in ("sim.jsonl", "sim.jsonl.gz", "base.jsonl"))
        best: dict[str, float] = {}
        counts: dict[str, int] = {}
        sizes: dict[str, int] = {}

        def run_sim(path: str, key: str, tables: int = 1) -> None:
            gc.collect()
            t = time.perf_counter()
            summary = simulate(path, args.games, args.seed, rules=[rules], tables=tables)
            dt = time.perf_counter() - t
            best[key] = min(best.get(key, float("inf")), dt)
            counts[key] = summary.events
            sizes[key] = os.path.getsize(path)

        def run_base() -> None:
            n = counts["simulate"]
            blocks, rest = divmod(n, per_block)
            tail = b"".join(block.splitlines(keepends=True)[:rest])
            gc.collect()
            t = time.perf_counter()
            with open(base, "wb") as f:
                chunk = block * max(1, (1 << 20) // len(block))
                per_chunk = per_block * max(1, (1 << 20) // len(block))
                written = 0
                while written + per_chunk <= blocks * per_block:
                    f.write(chunk)
                    written += per_chunk
                while written < blocks * per_block:
                    f.write(block)
                    written += per_block
                f.write(tail)
            dt = time.perf_counter() - t
            best["write only"] = min(best.get("write only", float("inf")), dt)
            counts["write only"] = n
            sizes["write only"] = os.path.getsize(base)

        for _ in range(args.repeat):
            run_sim(plain, "simulate")
            run_base()
            run_sim(plain, "8 tables", tables=8)
            if not args.no_gz:
                run_sim(gz, "simulate.gz")

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.games:,} games, {counts['simulate']:,} events, rules {args.rules}, best of {args.repeat}")
    print(f"{'':12} {'seconds':>8} {'events/s':>12} {'MB':>8} {'x write-only':>13}")
    for key in ("simulate", "8 tables", "simulate.gz", "write only"):
        if key in best:
            rate = counts[key] / best[key]
            print(
                f"{key:12} {best[key]:8.2f} {rate:12,.0f} {sizes[key] / 1e6:8.1f} {best[key] / best['write only']:13.1f}"
            )
    print(f"peak memory (whole process): {peak:.0f} MiB")
    ok = counts["simulate"] / best["simulate"] >= 200_000
    print("target >= 200,000 events/s:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

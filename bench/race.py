"""The two-player winning chances: every speed figure of their issue, and the simulated-play
checks at full size, in one run.

    .venv/bin/python bench/race.py                    # speed figures (the 2.9 M-event log simulated if missing)
    .venv/bin/python bench/race.py --solve            # also: solve standard from nothing (minutes)
    .venv/bin/python bench/race.py --no-speed --play 20000   # games at 10,000 (winprob v optimal, winprob v winprob), ~5 min

| figure | how | goal |
|---|---|---|
| load | `pipeline.solved.tables.load(standard)` in this process, the file read and decoded | <= 0.2 s |
| rules show | `farkle-logs rules show standard` in a fresh process | <= 0.5 s |
| decisions-quality | `farkle-logs stats DS --section decisions-quality -f json` on the two-player log (`simulate --games 13500 --players 2 --seed 11`), against DuckDB's bare conversion of that log, alternating runs; peak RSS | <= 1.0x, <= 1 GiB |
| decisions-quality, text | the same command as a user types it (text, the default: every table computed, the long lists shown by their worst 25) | <= 1.0x |
| first run | the same with an empty cache and an empty numba cache (`NUMBA_CACHE_DIR`): what the first run after install pays (the kernels compiled, the policy and roll tables built) | < 1 minute |
| solve | `farkle-logs rules solve standard --out TMP` from nothing, with the load average around it | <= 10 minutes on two cores |

Play: `--play N` games of standard per pairing, seats alternating; the winprob bot's share
against the single-turn bot with a 95 % interval, and the first player's share between two
winprob bots against the solver's figure. winprob's edge over the single-turn bot at 10,000 is
about 1.3 percentage points: its interval clears one half only from about 10,000 games up.
Everything is written to a temporary directory.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = Path("/work/benchdata/sim2p13500.jsonl")
LOG_ARGS = ["--games", "13500", "--players", "2", "--seed", "11"]
GIB = 2**30
BASELINE = """
import sys, duckdb
src, dst = sys.argv[1], sys.argv[2]
duckdb.sql(f"COPY (SELECT * FROM read_json('{src}')) TO '{dst}' (FORMAT parquet, COMPRESSION zstd)")
"""


def cli() -> list[str]:
    exe = Path(sys.executable).with_name("farkle-logs")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pipeline.cli"]


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes of the process) of one run; output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss * 1024


def load_figure(runs: int) -> float:
    code = (
        "import time; from pipeline.rules import Ruleset; from pipeline.solved import tables as race_tables\n"
        "r = Ruleset.builtin('standard'); race_tables.load(r)\n"
        "best = min((lambda t: (race_tables.load(r), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))\n"
        "print(best)"
    )
    out = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    ]
    return statistics.median(out)


def speed(args, work: Path) -> None:
    log = Path(args.log)
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([*cli(), "simulate", *LOG_ARGS, "--out", str(log), "-q"], check=True)
    events = sum(1 for _ in open(log, "rb"))
    ds = Path(args.dataset) if args.dataset else work / "ds"
    if not args.dataset:
        subprocess.run([*cli(), "ingest", str(log), "--out", str(ds)], check=True, stdout=subprocess.DEVNULL)
    # both caches empty: the first run after install compiles the kernels and builds the tables
    env = dict(os.environ, FARKLE_LOGS_CACHE_DIR=str(work / "cache"), NUMBA_CACHE_DIR=str(work / "numba"))
    text_cmd = [*cli(), "stats", str(ds), "--section", "decisions-quality"]  # as a user types it
    stats_cmd = [*text_cmd, "-f", "json"]
    first_after_install, first_rss = timed(stats_cmd, env)
    base, dq, dq_text, rss, show = [], [], [], [], []
    for i in range(args.runs):
        base.append(timed([sys.executable, "-c", BASELINE, str(log), str(work / f"b{i}.parquet")])[0])
        wall, peak = timed(stats_cmd, env)
        dq.append(wall)
        rss.append(peak)
        wall, peak = timed(text_cmd, env)
        dq_text.append(wall)
        rss.append(peak)
        show.append(timed([*cli(), "rules", "show", "standard"], env)[0])
    b = statistics.median(base)
    print(f"log {log}: {events:,} events; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"baseline (DuckDB read_json -> parquet)   {b:7.2f} s")
    print(
        f"stats --section decisions-quality        {statistics.median(dq):7.2f} s  {statistics.median(dq) / b:5.2f}x  "
        f"peak RSS {max(rss) / GIB:.2f} GiB  (goal <= 1.0x, <= 1 GiB)"
    )
    print(
        f"  the same, text (the default)           {statistics.median(dq_text):7.2f} s  {statistics.median(dq_text) / b:5.2f}x"
    )
    print(
        f"  first run after install                {first_after_install:7.2f} s  peak RSS {first_rss / GIB:.2f} GiB  "
        "(empty cache and numba cache: kernels compiled, tables built; goal < 60 s)"
    )
    print(f"rules show standard                      {statistics.median(show):7.2f} s  (goal <= 0.5 s)")
    print(f"load the shipped standard table          {load_figure(args.runs):7.4f} s  (goal <= 0.2 s)")


def solve(work: Path) -> None:
    before = os.getloadavg()
    wall, peak = timed([*cli(), "rules", "solve", "standard", "--out", str(work / "standard.npz")])
    after = os.getloadavg()
    shipped = (ROOT / "pipeline" / "solved" / "data" / "standard.npz").read_bytes()
    same = (work / "standard.npz").read_bytes() == shipped
    print(
        f"solve standard from nothing              {wall:7.1f} s  peak RSS {peak / GIB:.2f} GiB  (goal <= 600 s)  "
        f"load average {before[0]:.1f} before, {after[0]:.1f} after; identical to the shipped file: {same}"
    )


def play(games: int) -> None:
    import random

    sys.path.insert(0, str(ROOT))
    from pipeline.rules import Ruleset
    from pipeline.simulate.game import Table, play_game
    from pipeline.solved.tables import race

    rules = Ruleset.builtin("standard")
    for bots in (("winprob", "optimal"), ("winprob", "winprob")):
        rng = random.Random(11)
        scores = []
        start = time.perf_counter()
        for i in range(games):
            order = bots if i % 2 == 0 else bots[::-1]
            events, _ = play_game(f"g{i}", rng, Table(("ana", "bo"), order), rules, 0)
            final = events[-1]["scores"]
            first = 1.0 if final["ana"] > final["bo"] else 0.5 if final["ana"] == final["bo"] else 0.0
            scores.append((order[0], first))
        wall = time.perf_counter() - start
        if bots[0] != bots[1]:
            share = sum(s if b == "winprob" else 1 - s for b, s in scores) / games
            label, expected = "winprob's share against optimal", 0.5
        else:
            share = sum(s for _, s in scores) / games
            label, expected = "first player's share, two winprob bots", race(rules).first_player()
        half = 1.96 * math.sqrt(share * (1 - share) / games)
        print(
            f"{label}: {share:.4f} ± {half:.4f} over {games:,} games ({wall:.0f} s); "
            f"{'solver' if expected != 0.5 else 'even'} {expected:.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", default=str(LOG))
    parser.add_argument("--dataset", help="an ingest of --log to reuse (else ingested into the work directory)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--solve", action="store_true")
    parser.add_argument("--play", type=int, default=0, metavar="N")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="farkle-race-") as tmp:
        work = Path(tmp)
        if not args.no_speed:
            speed(args, work)
        if args.solve:
            solve(work)
        if args.play:
            play(args.play)


if __name__ == "__main__":
    main()

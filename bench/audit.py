"""Audit throughput: reading + replaying a simulated log, against reading alone.

    .venv/bin/python bench/audit.py [--events 2000000] [--runs 3] [--log FILE]

Simulates a clean log (unless --log is given), then times in the same process, alternately:
(a) the reader alone (`read_events`: split lines, decode, validate: the floor audit
cannot go below), (b) the reader plus the replay engine with findings only (what
`farkle-logs audit --format json` does), and (c) the reader plus replay with turn, roll
and decision records (what ingest asks of it). Prints events/s and each ratio to (a).
Speed is quoted as ratios: this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from pipeline.reader.inputs import resolve
from pipeline.reader import read_events
from pipeline.replay import Replayer


def read_only(path: str) -> int:
    n = 0
    for _ in read_events(resolve([path]).sources):
        n += 1
    return n


def replay(path: str, records: bool) -> int:
    r = Replayer(records=records)
    n = 0
    for item in read_events(resolve([path]).sources):
        r.feed(item)
        n += 1
        if not n & 65535:
            r.drain()
    r.finish()
    r.drain()
    return n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--log")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = args.log
        if log is None:
            from pipeline.simulate import simulate

            log = str(Path(tmp) / "bench.jsonl")
            games = max(1, args.events // 320)  # about 320 events per simulated game
            simulate(log, games=games, seed=1)
        timings: dict[str, list[float]] = {"read": [], "audit": [], "records": []}
        events = 0
        gc.disable()  # as ingest does: decoded objects would be rescanned again and again
        for _ in range(args.runs):
            for name, fn in (
                ("read", lambda: read_only(log)),
                ("audit", lambda: replay(log, False)),
                ("records", lambda: replay(log, True)),
            ):
                start = time.perf_counter()
                events = fn()
                timings[name].append(time.perf_counter() - start)
                gc.collect()
        best = {k: min(v) for k, v in timings.items()}
        print(f"log: {log} ({events:,} lines)")
        for name, label in (
            ("read", "(a) read + validate only"),
            ("audit", "(b) read + replay, findings"),
            ("records", "(c) read + replay + records"),
        ):
            print(
                f"{label:32} {best[name]:7.2f} s  {events / best[name]:>10,.0f} events/s  "
                f"{best[name] / best['read']:.2f}x (a)"
            )


if __name__ == "__main__":
    main()

"""How fast the reader is, against the floor of a bare msgspec decode loop.

Usage: .venv/bin/python bench/reader.py [--lines 200000] [--runs 3]

Writes a generated log (plain and gzip) to a temporary directory, then times, best of
--runs interleaved rounds, each on the same lines:
  baseline  msgspec.json.Decoder().decode(line) for every line, nothing else
  parse     parse_line(line, file, n) for every line (decode + validate + Event)
  read      read_events over the plain file (reading, splitting, counters, sha256, parse)
  read gz   the same over the gzip file
and prints lines/s, µs/line and the ratio to the baseline. The garbage collector is off
while timing, as ingest runs it (performance-facts.md: it doubles the cost of holding
decoded objects), and the results are consumed without being kept.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import random
import tempfile
import time
from collections import deque
from pathlib import Path

import msgspec

from pipeline.reader.inputs import InputSource
from pipeline.reader import parse_line, read_events


def generate(n_lines: int, seed: int = 7) -> list[bytes]:
    """Lines shaped like real logs: a game_start, turns of roll/keep/.../bank or farkle."""
    rng = random.Random(seed)
    encode = msgspec.json.encode
    lines: list[bytes] = []
    game = 0
    while len(lines) < n_lines:
        game += 1
        gid, seq, players = f"g{game:07d}", 1, ["ana", "bo", "cy"]
        clock = 1_767_225_600 + game * 600

        def ts() -> str:
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock + seq)) + f".{seq % 1000:03d}Z"  # noqa: B023

        lines.append(
            encode(
                {"game_id": gid, "seq": seq, "type": "game_start", "players": players, "rules": "standard", "ts": ts()}
            )
        )
        totals = dict.fromkeys(players, 0)
        for turn in range(rng.randint(20, 60)):
            player = players[turn % len(players)]
            points = 0
            for _ in range(rng.randint(1, 3)):
                seq += 1
                lines.append(
                    encode(
                        {
                            "game_id": gid,
                            "seq": seq,
                            "type": "roll",
                            "player": player,
                            "dice": [rng.randint(1, 6) for _ in range(rng.randint(1, 6))],
                            "ts": ts(),
                        }
                    )
                )
                seq += 1
                points += 100
                lines.append(
                    encode(
                        {
                            "game_id": gid,
                            "seq": seq,
                            "type": "keep",
                            "player": player,
                            "dice": [1],
                            "points": 100,
                            "ts": ts(),
                        }
                    )
                )
            seq += 1
            if rng.random() < 0.2:
                lines.append(encode({"game_id": gid, "seq": seq, "type": "farkle", "player": player, "ts": ts()}))
            else:
                totals[player] += points
                lines.append(
                    encode(
                        {
                            "game_id": gid,
                            "seq": seq,
                            "type": "bank",
                            "player": player,
                            "points": points,
                            "total": totals[player],
                            "ts": ts(),
                        }
                    )
                )
        seq += 1
        lines.append(
            encode(
                {
                    "game_id": gid,
                    "seq": seq,
                    "type": "game_end",
                    "winner": max(totals, key=totals.get),
                    "scores": totals,
                    "ts": ts(),
                }
            )
        )
    return lines[:n_lines]


def best_of(runs: int, fns: dict) -> dict:
    """Best time of each, run in interleaved rounds so a noisy neighbour hits all alike."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(runs):
        for label, fn in fns.items():
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                fn()
                best[label] = min(best[label], time.perf_counter() - start)
            finally:
                gc.enable()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    lines = generate(args.lines)
    data = b"\n".join(lines) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp, "bench.jsonl")
        plain.write_bytes(data)
        packed = Path(tmp, "bench.jsonl.gz")
        packed.write_bytes(gzip.compress(data, compresslevel=6))

        decode = msgspec.json.Decoder().decode

        def baseline() -> None:
            for raw in lines:
                decode(raw)

        def parse() -> None:
            for n, raw in enumerate(lines, 1):
                parse_line(raw, "bench.jsonl", n)

        def read(path: Path):
            return lambda: deque(read_events([InputSource(str(path), path=path)]), maxlen=0)

        bad = sum(type(parse_line(raw, "b", 1)).__name__ != "Event" for raw in lines)
        print(
            f"{len(lines):,} lines, {len(data) / 1e6:.1f} MB ({packed.stat().st_size / 1e6:.1f} MB gzip), "
            f"{bad} not valid events; best of {args.runs}, gc off"
        )
        fns = {
            "baseline msgspec decode": baseline,
            "parse_line": parse,
            "read_events plain": read(plain),
            "read_events gzip": read(packed),
        }
        times = best_of(args.runs, fns)
        floor = times["baseline msgspec decode"]
        for label, seconds in times.items():
            print(
                f"{label:24} {len(lines) / seconds / 1e6:6.2f} M lines/s  "
                f"{seconds / len(lines) * 1e6:5.2f} µs/line  {seconds / floor:4.2f}x baseline"
            )


if __name__ == "__main__":
    main()

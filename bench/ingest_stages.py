"""Where ingest's CPU goes, stage by stage, on the first N lines of a log.

Usage: .venv/bin/python bench/ingest_stages.py LOG [--lines 300000]

Times (CPU, `time.process_time`, garbage collector off as in ingest), one after another
over the same lines held in memory: splitting lines, routing them to one of two processes,
parse_line, Replayer.feed, events → Arrow, derived records → Arrow, Parquet writing. Prints
a Markdown table of seconds, µs per line and share (docs/performance.md).
"""
from __future__ import annotations

import argparse
import gc
import io
import itertools
import time
from zlib import crc32

import pyarrow.parquet as pq

from pipeline.ingest import batches
from pipeline.ingest.run import _GAME_ID
from pipeline.inputs import resolve
from pipeline.reader import iter_lines, parse_line
from pipeline.replay import Replayer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--lines", type=int, default=300_000)
    args = parser.parse_args()
    path, limit = args.log, args.lines
    gc.disable()
    clock = time.process_time

    def lines():
        return itertools.islice(iter_lines(resolve([path]).sources[0]), limit)

    res: dict[str, float] = {}
    t = clock()
    n = sum(1 for _ in lines())
    res["split lines (reader.iter_lines)"] = clock() - t
    t = clock()
    for _, raw in lines():
        if b"\\" not in raw and raw.count(b'"game_id"') == 1 and (m := _GAME_ID(raw)) is not None:
            if crc32(m.group(1)) % 2:
                continue
    res["  routing to one of 2 processes (extra, per line)"] = clock() - t - res["split lines (reader.iter_lines)"]
    t = clock()
    items = [parse_line(raw, path, line) for line, raw in lines()]
    res["parse_line (reader)"] = clock() - t - res["split lines (reader.iter_lines)"]
    replayer = Replayer()
    t = clock()
    for item in items:
        replayer.feed(item)
    replayer.finish()
    out = replayer.drain()
    res["replay (Replayer.feed)"] = clock() - t
    t = clock()
    ev = [batches.events_table(items[k : k + 65536], "bench") for k in range(0, len(items), 65536)]
    res["events → Arrow"] = clock() - t
    t = clock()
    derived = [
        batches.turns_table(out.turns),
        batches.rolls_table(out.rolls),
        batches.decisions_table(out.decisions),
        batches.findings_table(out.findings),
        *batches.games_tables(out.games),
    ]
    res["turns/rolls/decisions/findings/games → Arrow"] = clock() - t
    t = clock()
    for tabs in [ev] + [[d] for d in derived]:
        writer = pq.ParquetWriter(io.BytesIO(), tabs[0].schema, compression="zstd")
        for tb in tabs:
            writer.write_table(tb)
        writer.close()
    res["Parquet zstd writing (all tables)"] = clock() - t
    total = sum(v for k, v in res.items() if not k.startswith("  "))
    print(f"{n:,} lines\n\n| stage | s | µs / line | share |\n|---|---|---|---|")
    for k, v in res.items():
        share = "" if k.startswith("  ") else f"{100 * v / total:.0f} %"
        print(f"| {k.strip()} | {v:.2f} | {1e6 * v / n:.2f} | {share} |")
    print(f"| total | {total:.2f} | {1e6 * total / n:.2f} | |")


if __name__ == "__main__":
    main()

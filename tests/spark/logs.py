"""Small logs for the engine comparisons: what a real league's directory looks like.

Several rulesets, games interleaved within a file and one game split across two files,
injected rule errors (findings), and the lines a flaky server writes: cut-off JSON,
invalid UTF-8, a bad event, an exact repeat, a repeat with other content, blank and
whitespace lines, CRLF endings, a byte order mark, a gzip file.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from pipeline.rules import Ruleset
from pipeline.simulate import simulate

RULESETS = (
    Ruleset.builtin("standard"),
    Ruleset.builtin("playmonster"),
    Ruleset.from_value({"base": "standard", "three_pairs": None, "opening": 350}),
)
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def make_logs(root: Path, games: int = 24, seed: int = 41) -> list[Path]:
    """The files, in the order to give them to ingest or audit."""
    root.mkdir(parents=True, exist_ok=True)
    sim = root / "sim.jsonl"
    simulate(sim, games, seed, rules=RULESETS, inject_rate=0.3, tables=3)
    lines = sim.read_bytes().split(b"\n")
    messy = list(lines[: len(lines) // 2])
    messy[3] = messy[3][:25]  # cut off mid-write
    messy.insert(7, b"")  # blank
    messy.insert(9, b"   \t")  # whitespace only
    messy.insert(12, b'{"game_id": "x\xff\xfe", "seq": 1}')  # invalid UTF-8
    messy.insert(15, messy[14])  # an exact repeat of the line before
    messy.insert(20, messy[18].replace(b'"seq":', b'"seq": ', 1).replace(b"}", b', "note": "resent"}', 1))
    messy.insert(30, b'{"game_id": "s41-g000001", "seq": 2, "type": "roll", "player": "x", "dice": [7]}')
    messy.insert(31, b"[1, 2, 3]")
    first = root / "a-first-half.jsonl"
    first.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(messy[:25]) + b"\r\n" + b"\n".join(messy[25:]) + b"\n")
    second = root / "b-second-half.jsonl.gz"
    with gzip.open(second, "wb") as fh:
        fh.write(b"\n".join(lines[len(lines) // 2 :]))  # no newline at the end
    extra = [root / "c-split-1.jsonl", root / "d-split-2.jsonl", root / "e-bad-lines.jsonl"]
    for src, dst in zip(["split_game-1.jsonl", "split_game-2.jsonl", "bad_lines.jsonl"], extra):
        shutil.copyfile(SAMPLES / src, dst)
    sim.unlink()
    return [first, second, *extra]

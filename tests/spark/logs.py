"""Small logs for the engine comparisons: what a real league's directory looks like.

Several rulesets, games interleaved within a file and one game split across two files,
injected rule errors (findings), games logged with running totals, abandoned games, a
round-limited ruleset, a rejected game_start, and the lines a flaky server writes: cut-off JSON,
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
    Ruleset.from_value({"base": "standard", "target": None, "rounds": 6}),  # a round limit, no target
)
#: A game whose game_start is rejected (a leap second where there is none): its events are
#: unknown_game, and the first one says why; then a game logged the way real apps log them:
#: running totals, and a quit mid-turn.
REAL = b"""\
{"game_id":"r1","seq":1,"type":"game_start","players":["ana","bo"],"ts":"2016-12-31T22:59:60Z"}
{"game_id":"r1","seq":2,"type":"roll","player":"ana","dice":[1,5,2,3,4,6]}
{"game_id":"r1","seq":3,"type":"keep","player":"ana","dice":[1,5],"points":150}
{"game_id":"r2","seq":1,"type":"game_start","players":["ana","bo"],"ts":"2016-12-31 23:59:60Z"}
{"game_id":"r2","seq":2,"type":"roll","player":"ana","dice":[1,5,2,3,4,6]}
{"game_id":"r2","seq":3,"type":"keep","player":"ana","dice":[1,5],"turn_points":150}
{"game_id":"r2","seq":4,"type":"roll","player":"ana","dice":[6,6,6,2]}
{"game_id":"r2","seq":5,"type":"keep","player":"ana","dice":[6,6,6],"turn_points":750}
{"game_id":"r2","seq":6,"type":"bank","player":"ana","points":750,"total":750}
{"game_id":"r2","seq":7,"type":"roll","player":"bo","dice":[1,1,1,2,3,4]}
{"game_id":"r2","seq":8,"type":"keep","player":"bo","dice":[1,1,1],"turn_points":1000}
{"game_id":"r2","seq":9,"type":"game_end","reason":"abandoned","winner":"ana"}
"""
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def make_logs(root: Path, games: int = 24, seed: int = 41) -> list[Path]:
    """The files, in the order to give them to ingest or audit."""
    root.mkdir(parents=True, exist_ok=True)
    sim = root / "sim.jsonl"
    simulate(sim, games, seed, rules=RULESETS, inject_rate=0.3, tables=3, running_totals=0.4, abandon=0.25)
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
    real = root / "e-real.jsonl"
    real.write_bytes(REAL)
    extra.append(real)
    sim.unlink()
    return [first, second, *extra]

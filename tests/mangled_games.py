"""Randomly mangled games, shared by the replay tests (tests/test_replay_fuzz.py,
tests/test_replay_fast.py): random edits of the kinds real logs suffer, applied to the
events of simulated games."""

from __future__ import annotations

import json
import random


def mangle(events: list[dict], rng: random.Random, *, max_edits: int, cut_off: bool) -> list[str]:
    """`events` after 1 to `max_edits` random edits (dice, points, players, seqs, types,
    totals; dropped, swapped and repeated lines; with `cut_off`, the log cut off at some
    line), as JSON lines. `events` is not changed. The same rng state gives the same result."""
    events = [dict(e) for e in events]
    for _ in range(rng.randint(1, max_edits)):
        i = rng.randrange(len(events))
        e = events[i]
        kind = rng.randrange(10 if cut_off else 9)
        if kind == 0 and "dice" in e:
            e["dice"] = [rng.randint(1, 6) for _ in range(rng.randint(1, 6))]
        elif kind == 1 and "points" in e:
            e["points"] = rng.choice([0, 50, 100, 150, 300, 500, 1000, e["points"] + 50])
        elif kind == 2 and "player" in e:
            e["player"] = rng.choice(["ana", "bo", "zed", e["player"]])
        elif kind == 3:
            e["seq"] = max(1, e["seq"] + rng.choice([-2, -1, 1, 3]))
        elif kind == 4:
            e["type"] = rng.choice(["roll", "keep", "bank", "farkle", "game_end", "game_start"])
        elif kind == 5:
            del events[i]
        elif kind == 6 and i + 1 < len(events):
            events[i], events[i + 1] = events[i + 1], events[i]
        elif kind == 7 and "total" in e:
            e["total"] = e["total"] + rng.choice([-500, -50, 50, 1000])
        elif kind == 8:
            events.insert(i, dict(e))
        elif kind == 9:
            del events[i:]  # cut off
    return [json.dumps(e) for e in events]

"""Mangled logs never crash the audit, and its contract holds on whatever comes out.

Random edits of real simulated games (dice, points, players, seqs, types, dropped and
swapped lines) are replayed; the invariants of log-format.md must hold for every one:
at most one finding per line, every finding's code known, findings that point at a line
point at a real one, and a result for every started game.
"""
from __future__ import annotations

import io
import json
import random
from collections import Counter

import pytest

from pipeline.model import FINDING_CODES
from pipeline.reader import parse_line
from pipeline.replay import audit_items
from pipeline.simulate import simulate


@pytest.fixture(scope="module")
def base_lines() -> list[dict]:
    buffer = io.BytesIO()
    simulate(buffer, games=6, seed=11, players=(2, 3))
    return [json.loads(line) for line in buffer.getvalue().decode().splitlines() if line.strip()]


def mutate(events: list[dict], rng: random.Random) -> list[str]:
    events = [dict(e) for e in events]
    for _ in range(rng.randint(1, 12)):
        i = rng.randrange(len(events))
        e = events[i]
        kind = rng.randrange(9)
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
    return [json.dumps(e) for e in events]


@pytest.mark.parametrize("seed", range(40))
def test_mangled_games_keep_the_contract(base_lines, seed):
    rng = random.Random(seed)
    lines = mutate(base_lines, rng)
    items = [item for n, text in enumerate(lines, 1)
             if (item := parse_line(text.encode(), "fuzz.jsonl", n)) is not None]
    out = audit_items(items, trace=True)
    assert {f.code for f in out.findings} <= set(FINDING_CODES)
    end_of_input = {"missing_turn_end", "game_incomplete"}
    per_line = Counter(f.line for f in out.findings if f.code not in end_of_input)
    assert all(n == 1 for n in per_line.values()), per_line.most_common(3)
    assert all(1 <= f.line <= len(lines) for f in out.findings)
    started = {i.game_id for i in items if getattr(i, "type", None) == "game_start"}
    assert {g.game_id for g in out.games} <= started
    for g in out.games:
        assert set(g.corrected) == set(g.players)

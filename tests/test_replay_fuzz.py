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
from tests.mangled_games import mangle


@pytest.fixture(scope="module")
def base_lines() -> list[dict]:
    buffer = io.BytesIO()
    simulate(buffer, games=6, seed=11, players=(2, 3))
    return [json.loads(line) for line in buffer.getvalue().decode().splitlines() if line.strip()]


@pytest.mark.parametrize("seed", range(40))
def test_mangled_games_keep_the_contract(base_lines, seed):
    rng = random.Random(seed)
    lines = mangle(base_lines, rng, max_edits=12, cut_off=False)
    items = [
        item for n, text in enumerate(lines, 1) if (item := parse_line(text.encode(), "fuzz.jsonl", n)) is not None
    ]
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

"""Small, fully known Farkle logs for the ingest tests.

Each generated game is legal under `standard` and its shape is recorded (turns, rolls,
keeps = decisions), so tests compare ingest's row counts with numbers that did not come
from ingest or replay.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from pipeline.rules import Ruleset, best_keep

STANDARD = Ruleset.builtin("standard")


@dataclass
class Game:
    game_id: str
    lines: list[dict] = field(default_factory=list)
    turns: int = 0  # turns that ended (bank or farkle)
    rolls: int = 0
    keeps: int = 0


def make_game(game_id: str, rng: random.Random, turns: int = 6, players=("ana", "bo")) -> Game:
    g = Game(game_id)
    seq = 0

    def add(**fields):
        nonlocal seq
        seq += 1
        g.lines.append({"game_id": game_id, "seq": seq, **fields})

    add(type="game_start", players=list(players), rules="standard", ts="2026-03-01T12:00:00Z")
    totals = {p: 0 for p in players}
    for t in range(turns):
        player = players[t % len(players)]
        points = 0
        dice_n = 6
        while True:
            dice = [rng.randint(1, 6) for _ in range(dice_n)]
            add(type="roll", player=player, dice=dice)
            g.rolls += 1
            keep = best_keep(dice, STANDARD)
            if keep is None:
                add(type="farkle", player=player, total=totals[player])
                break
            add(type="keep", player=player, dice=list(keep.dice), points=keep.points)
            g.keeps += 1
            points += keep.points
            dice_n = dice_n - len(keep.dice) or 6
            if points >= 300 and (totals[player] > 0 or points >= 500) or dice_n <= 2:
                if totals[player] == 0 and points < 500:
                    continue  # not opened yet: keep rolling
                totals[player] += points
                add(type="bank", player=player, points=points, total=totals[player])
                break
        g.turns += 1
    return g  # no game_end: nobody reaches the target in a few turns (game_incomplete, a warning)


def games(n: int, seed: int = 1, turns: int = 6) -> list[Game]:
    rng = random.Random(seed)
    return [make_game(f"g{seed}-{i:03d}", rng, turns=turns) for i in range(n)]


def interleave(gs: list[Game], seed: int = 7) -> list[dict]:
    """Lines of several games interleaved, each game's own order kept."""
    rng = random.Random(seed)
    queues = [list(g.lines) for g in gs]
    out = []
    while any(queues):
        q = rng.choice([q for q in queues if q])
        out.append(q.pop(0))
    return out


def dump(lines: list[dict | str | bytes]) -> bytes:
    parts = []
    for line in lines:
        if isinstance(line, bytes):
            parts.append(line)
        elif isinstance(line, str):
            parts.append(line.encode())
        else:
            parts.append(json.dumps(line).encode())
    return b"\n".join(parts) + b"\n"

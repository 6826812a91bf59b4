"""Build `sample_logs/`: the small curated logs a new user reads and `make demo` runs on.

    .venv/bin/python -m pipeline.simulate.samples sample_logs

Every file comes from the simulator with a fixed seed, so the set can be rebuilt byte for
byte (a test checks that the committed files are what this module writes). What each file
shows and what the audit must find in it is in sample_logs/README.md.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import sys
from pathlib import Path

from pipeline.rules import Ruleset
from pipeline.simulate.game import game_id, game_rng, play_game, seat_players, start_time
from pipeline.simulate.inject import inject
from pipeline.simulate.run import simulate
from pipeline.simulate.writer import encode, encode_lines

STANDARD = Ruleset.builtin("standard")
PLAYMONSTER = Ruleset.builtin("playmonster")
HOUSE_DOUBLING = Ruleset.from_value(
    {"base": "standard", "n_of_a_kind": "doubling", "three_pairs": 750, "opening": 1000}
)
HOUSE_PENALTY = Ruleset.from_value(
    {"base": "standard", "opening": 350, "min_bank": 300, "farkle_penalty": 500, "penalty_after": 3}
)


def _games(n: int, seed: int, rules: Ruleset, players=(2, 3), bots=None) -> bytes:
    buf = io.BytesIO()
    kw = {} if bots is None else {"bots": bots}
    simulate(buf, n, seed, rules=[rules], players=players, **kw)
    return buf.getvalue()


def _one_game(seed: int, rules: Ruleset, players=(3, 3)) -> list[dict]:
    rng = game_rng(seed, 0)
    events, _ = play_game(game_id(seed, 0), rng, seat_players(rng, *players), rules, start_time(seed))
    return events


def _tie_game() -> bytes:
    """The first seed from 500 on whose single 2-player game of cautious bots ends in a tie."""
    for seed in range(500, 5000):
        data = _games(1, seed, STANDARD, players=(2, 2), bots=("cautious",))
        if b'"winner":[' in data:
            return data
    raise RuntimeError("no tie found")  # pragma: no cover


def scoresheet(events: list[dict]) -> str:
    """The hand-kept sheet of a game as it was really played: one row per turn."""
    rows = ["game_id,turn,player,points,total"]
    turns: dict[str, int] = {}
    totals: dict[str, int] = {}
    for e in events:
        if e["type"] in ("bank", "farkle"):
            p = e["player"]
            turns[p] = turns.get(p, 0) + 1
            if e["type"] == "bank":
                points, totals[p] = e["points"], e["total"]
            else:
                points, totals[p] = 0, e.get("total", totals.get(p, 0))
            rows.append(f"{e['game_id']},{turns[p]},{p},{points},{totals[p]}")
    return "\n".join(rows) + "\n"


def _disputed() -> tuple[list, list[dict], list]:
    """A 3-player game where one keep claims a cross-roll meld that changes the winner."""
    fallback = None
    for seed in range(700, 1200):
        clean = _one_game(seed, STANDARD)
        result = inject(clean, "cross_roll_meld", STANDARD, random.Random(f"sample-dispute/{seed}"))
        if result is None or result.planted[0].target["type"] != "keep":
            continue
        fallback = fallback or (result, clean)
        claimed_winner = result.items[-1]["winner"]
        if claimed_winner != clean[-1]["winner"]:
            return result.lines(), clean, result.manifest_rows(0)
    if fallback is None:
        raise RuntimeError("no seed from 700 to 1199 gives a keep with a cross-roll meld")
    result, clean = fallback
    return result.lines(), clean, result.manifest_rows(0)


def _bad_lines() -> tuple[bytes, list[dict]]:
    """A clean game with three garbled extra lines; the game itself audits clean."""
    events = _one_game(300, STANDARD, players=(2, 2))
    lines = [encode(e) for e in events]
    roll_at = next(i for i in range(20, len(events)) if events[i]["type"] == "roll")
    keep_at = next(i for i in range(40, len(events)) if events[i]["type"] == "keep")
    seven = dict(events[roll_at], dice=[7 if j == 0 else d for j, d in enumerate(events[roll_at]["dice"])])
    no_points = {k: v for k, v in events[keep_at].items() if k != "points"}
    cut = encode(events[9])[:47]
    inserts = sorted(
        [
            (keep_at, encode(no_points), "bad_event", "keep without 'points'"),
            (roll_at, encode(seven), "bad_event", "a die of 7"),
            (9, cut, "bad_json", "a line cut off mid-write"),
        ],
        reverse=True,
    )
    expected = []
    for at, raw, _code, _what in inserts:
        lines.insert(at, raw)
    for _at, raw, code, what in inserts:
        line = lines.index(raw) + 1
        obj = None if code == "bad_json" else json.loads(raw)
        expected.append(
            {"line": line, "code": code, "what": what, "game_id": obj and obj["game_id"], "seq": obj and obj["seq"]}
        )
    return b"\n".join(lines) + b"\n", sorted(expected, key=lambda r: r["line"])


def build(directory: Path) -> dict[str, object]:
    """Write every sample file; return what the audit must find (for the README and tests)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "standard.jsonl").write_bytes(_games(2, 101, STANDARD) + _tie_game())
    (directory / "playmonster.jsonl").write_bytes(_games(2, 102, PLAYMONSTER))
    (directory / "house_doubling.jsonl").write_bytes(_games(2, 103, HOUSE_DOUBLING))
    (directory / "house_penalty.jsonl").write_bytes(_games(2, 104, HOUSE_PENALTY, players=(3, 3)))

    items, clean, rows = _disputed()
    (directory / "disputed_game.jsonl").write_bytes(encode_lines(items))
    (directory / "disputed_game.scoresheet.csv").write_text(scoresheet(clean))

    bad, bad_expected = _bad_lines()
    (directory / "bad_lines.jsonl").write_bytes(bad)

    split = _one_game(105, STANDARD)
    cut = next(i for i in range(len(split) // 2, len(split)) if split[i]["type"] == "keep") + 1
    (directory / "split_game-1.jsonl").write_bytes(encode_lines(split[:cut]))
    (directory / "split_game-2.jsonl").write_bytes(encode_lines(split[cut:]))

    buf = io.BytesIO()
    simulate(buf, 6, 106, rules=[STANDARD, PLAYMONSTER], players=(2, 6))
    (directory / "more_games.jsonl.gz").write_bytes(gzip.compress(buf.getvalue(), compresslevel=9, mtime=0))
    return {
        "disputed_game.jsonl": rows,
        "disputed_winner": {"claimed": items[-1]["winner"], "corrected": clean[-1]["winner"]},
        "bad_lines.jsonl": bad_expected,
        "split_game": {"game_id": split[0]["game_id"], "part1_last_seq": split[cut - 1]["seq"], "part1_lines": cut},
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0] if args else "sample_logs")
    facts = build(directory)
    print(json.dumps(facts, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

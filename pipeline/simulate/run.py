"""`simulate()`: play N games and stream them out, optionally with injected errors + manifest."""
from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Sequence

from pipeline.rules import Ruleset
from pipeline.simulate.bots import BOT_NAMES
from pipeline.simulate.game import game_id, game_rng, play_game, seat_players, start_time
from pipeline.simulate.inject import INJECTABLE, Injected, inject, injectable_under
from pipeline.simulate.writer import LineWriter, encode

MANIFEST_FIELDS = ("game_id", "seq", "code", "line", "what")


@dataclass
class Summary:
    games: int = 0
    events: int = 0  # valid events written (bad lines not counted)
    lines: int = 0
    injected: dict[str, int] = field(default_factory=dict)  # code -> games that got it
    skipped: dict[str, int] = field(default_factory=dict)  # code -> games where no site worked
    unavailable: dict[str, str] = field(default_factory=dict)  # code -> why never injectable here


class ManifestWriter:
    """Ground truth of injected errors: JSONL, or CSV when the name ends in .csv."""

    def __init__(self, target: str | Path | io.TextIOBase):
        self._own = not hasattr(target, "write")
        self._f = open(target, "w", newline="", encoding="utf-8") if self._own else target
        self._csv = None
        if str(getattr(self._f, "name", target)).endswith(".csv"):
            self._csv = csv.DictWriter(self._f, fieldnames=MANIFEST_FIELDS)
            self._csv.writeheader()

    def write(self, row: dict[str, Any]) -> None:
        if self._csv is not None:
            self._csv.writerow({k: ("" if row[k] is None else row[k]) for k in MANIFEST_FIELDS})
        else:
            self._f.write(encode(row).decode() + "\n")

    def close(self) -> None:
        if self._own:
            self._f.close()


def parse_players(spec: str) -> tuple[int, int]:
    """`3` or `2-6` → (min, max); raises ValueError with a message a user can act on."""
    text = spec.strip()
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
        else:
            lo = hi = int(text)
    except ValueError:
        raise ValueError(f"--players must be a number or a range such as 2-6, got {spec!r}") from None
    if not 1 <= lo <= hi <= 6:
        raise ValueError(f"--players must be between 1 and 6 (low-high), got {spec!r}")
    return lo, hi


def simulate(
    out: str | Path | BinaryIO,
    games: int,
    seed: int,
    rules: Sequence[Ruleset] = (Ruleset.builtin("standard"),),
    players: tuple[int, int] = (2, 4),
    inject_rate: float = 0.0,
    inject_codes: Sequence[str] = INJECTABLE,
    manifest: str | Path | io.TextIOBase | None = None,
    bots: Sequence[str] = BOT_NAMES,
    on_game: Callable[[int], None] | None = None,
) -> Summary:
    """Play `games` games with seed `seed` and write them to `out` (`-`: stdout; `.gz`: gzip).

    Game i is the same whatever `games`, `inject_rate` or `manifest` are; an injected game is
    that clean game with one error planted (see inject.py), and its manifest rows give the
    file line of each planted finding.
    """
    summary = Summary()
    rules = list(rules)
    codes = list(inject_codes)
    for code in codes if inject_rate > 0 else ():
        why = [injectable_under(code, r) for r in rules]
        if all(why):
            summary.unavailable[code] = why[0] or ""
    usable = [c for c in codes if c not in summary.unavailable]
    sink = ManifestWriter(manifest) if manifest is not None else None
    t = start_time(seed)
    lo, hi = players
    try:
        with LineWriter(out) as writer:
            for index in range(games):
                rng = game_rng(seed, index)
                ruleset = rules[0] if len(rules) == 1 else rng.choice(rules)
                table = seat_players(rng, lo, hi, bots)
                gid = game_id(seed, index)
                events, t = play_game(gid, rng, table, ruleset, t)
                t += rng.randint(60, 900)
                injected = None
                if inject_rate > 0 and usable:
                    irng = random.Random(f"farkle-sim-inject/{seed}/{index}")
                    if irng.random() < inject_rate:
                        injected = _inject_one(events, ruleset, irng, usable, summary)
                if injected is None:
                    writer.write_events(events)
                    summary.events += len(events)
                else:
                    base = writer.lines
                    items = injected.lines()
                    writer.write_items(items)
                    summary.events += sum(1 for e in items if isinstance(e, dict))
                    if sink is not None:
                        for row in injected.manifest_rows(base):
                            sink.write(row)
                summary.games += 1
                if on_game is not None:
                    on_game(index)
            summary.lines = writer.lines
    finally:
        if sink is not None:
            sink.close()
    return summary


def _inject_one(events, ruleset, irng, usable, summary) -> Injected | None:
    """One error of a code drawn from those this game's ruleset allows; if the game has no
    site for it (say, no farkle turn), up to two other draws before the game stays clean."""
    here = [c for c in usable if injectable_under(c, ruleset) is None]
    for _ in range(3):
        if not here:
            return None
        code = irng.choice(here)
        result = inject(events, code, ruleset, irng)
        if result is not None:
            for p in result.planted:
                summary.injected[p.code] = summary.injected.get(p.code, 0) + 1
            return result
        summary.skipped[code] = summary.skipped.get(code, 0) + 1
    return None

"""`simulate()`: play N games and stream them out, optionally with injected errors + manifest."""

from __future__ import annotations

import csv
import heapq
import io
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Sequence

from pipeline.files import open_output
from pipeline.rules import Ruleset
from pipeline.simulate.bots import BOTS, DEFAULT_BOTS
from pipeline.simulate.game import (
    SimulationError,
    abandon_game,
    game_id,
    game_rng,
    play_game,
    seat_players,
    start_time,
)
from pipeline.simulate.inject import INJECTABLE, Injected, inject, injectable_under
from pipeline.simulate.writer import LineWriter, encode

MANIFEST_FIELDS = ("game_id", "seq", "code", "line", "what")


@dataclass
class Summary:
    games: int = 0
    abandoned: int = 0  # games written with "reason": "abandoned"
    events: int = 0  # valid events written (bad lines not counted)
    lines: int = 0
    injected: dict[str, int] = field(default_factory=dict)  # code -> findings planted
    skipped: dict[str, int] = field(default_factory=dict)  # code -> games where no site worked
    unavailable: dict[str, str] = field(default_factory=dict)  # code -> why never injectable here


class ManifestWriter:
    """Ground truth of injected errors: JSONL, or CSV when the name ends in .csv."""

    def __init__(self, target: str | Path | io.TextIOBase):
        self._own = isinstance(target, (str, Path))
        if isinstance(target, (str, Path)):  # a regular file or a new name: never a link or a device
            self._f = io.TextIOWrapper(open_output(target), encoding="utf-8", newline="")
        else:
            self._f = target  # type: ignore[assignment]
        self._csv = None
        if str(target if self._own else getattr(target, "name", "")).endswith(".csv"):
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
    """`3` or `2-6` → (min, max); raises SimulationError (a ValueError) a user can act on."""
    text = spec.strip()
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
        else:
            lo = hi = int(text)
    except ValueError:
        raise SimulationError(f"--players must be a number or a range such as 2-6, got {spec!r}") from None
    if not 1 <= lo <= hi <= 6:
        raise SimulationError(f"--players must be between 1 and 6 (low-high), got {spec!r}")
    return lo, hi


def _check_policy_bots(bots: Sequence[str], rules: Sequence[Ruleset], players: tuple[int, int] = (2, 2)) -> None:
    """A bot that plays the solved turn (`optimal`) needs every ruleset solvable within the
    solver's budget, and the winning-chance bot (`winprob`) two-player games of rulesets the
    two-player solver takes: say which is not, rather than fail in the middle of the output."""
    if not any(BOTS[b].policy for b in bots if b in BOTS):
        return
    if any(BOTS[b].race for b in bots if b in BOTS):
        if players != (2, 2):
            raise SimulationError("the winprob bot plays two-player games only: --players 2")
        from pipeline.strategy.race import refusal

        for ruleset in rules:
            reason = refusal(ruleset)
            if reason is not None:
                raise SimulationError(f"the winprob bot cannot play: {reason}")
    from pipeline.strategy.solver import SolverBudgetError, check_budget

    for ruleset in rules:
        try:
            check_budget(ruleset)
        except SolverBudgetError as exc:
            raise SimulationError(f"the optimal bot cannot play: {exc}") from None


def simulate(
    out: str | Path | BinaryIO,
    games: int,
    seed: int,
    rules: Sequence[Ruleset] = (Ruleset.builtin("standard"),),
    players: tuple[int, int] = (2, 4),
    inject_rate: float = 0.0,
    inject_codes: Sequence[str] = INJECTABLE,
    manifest: str | Path | io.TextIOBase | None = None,
    bots: Sequence[str] = DEFAULT_BOTS,
    on_game: Callable[[int], None] | None = None,
    tables: int = 1,
    running_totals: float = 0.0,
    abandon: float = 0.0,
) -> Summary:
    """Play `games` games with seed `seed` and write them to `out` (`-`: stdout; `.gz`: gzip).

    Game i is the same whatever `games`, `inject_rate` or `manifest` are; an injected game is
    that clean game with one error planted (see inject.py), and its manifest rows give the
    file line of each planted finding. With `tables` > 1 that many games are played at once
    and their lines interleave by time; each game in play is held whole, so `tables` is at
    most MAX_TABLES (ValueError), and tables beyond the number of games, which would play
    nothing, are not set up. A share `running_totals` of the games log each keep as the
    turn's running total (`turn_points`); a share `abandon` of them is abandoned (cut short,
    with `"reason": "abandoned"`). Each is drawn per game from a stream of its own, so game
    i is otherwise the same whatever they are.
    """
    if not 1 <= tables <= MAX_TABLES:
        raise ValueError(f"tables must be 1 to {MAX_TABLES:,}, got {tables:,}")
    tables = max(1, min(tables, games))
    summary = Summary()
    rules = list(rules)
    _check_policy_bots(bots, rules, players)  # before a line is written
    codes = list(inject_codes)
    for code in codes if inject_rate > 0 else ():
        why = [injectable_under(code, r) for r in rules]
        if all(why):
            summary.unavailable[code] = why[0] or ""
    usable = [c for c in codes if c not in summary.unavailable]
    lo, hi = players

    def play(index: int, t0: int) -> tuple[list[dict], Injected | None, int]:
        """Game `index` from time t0: its clean events, the injected version if any, end time."""
        rng = game_rng(seed, index)
        ruleset = rules[0] if len(rules) == 1 else rng.choice(rules)
        running = running_totals > 0 and random.Random(f"farkle-sim-running/{seed}/{index}").random() < running_totals
        events, t = play_game(
            game_id(seed, index), rng, seat_players(rng, lo, hi, bots), ruleset, t0, running_totals=running
        )
        t += rng.randint(60, 900)
        if abandon > 0:
            arng = random.Random(f"farkle-sim-abandon/{seed}/{index}")
            if arng.random() < abandon:
                events = abandon_game(events, arng)
                summary.abandoned += 1
        injected = None
        if inject_rate > 0 and usable:
            irng = random.Random(f"farkle-sim-inject/{seed}/{index}")
            if irng.random() < inject_rate:
                injected = _inject_one(events, ruleset, irng, usable, summary)
        if on_game is not None:
            on_game(index)
        summary.games += 1
        return events, injected, t

    sink = ManifestWriter(manifest) if manifest is not None else None
    try:
        with LineWriter(out) as writer:
            if tables <= 1:
                _one_after_another(play, games, start_time(seed), writer, sink, summary)
            else:
                _interleaved(play, games, tables, start_time(seed), writer, sink, summary)
            summary.lines = writer.lines
    finally:
        if sink is not None:
            sink.close()
    return summary


def _one_after_another(play, games, t, writer, sink, summary) -> None:
    for index in range(games):
        events, injected, t = play(index, t)
        if injected is None:
            writer.write_events(events)
            summary.events += len(events)
            continue
        base = writer.lines
        items = injected.lines()
        writer.write_items(items)
        summary.events += sum(1 for e in items if isinstance(e, dict))
        if sink is not None:
            for row in injected.manifest_rows(base):
                sink.write(row)


#: Games in play at once (`--tables`): each is held whole while its lines interleave with the
#: others' (about 120 KB a game), so a thousand tables take about 150 MB.
MAX_TABLES = 1_000


def _interleaved(play, games, tables, t0, writer, sink, summary) -> None:
    """`tables` games in play at once (table k plays games k, k + tables, ...); their lines
    are merged by time, so the lines of different games interleave as in a server log."""
    heap: list[tuple[str, int]] = []
    clocks = [t0 + 97 * k for k in range(tables)]
    nxt = list(range(tables))
    current: list[list] = [[] for _ in range(tables)]
    keys: list[list[str]] = [[] for _ in range(tables)]
    pos = [0] * tables
    pending: dict[int, list[dict[str, Any]]] = {}

    def start(k: int) -> None:
        index = nxt[k]
        if index >= games:
            return
        nxt[k] += tables
        events, injected, clocks[k] = play(index, clocks[k])
        items = events if injected is None else injected.items
        if injected is not None:
            for p in injected.planted:
                pending.setdefault(id(p.target), []).append(injected.row(p, 0))
        ts, order = events[0]["ts"], []
        for item in items:
            ts = item["ts"] if isinstance(item, dict) else ts
            order.append(ts)
        current[k], keys[k], pos[k] = items, order, 0
        heapq.heappush(heap, (order[0], k))

    for k in range(tables):
        start(k)
    batch: list = []
    while heap:
        _, k = heapq.heappop(heap)
        item = current[k][pos[k]]
        if pending and id(item) in pending:
            for row in pending.pop(id(item)):
                row["line"] = writer.lines + len(batch) + 1
                if sink is not None:
                    sink.write(row)
        if isinstance(item, dict):
            batch.append(item)
            summary.events += 1
        else:
            batch.append(item.text)
        if len(batch) >= 4096:
            writer.write_items(batch)
            batch = []
        pos[k] += 1
        if pos[k] < len(current[k]):
            heapq.heappush(heap, (keys[k][pos[k]], k))
        else:
            start(k)
    writer.write_items(batch)


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

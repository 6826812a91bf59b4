"""The game loop: bots play one complete game and it comes out as a list of event dicts.

Events follow log-format.md to the letter (game_start … game_end, seq 1, 2, 3, …) and the
game follows rules.md: hot dice, opening threshold, `min_bank`, farkle penalties, the final
round after `target`, the round limit (`rounds`), ties. Farkle events carry `total`
exactly when the ruleset has a farkle penalty. Keeps carry their own `points`, or with
`running_totals` the turn's running total (`turn_points`), as many apps print it; an
abandoned game (`abandon_game`) is cut at a random event and ends with
`"reason": "abandoned"`. The loop is written for speed (one `random()` per roll, table lookups,
locals only); everything it needs per ruleset is prebuilt in `dice.DiceTables`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pipeline.rules import BUILTIN_RULESETS, Ruleset
from pipeline.rules.play import (
    NOBODY,
    bank_floor,
    dice_to_roll,
    farkle_cost,
    final_round_step,
    game_over,
    rounds_knob,
    streak_after_bank,
    streak_after_farkle,
    target_knob,
)
from pipeline.simulate.bots import BOTS, DEFAULT_BOTS, policy_player, race_player
from pipeline.simulate.dice import POW6, dice_tables, rolls_by_index
from pipeline.errors import UserError

PLAYER_NAMES = (
    "ana", "bo", "chen", "dara", "eli", "fay", "gus", "hana", "ivo", "jun", "kai", "lea",
    "milo", "nia", "otto", "pia", "quin", "rosa", "sam", "tove", "uma", "vik", "wen", "yara",
)  # fmt: skip


def rules_value(rules: Ruleset) -> str | dict[str, Any]:
    """The `rules` field of game_start: a built-in name, else base + the knobs that differ."""
    for name, builtin in BUILTIN_RULESETS.items():
        if builtin == rules:
            return name
    base = BUILTIN_RULESETS.get(rules.base, BUILTIN_RULESETS["standard"])
    full, base_full = rules.to_dict(), base.to_dict()
    out: dict[str, Any] = {"base": rules.base if rules.base in BUILTIN_RULESETS else "standard"}
    for knob, value in full.items():
        if knob != "base" and value != base_full[knob]:
            out[knob] = value
    return out


def game_id(seed: int, index: int) -> str:
    return f"s{seed}-g{index:06d}"


def game_rng(seed: int, index: int) -> random.Random:
    """Each game has its own stream, so game i is the same whatever --games or --inject say."""
    return random.Random(f"farkle-sim/{seed}/{index}")


def start_time(seed: int) -> int:
    """A seed-derived start (epoch seconds, UTC) somewhere in 2024-2025, in the evening."""
    h = int.from_bytes(hashlib.sha256(f"farkle-sim-start/{seed}".encode()).digest()[:8], "big")
    day = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(days=h % 700)
    return int(day.timestamp()) + 17 * 3600 + (h >> 20) % 3600


@lru_cache(maxsize=1)
def _hms() -> list[str]:
    return [f"T{h:02d}:{m:02d}:{s:02d}Z" for h in range(24) for m in range(60) for s in range(60)]


@lru_cache(maxsize=4096)
def _day(day: int) -> str:
    return _dt.datetime.fromtimestamp(day * 86400, _dt.timezone.utc).strftime("%Y-%m-%d")


def rfc3339(t: int) -> str:
    day, sec = divmod(t, 86400)
    return _day(day) + _hms()[sec]


#: After this many turns per player every bot banks like `cautious`: under a harsh penalty
#: (say 1000 every 2nd farkle) greedy bots can drift below zero for ever, and a game must end.
TIRED_AFTER = 100
#: A game that has not ended after this many turns per player never will: the ruleset's
#: penalty outweighs what even a cautious bot banks (say, 5000 for every farkle).
GIVE_UP_AFTER = 2000


class SimulationError(UserError, ValueError):
    """The simulation cannot run as asked: a players spec, or bots that cannot finish a game."""


@dataclass(frozen=True)
class Table:
    """Who sits at one game: names in turn order and the bot each one plays."""

    players: tuple[str, ...]
    bots: tuple[str, ...]


def seat_players(rng: random.Random, n_min: int, n_max: int, bot_names=DEFAULT_BOTS) -> Table:
    n = n_min if n_min == n_max else rng.randint(n_min, n_max)
    names = tuple(rng.sample(PLAYER_NAMES, n))
    bots = tuple(rng.choice(bot_names) for _ in range(n))
    return Table(names, bots)


def play_game(
    gid: str,
    rng: random.Random,
    table: Table,
    rules: Ruleset,
    t0: int,
    rules_field: Any = None,
    running_totals: bool = False,
) -> tuple[list[dict[str, Any]], int]:
    """Play one game; return its events (dicts in log order) and the time after its last event.

    `rules_field` is what game_start says in `rules` (default: `rules_value(rules)`); with
    `running_totals` each keep gives the turn's running total (`turn_points`), not its points.
    """
    tabs = dice_tables(rules)
    rolls = rolls_by_index()
    hms = _hms()
    players = list(table.players)
    n = len(players)
    bots = [BOTS[b] for b in table.bots]
    choose = [tabs.choice[b.keep] for b in bots]
    hi = tabs.choice["best"]
    bank_at = [b.bank_at for b in bots]
    tie_ok = [b.settles_for_tie for b in bots]
    if any(b.race for b in bots) and n != 2:
        raise SimulationError(f"game {gid} has {n} players: the winprob bot plays two-player games only (--players 2)")
    policies = [policy_player(rules) if b.policy and not b.race else None for b in bots]
    racers = [race_player(rules) if b.race else None for b in bots]
    keys = tabs.keys
    opening, min_bank = rules.opening, rules.min_bank
    penalty, after = rules.farkle_penalty, rules.penalty_after
    target, rounds = target_knob(rules.target), rounds_knob(rules.rounds)
    points_field = "turn_points" if running_totals else "points"
    rnd = rng.random

    t = t0
    day, sec = divmod(t, 86400)
    prefix, day_end = _day(day), (day + 1) * 86400

    events: list[dict[str, Any]] = []
    app = events.append
    app(
        {
            "game_id": gid,
            "seq": 1,
            "ts": prefix + hms[sec],
            "type": "game_start",
            "players": players,
            "rules": rules_value(rules) if rules_field is None else rules_field,
            "bots": dict(zip(players, table.bots)),
        }
    )
    seq = 1
    totals = [0] * n
    opened = [False] * n
    streak = [0] * n
    first = NOBODY  # seat of the first player to reach the target
    remaining = 0  # turns left in the final round
    owed = [0] * n  # per seat: a final-round turn still owed
    p = 0
    turns = 0
    tired = TIRED_AFTER * n
    while True:
        name = players[p]
        ch = choose[p]
        turns += 1
        bars = bank_at[p] if turns <= tired else BOTS["cautious"].bank_at
        if turns > GIVE_UP_AFTER * n:
            raise SimulationError(
                f"game {gid} has not reached the target of {rules.target} after {GIVE_UP_AFTER} turns per player "
                f"(best total {max(totals)}): under these rules (farkle_penalty {penalty} every "
                f"{after} farkle(s) in a row) the bots cannot win; lower the penalty or the target"
            )
        need = bank_floor(opening, min_bank, opened[p])
        pol = policies[p]
        racer = racers[p]
        pts = 0
        left = 6
        while True:
            idx = int(rnd() * POW6[left])
            t += 2 + (idx & 3)
            if t >= day_end:
                day = t // 86400
                prefix, day_end = _day(day), (day + 1) * 86400
            seq += 1
            app(
                {
                    "game_id": gid,
                    "seq": seq,
                    "ts": prefix + hms[t - day_end + 86400],
                    "type": "roll",
                    "player": name,
                    "dice": rolls[left][idx],
                }
            )
            c = ch[left][idx]
            t += 1 + (idx & 7)
            if t >= day_end:
                day = t // 86400
                prefix, day_end = _day(day), (day + 1) * 86400
            seq += 1
            ts = prefix + hms[t - day_end + 86400]
            if c is None:
                if penalty:
                    totals[p] -= farkle_cost(streak[p], penalty, after)
                    app({"game_id": gid, "seq": seq, "ts": ts, "type": "farkle", "player": name, "total": totals[p]})
                else:
                    app({"game_id": gid, "seq": seq, "ts": ts, "type": "farkle", "player": name})
                streak[p] = streak_after_farkle(streak[p], penalty, after)
                break
            # Bank with the highest-value keep if the bot would bank after it; else keep
            # in the bot's own style (a smaller keep, to roll more dice) and roll on.
            if racer is not None:  # the winning-chance policy: both totals decide, the final round too
                b, says_bank = racer.decide(totals[p], totals[1 - p], pts, rolls[left][idx])
                c = b
            elif pol is None:
                b = hi[left][idx]
            else:  # the exact policy picks the keep, and says whether to bank after it
                b, says_bank = pol.decide(pts, keys[left][idx], rolls[left][idx], opened[p])
                c = b
            bank = False
            bpts = pts + b[1]
            if bpts >= need:
                bleft = dice_to_roll(left, b[2])
                if first == NOBODY or racer is not None:
                    bank = bpts >= bars[bleft] if pol is None and racer is None else says_bank
                else:
                    best = max(totals[q] for q in range(n) if q != p)
                    mine = totals[p] + bpts
                    bank = mine > best or (mine == best and tie_ok[p])
            if bank:
                app(
                    {
                        "game_id": gid,
                        "seq": seq,
                        "ts": ts,
                        "type": "keep",
                        "player": name,
                        "dice": b[0],
                        points_field: bpts if running_totals else b[1],
                    }
                )
                totals[p] += bpts
                opened[p] = True
                streak[p] = streak_after_bank(streak[p])
                t += 1 + (idx & 3)
                if t >= day_end:
                    day = t // 86400
                    prefix, day_end = _day(day), (day + 1) * 86400
                seq += 1
                app(
                    {
                        "game_id": gid,
                        "seq": seq,
                        "ts": prefix + hms[t - day_end + 86400],
                        "type": "bank",
                        "player": name,
                        "points": bpts,
                        "total": totals[p],
                    }
                )
                break
            kdice, kval, kn = c
            pts += kval
            left = dice_to_roll(left, kn)
            app(
                {
                    "game_id": gid,
                    "seq": seq,
                    "ts": ts,
                    "type": "keep",
                    "player": name,
                    "dice": kdice,
                    points_field: pts if running_totals else kval,
                }
            )
        first, remaining = final_round_step(p, totals[p], target, first, owed, remaining)
        # seats play in order from seat 0: after `turns` turns every seat has ended turns // n
        if game_over(first, remaining, turns // n, rounds):
            break
        p += 1
        if p == n:
            p = 0
    top = max(totals)
    winners = [players[q] for q in range(n) if totals[q] == top]
    t += 5
    seq += 1
    app(
        {
            "game_id": gid,
            "seq": seq,
            "ts": rfc3339(t),
            "type": "game_end",
            "winner": winners[0] if len(winners) == 1 else winners,
            "scores": dict(zip(players, totals)),
        }
    )
    return events, t


def abandon_game(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The game stopped early, as online games are (a player quits, the table closes): its
    events cut after a random turn event (mid-turn or between turns), then a game_end with
    `"reason": "abandoned"`. Like the apps that write one, it names the leaders by claimed
    total and gives the scores, or leaves either out. A turn left open is forfeited (it adds
    nothing), so the claimed totals are those of the last bank or farkle of each player."""
    players = list(events[0]["players"])
    last_turn_event = len(events) - 2  # events[-1] is the game_end
    if last_turn_event < 1:
        return events
    cut = rng.randint(1, last_turn_event)
    kept = [dict(e) for e in events[: cut + 1]]
    totals = dict.fromkeys(players, 0)
    for e in kept:
        if e["type"] in ("bank", "farkle") and "total" in e:
            totals[e["player"]] = e["total"]
    end: dict[str, Any] = {
        "game_id": events[0]["game_id"],
        "seq": kept[-1]["seq"] + 1,
        "ts": kept[-1]["ts"],
        "type": "game_end",
        "reason": "abandoned",
    }
    style = rng.random()
    if style < 0.6:
        top = max(totals.values())
        leaders = [p for p in players if totals[p] == top]
        end["winner"] = leaders[0] if len(leaders) == 1 else leaders
    elif style < 0.8:
        end["winner"] = None
    if rng.random() < 0.7:
        end["scores"] = totals
    kept.append(end)
    return kept

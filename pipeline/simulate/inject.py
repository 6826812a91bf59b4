"""Error injection: corrupt a clean game the way tired scorekeepers and buggy servers do.

Each injector edits a copy of one clean game so that an auditor following log-format.md
finds exactly the planted finding(s) and nothing else. Two rules of the contract drive the
edits:

* replay goes on from the claim, so after a wrong claim every later claim is made to follow
  it (`recompute`): a keep claimed 150 instead of 100 is followed by a bank that claims the
  inflated sum and totals that add it up, and game_end's scores and winner agree with the
  claimed totals;
* a bad line uses up no seq, so bad_json / bad_event / stray lines are inserted as extra
  lines and the game around them is untouched.

Every candidate edit is then read back by `check.check_game` (an independent reading of the
findings rules); a site whose edit would give any other finding (say, an inflated total that
moves the final round) is rejected and another site tried, so the manifest never lies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

from pipeline.model import LOG_CODES, SCORESHEET, Code
from pipeline.rules import Ruleset, counts_key, dice_counts
from pipeline.rules.play import farkle_cost, streak_after_bank, streak_after_farkle
from pipeline.simulate.check import bank_is_cross_roll, check_game, keep_is_cross_roll, meld_subsets, value_of
from pipeline.simulate.dice import dice_tables
from pipeline.simulate.writer import encode

#: Codes an injection can plant: every finding of a log (not of a scoresheet), in
#: log-format.md's order; each has its `inj_<code>` below. missing_turn_end is planted two
#: ways: a log cut off mid-turn (with game_incomplete: "a game cut off mid-turn gets both"),
#: or a turn-ending line dropped so that the next player's six dice reveal it.
INJECTABLE = tuple(code.value for code in LOG_CODES)
NOT_INJECTABLE = {
    code.value: "a scoresheet finding: it compares a hand-kept CSV with the log, no log edit makes it"
    for code in Code
    if SCORESHEET in code.rows
}
#: Knob a code needs, checked before trying: (knob, why).
NEEDS = {
    "bank_below_opening": ("opening", "the ruleset has no opening threshold (opening 0)"),
    "bank_below_minimum": ("min_bank", "the ruleset has no minimum bank (min_bank 0)"),
}

ATTEMPTS = 24
#: Claims are only altered in turns with at most this many keeps: the cross-roll meld rule
#: looks at every set of earlier keeps, and an auditor may bound that search (pipeline.replay
#: looks at the 12 most recent), so a longer turn could make the expected code depend on it.
MAX_KEEPS = 12


@dataclass
class Raw:
    """A line that is not a valid event; game_id/seq are what a reader can still make out."""

    text: bytes
    game_id: str | None = None
    seq: int | None = None


@dataclass
class Planted:
    target: Any  # the event dict or Raw the finding is on
    code: str
    what: str


@dataclass
class Injected:
    items: list  # dicts and Raw lines in file order
    planted: list[Planted]

    def row(self, p: Planted, line: int) -> dict[str, Any]:
        """The manifest row of one planted finding, on file line `line`."""
        if isinstance(p.target, Raw):
            game_id, seq = p.target.game_id, p.target.seq
        else:
            game_id, seq = p.target["game_id"], p.target["seq"]
        return {"game_id": game_id, "seq": seq, "code": p.code, "line": line, "what": p.what}

    def manifest_rows(self, line_base: int) -> list[dict[str, Any]]:
        """Rows when the game's items are written one after another from line line_base + 1."""
        rows = []
        for p in self.planted:
            index = next(i for i, item in enumerate(self.items) if item is p.target)
            rows.append(self.row(p, line_base + index + 1))
        return rows

    def lines(self) -> list:
        return [item.text if isinstance(item, Raw) else item for item in self.items]


@dataclass
class Ctx:
    rules: Ruleset
    rng: random.Random
    gid: str
    players: list[str]
    frozen: set = field(default_factory=set)
    running: set = field(default_factory=set)  # ids of keeps logged with turn_points

    def freeze(self, event: dict, name: str) -> None:
        self.frozen.add((id(event), name))


@dataclass
class Turn:
    start: int
    end: int  # index of the bank/farkle
    player: str
    keeps: list[int]
    rolls: list[int]


def turns_of(ev: list) -> list[Turn]:
    out: list[Turn] = []
    start = None
    keeps: list[int] = []
    rolls: list[int] = []
    for i, e in enumerate(ev):
        t = e["type"]
        if t == "roll":
            if start is None:
                start, keeps, rolls = i, [], []
            rolls.append(i)
        elif t == "keep":
            keeps.append(i)
        elif t in ("bank", "farkle") and start is not None:
            out.append(Turn(start, i, ev[start]["player"], keeps, rolls))
            start = None
    return out


def renumber(ev: list) -> None:
    for i, e in enumerate(ev):
        e["seq"] = i + 1


def recompute(ev: list, ctx: Ctx) -> None:
    """Make every claim after an edit follow the claims before it (totals, scores, winner)."""
    rules, frozen = ctx.rules, ctx.frozen
    players = ev[0]["players"]
    seat = {p: i for i, p in enumerate(players)}
    totals = [0] * len(players)
    streak = [0] * len(players)
    owner = None
    penalty, after = rules.farkle_penalty, rules.penalty_after
    for e in ev[1:]:
        t = e["type"]
        if t == "roll" and owner is None:
            owner = seat[e["player"]]
        elif t == "bank":
            assert owner is not None  # set by the turn's first roll
            if (id(e), "total") not in frozen:
                e["total"] = totals[owner] + e["points"]
            totals[owner] = e["total"]
            streak[owner] = streak_after_bank(streak[owner])
            owner = None
        elif t == "farkle":
            assert owner is not None
            if penalty or "total" in e:
                if (id(e), "total") not in frozen:
                    e["total"] = totals[owner] - farkle_cost(streak[owner], penalty, after)
                totals[owner] = e["total"]
            streak[owner] = streak_after_farkle(streak[owner], penalty, after)
            owner = None
        elif t == "game_end":
            abandoned = e.get("reason") == "abandoned"  # may give no scores and name no winner
            if (id(e), "scores") not in frozen and (not abandoned or "scores" in e):
                e["scores"] = dict(zip(players, totals))
            if (id(e), "winner") not in frozen and (not abandoned or e.get("winner") is not None):
                top = max(totals)
                won = [p for p, v in zip(players, totals) if v == top]
                e["winner"] = won[0] if len(won) == 1 else won
    renumber(ev)


def claims_of_running(ev: list) -> set[int]:
    """Turn each keep logged with the turn's running total (`turn_points`) into one with its
    claim (`points`), so the injectors edit claims alone; returns the ids of those keeps."""
    running: set[int] = set()
    claimed = 0
    for e in ev:
        t = e["type"]
        if t in ("bank", "farkle", "game_start", "game_end"):
            claimed = 0
        elif t == "keep":
            if "turn_points" in e:
                e["points"] = e.pop("turn_points") - claimed
                running.add(id(e))
            claimed += e["points"]
    return running


def running_of_claims(items: list, running: set[int]) -> None:
    """`claims_of_running` undone after an edit: each of those keeps (still in the game)
    gives the running total of the claims of its turn so far, its own included. A turn ends
    at a bank or farkle, or where another player's roll starts the next one (a lost end)."""
    claimed = 0
    owner = None
    for e in items:
        if not isinstance(e, dict):
            continue
        t = e["type"]
        if t in ("bank", "farkle", "game_start", "game_end"):
            claimed, owner = 0, None
        elif t == "roll":
            if owner is not None and e["player"] != owner and len(e["dice"]) == 6:
                claimed = 0
            owner = e["player"] if owner is None else owner
        elif t == "keep":
            if "points" not in e:  # pragma: no cover - every keep has its claim here
                continue
            claimed += e["points"]
            if id(e) in running:
                del e["points"]
                e["turn_points"] = claimed


def total_before(ev: list, index: int, player: str) -> int:
    """The player's claimed total before event `index` (clean structure)."""
    for e in reversed(ev[1:index]):
        if e["type"] in ("bank", "farkle") and e["player"] == player and "total" in e:
            return e["total"]
    return 0


def _random_roll(rng: random.Random, n: int, farkle: bool, rules: Ruleset) -> list[int] | None:
    table = dice_tables(rules).farkle
    for _ in range(2000):
        dice = [rng.randint(1, 6) for _ in range(n)]
        if table[counts_key(dice_counts(dice))] == farkle:
            return dice
    return None


def _show(dice) -> str:
    return "[" + ",".join(map(str, dice)) + "]"


def _set_bank_to_claims(ev: list, turn: Turn) -> None:
    end = ev[turn.end]
    if end["type"] == "bank":
        end["points"] = sum(ev[k]["points"] for k in turn.keeps)


# ---- the injectors: each edits ev (a fresh copy) or returns None when its site is unusable ----
Injector = Callable[[list, Ctx], "list[Planted] | None"]


def inj_bad_json(ev, ctx):
    rng = ctx.rng
    k = rng.randrange(1, len(ev))
    src = ev[k]
    text = encode(src)
    variant = rng.choice(("cut", "nan", "repr"))
    if variant == "cut" or ("points" not in src and variant == "nan"):
        raw = text[: rng.randrange(len(text) // 2, len(text) - 1)]
        what = "a line cut off mid-write"
    elif variant == "nan":
        raw = text.replace(b'"points":' + str(src["points"]).encode(), b'"points":NaN', 1)
        what = "points written as NaN (not JSON)"
    else:
        raw = repr(src).encode()
        what = "an event written as a Python dict (single quotes)"
    ev.insert(k, Raw(raw, None, None))
    return [Planted(ev[k], "bad_json", what)]


def inj_bad_event(ev, ctx):
    rng = ctx.rng
    k = rng.randrange(1, len(ev) - 1)
    src = dict(ev[k])
    gid, seq = src["game_id"], src["seq"]
    variants = ["missing", "type", "ts", "array"]
    if "dice" in src:
        variants += ["die7", "die7", "empty"]
    if "points" in src:
        variants.append("string")
    variant = rng.choice(variants)
    if variant == "die7":
        dice = list(src["dice"])
        dice[rng.randrange(len(dice))] = 7
        src["dice"] = dice
        what = f"a die of 7 in {_show(dice)}"
    elif variant == "missing":
        name = rng.choice([f for f in ("player", "dice", "points", "type") if f in src])
        del src[name]
        what = f"field {name!r} missing"
    elif variant == "type":
        src["type"] = rng.choice(("undo", "Roll", "pass"))
        what = f"unknown type {src['type']!r}"
    elif variant == "empty":
        src["dice"] = []
        what = "an empty dice list"
    elif variant == "ts":
        src["ts"] = rng.choice(("yesterday", "2024-13-01T00:00:00Z", "17:02"))
        what = f"malformed ts {src['ts']!r}"
    elif variant == "string":
        src["points"] = str(src["points"])
        what = "points as a string"
    else:
        ev.insert(k, Raw(encode([src["type"], src.get("player"), src.get("dice")]), None, None))
        return [Planted(ev[k], "bad_event", "a JSON array instead of an object")]
    ev.insert(k, Raw(encode(src), gid, seq))
    return [Planted(ev[k], "bad_event", what)]


def inj_unknown_game(ev, ctx):
    rng = ctx.rng
    k = rng.randrange(1, len(ev) - 1)
    stray = dict(ev[k])
    stray["game_id"] = ctx.gid + rng.choice(("-b", "x", "-old"))
    ev.insert(rng.randrange(1, len(ev) + 1), stray)
    return [Planted(stray, "unknown_game", f"a {stray['type']} of game {stray['game_id']!r}, never started")]


def inj_seq_error(ev, ctx):
    rng = ctx.rng
    variant = rng.choice(("gap", "gap", "repeat", "backward", "start", "lost_end"))
    if variant == "lost_end":
        # a turn-ending line lost with its seq: the gap comes before the missing_turn_end
        end, t, roll = _drop_turn_end(ev, ctx)
        return [Planted(roll, "seq_error", f"{t.player}'s {end['type']} line (seq {end['seq']}) was lost")]
    if variant == "gap":
        k = rng.randrange(2, len(ev))
        d = rng.randint(1, 3)
        for e in ev[k:]:
            e["seq"] += d
        return [Planted(ev[k], "seq_error", f"seq jumps by {d + 1}")]
    if variant == "repeat":
        k = rng.randrange(1, len(ev) - 1)
        dup = dict(ev[k])
        ev.insert(k + 1, dup)
        return [Planted(dup, "seq_error", f"a {dup['type']} written twice")]
    if variant == "backward":
        k = rng.randrange(3, len(ev) - 1)
        old = dict(ev[rng.randrange(1, k - 1)])
        ev.insert(k + 1, old)
        return [Planted(old, "seq_error", f"an old {old['type']} (seq {old['seq']}) re-sent")]
    d = rng.randint(1, 40)
    for e in ev:
        e["seq"] += d
    return [Planted(ev[0], "seq_error", f"game numbered from {d + 1}")]


def inj_play_after_game_over(ev, ctx):
    rng = ctx.rng
    end = ev[-1]
    last = ev[-2]
    seat = ctx.players.index(last["player"])
    name = ctx.players[(seat + 1) % len(ctx.players)]
    dice = [rng.randint(1, 6) for _ in range(6)]
    roll = {"game_id": ctx.gid, "seq": 0, "ts": end["ts"], "type": "roll", "player": name, "dice": dice}
    ev.insert(len(ev) - 1, roll)
    renumber(ev)
    return [Planted(roll, "play_after_game_over", f"{name} rolls after the final round")]


def inj_wrong_player(ev, ctx):
    rng = ctx.rng
    turns = turns_of(ev)
    if rng.random() < 0.5:
        turn = rng.choice(turns)
        # not a six-dice roll after a keep: under another player's name that reads as a lost
        # turn end (missing_turn_end), not as a mislabelled roll
        inside = [
            k
            for k in range(turn.start + 1, turn.end + 1)
            if ev[k]["type"] != "bank"
            and not (ev[k]["type"] == "roll" and len(ev[k]["dice"]) == 6 and ev[k - 1]["type"] == "keep")
        ]
        if not inside:
            return None
        k = rng.choice(inside)
        others = [p for p in ctx.players if p != turn.player]
        if others and rng.random() < 0.6:
            name = rng.choice(others)
        else:
            name = turn.player.capitalize() if rng.random() < 0.5 else turn.player + "?"
        ev[k]["player"] = name
        return [Planted(ev[k], "wrong_player", f"{ev[k]['type']} logged as {name!r} in {turn.player}'s turn")]
    if len(ctx.players) < 2:
        return None
    i = rng.randrange(len(turns) - 1)
    turn = turns[i]
    del ev[turn.start : turn.end + 1]
    recompute(ev, ctx)
    nxt = ev[turn.start]
    return [Planted(nxt, "wrong_player", f"{turn.player}'s turn is missing; {nxt['player']} plays out of turn")]


def inj_missed_farkle(ev, ctx):
    rng = ctx.rng
    rolls = [k for k in range(1, len(ev) - 1) if ev[k]["type"] == "roll" and ev[k + 1]["type"] == "keep"]
    k = rng.choice(rolls)
    dice = _random_roll(rng, len(ev[k]["dice"]), True, ctx.rules)
    if dice is None:
        return None
    ev[k]["dice"] = dice
    return [Planted(ev[k + 1], "missed_farkle", f"roll {_show(dice)} scores nothing, yet the turn goes on")]


def inj_missing_keep(ev, ctx):
    rng = ctx.rng
    turns = turns_of(ev)
    if rng.random() < 0.5:
        banks = [t for t in turns if ev[t.end]["type"] == "bank"]
        turn = rng.choice(banks)
        k = turn.keeps[-1]
        bank = ev[turn.end]
        del ev[k]
        renumber(ev)
        return [Planted(bank, "missing_keep", "the keep before this bank was never logged")]
    pairs = [(t, k) for t in turns for k in t.keeps if k + 1 < t.end and ev[k + 1]["type"] == "roll"]
    if not pairs:
        return None
    turn, k = rng.choice(pairs)
    nxt = ev[k + 1]
    del ev[k]
    turn = next(t for t in turns_of(ev) if t.start == turn.start)
    _set_bank_to_claims(ev, turn)
    recompute(ev, ctx)
    return [Planted(nxt, "missing_keep", "rolled again with no keep logged from the previous roll")]


def inj_wrong_dice_count(ev, ctx):
    rng = ctx.rng
    turn = rng.choice(turns_of(ev))
    r = turn.rolls[-1]
    roll = list(ev[r]["dice"])
    farkle_table = dice_tables(ctx.rules).farkle
    after = ev[r + 1]
    options = []
    if after["type"] == "keep":
        rest = list(roll)
        for d in after["dice"]:
            rest.remove(d)
        if rest and len(roll) >= 2:
            options.append(("drop", rng.choice(rest)))
        if len(roll) < 6:
            options.append(("add", rng.randint(1, 6)))
    else:
        if len(roll) >= 2:
            options.append(("drop", rng.choice(roll)))
        if len(roll) < 6:
            extra = [d for d in range(1, 7) if farkle_table[counts_key(dice_counts(roll + [d]))]]
            if extra:
                options.append(("add", rng.choice(extra)))
    if not options:
        return None
    how, die = rng.choice(options)
    if how == "drop":
        roll.remove(die)
    else:
        roll.insert(rng.randrange(len(roll) + 1), die)
    ev[r]["dice"] = roll
    return [Planted(ev[r], "wrong_dice_count", f"roll logged with {len(roll)} dice ({how} a {die})")]


def inj_kept_not_rolled(ev, ctx):
    rng = ctx.rng
    k = rng.choice([i for i, e in enumerate(ev) if e["type"] == "keep"])
    roll = ev[k - 1]["dice"]
    keep = list(ev[k]["dice"])
    have = dice_counts(roll)
    i = rng.randrange(len(keep))
    faces = [f for f in (1, 5, 2, 3, 4, 6) if f != keep[i]]
    rng.shuffle(faces)
    faces.sort(key=lambda f: f not in (1, 5))
    for f in faces:
        trial = keep[:i] + [f] + keep[i + 1 :]
        if dice_counts(trial)[f - 1] > have[f - 1]:
            ev[k]["dice"] = sorted(trial)
            return [Planted(ev[k], "kept_not_rolled", f"keep {_show(sorted(trial))} from roll {_show(roll)}")]
    return None


def inj_non_scoring_kept(ev, ctx):
    rng = ctx.rng
    value = dice_tables(ctx.rules).value
    turns = [t for t in turns_of(ev) if ev[t.end]["type"] == "bank"]
    turn = rng.choice(turns)
    k = turn.keeps[-1]
    roll = ev[k - 1]["dice"]
    rest = list(roll)
    for d in ev[k]["dice"]:
        rest.remove(d)
    junk = [d for d in rest if value[counts_key(dice_counts(list(ev[k]["dice"]) + [d]))] is None]
    if not junk:
        return None
    d = rng.choice(junk)
    ev[k]["dice"] = sorted(list(ev[k]["dice"]) + [d])
    return [Planted(ev[k], "non_scoring_kept", f"a {d} that scores nothing set aside with the keep")]


def inj_cross_roll_meld(ev, ctx):
    rng = ctx.rng
    rules = ctx.rules
    turns = [t for t in turns_of(ev) if 2 <= len(t.keeps) <= MAX_KEEPS]
    if not turns:
        return None
    turn = rng.choice(turns)
    keeps = [(list(ev[k]["dice"]), ev[k]["points"]) for k in turn.keeps]
    if ev[turn.end]["type"] == "bank" and rng.random() < 0.4:
        found = list(meld_subsets(keeps, rules, 2))
        if not found:
            return None
        s, together, _ = rng.choice(found)
        claim = together + sum(c for i, (_, c) in enumerate(keeps) if i not in s)
        bank = ev[turn.end]
        bank["points"] = claim
        recompute(ev, ctx)
        union = sorted(d for i in s for d in keeps[i][0])
        return [
            Planted(bank, "cross_roll_meld", f"bank counts {_show(union)} from {len(s)} rolls as one meld ({together})")
        ]
    j = rng.randrange(1, len(keeps))
    dice, own = keeps[j]
    options = []
    for s, together, _apart in meld_subsets(keeps[:j] + [keeps[j]], rules, 2):
        if j not in s:
            continue
        earlier = [i for i in s if i != j]
        claimed_s = sum(keeps[i][1] for i in earlier)
        if together > own + sum(value_of(keeps[i][0], rules) for i in earlier):
            options.append((earlier, together, together - claimed_s))
            options.append((earlier, together, together))
    if not options:
        return None
    earlier, together, claim = rng.choice(options)
    k = turn.keeps[j]
    ev[k]["points"] = claim
    _set_bank_to_claims(ev, turn)
    recompute(ev, ctx)
    union = sorted(d for i in earlier + [j] for d in keeps[i][0])
    return [
        Planted(
            ev[k],
            "cross_roll_meld",
            f"keep {_show(dice)} claimed {claim}: {_show(union)} over {len(earlier) + 1} rolls scored as one ({together})",
        )
    ]


DELTAS = (50, -50, 100, -100, 150, 200, -200, 500, 1000)


def inj_scoring_error(ev, ctx):
    rng = ctx.rng
    turn = rng.choice([t for t in turns_of(ev) if 1 <= len(t.keeps) <= MAX_KEEPS])
    j = rng.randrange(len(turn.keeps))
    k = turn.keeps[j]
    own = ev[k]["points"]
    earlier = [(list(ev[i]["dice"]), ev[i]["points"]) for i in turn.keeps[:j]]
    if id(ev[k]) in ctx.running and j > 0 and rng.random() < 0.5:
        # an app's accumulation bug: the running total starts again at this keep (after hot
        # dice, say), so its claim is its own value less what the turn had claimed before
        claim = own - sum(c for _, c in earlier)
        what = f"running total reset at keep {_show(ev[k]['dice'])}: claims {claim}, worth {own}"
    else:
        claim = own + rng.choice(DELTAS)
        if claim < 0:
            return None
        what = f"keep {_show(ev[k]['dice'])} claimed {claim}, worth {own}"
    if claim == own or keep_is_cross_roll(earlier, ev[k]["dice"], claim, ctx.rules):
        return None
    ev[k]["points"] = claim
    _set_bank_to_claims(ev, turn)
    recompute(ev, ctx)
    return [Planted(ev[k], "scoring_error", what)]


def inj_bank_mismatch(ev, ctx):
    rng = ctx.rng
    turn = rng.choice([t for t in turns_of(ev) if ev[t.end]["type"] == "bank" and len(t.keeps) <= MAX_KEEPS])
    bank = ev[turn.end]
    keeps = [(list(ev[k]["dice"]), ev[k]["points"]) for k in turn.keeps]
    claim = bank["points"] + rng.choice(DELTAS)
    if claim < 0 or bank_is_cross_roll(keeps, claim, ctx.rules):
        return None
    was = bank["points"]
    bank["points"] = claim
    recompute(ev, ctx)
    return [Planted(bank, "bank_mismatch", f"bank claims {claim}, keeps add up to {was}")]


def _cut_to_bank(ev, ctx, turn: Turn, j: int) -> dict:
    """Turn ends with a bank right after its j-th keep (claims so far)."""
    k = turn.keeps[j]
    points = sum(ev[i]["points"] for i in turn.keeps[: j + 1])
    bank = {
        "game_id": ctx.gid,
        "seq": 0,
        "ts": ev[k + 1]["ts"],
        "type": "bank",
        "player": turn.player,
        "points": points,
        "total": 0,
    }
    ev[k + 1 : turn.end + 1] = [bank]
    recompute(ev, ctx)
    return bank


def _bank_below(ev, ctx, opened: bool, limit: int, code: str):
    rng = ctx.rng
    first_bank: dict[str, int] = {}
    for t in turns_of(ev):
        if ev[t.end]["type"] == "bank":
            first_bank.setdefault(t.player, t.end)
    sites = []
    for t in turns_of(ev):
        fb = first_bank.get(t.player, len(ev))
        if opened != (t.start > fb):
            continue
        claims = 0
        last = len(t.keeps) - (1 if ev[t.end]["type"] == "bank" else 0)
        for j in range(last):
            claims += ev[t.keeps[j]]["points"]
            if claims < limit:
                sites.append((t, j, claims))
    if not sites:
        return None
    t, j, claims = rng.choice(sites)
    bank = _cut_to_bank(ev, ctx, t, j)
    return [Planted(bank, code, f"{t.player} banks {claims}, below {limit}")]


def inj_bank_below_opening(ev, ctx):
    return _bank_below(ev, ctx, False, ctx.rules.opening, "bank_below_opening")


def inj_bank_below_minimum(ev, ctx):
    return _bank_below(ev, ctx, True, ctx.rules.min_bank, "bank_below_minimum")


def inj_total_mismatch(ev, ctx):
    rng = ctx.rng
    turn = rng.choice([t for t in turns_of(ev) if ev[t.end]["type"] == "bank"])
    bank = ev[turn.end]
    delta = rng.choice(DELTAS + (-bank["points"],))
    if delta == 0:
        return None
    right = bank["total"]
    bank["total"] = right + delta
    ctx.freeze(bank, "total")
    recompute(ev, ctx)
    why = "the points were never added" if delta == -bank["points"] else f"off by {delta}"
    return [Planted(bank, "total_mismatch", f"total {bank['total']}, should be {right}: {why}")]


def inj_false_farkle(ev, ctx):
    rng = ctx.rng
    turns = turns_of(ev)
    farkles = [t for t in turns if ev[t.end]["type"] == "farkle"]
    if farkles and rng.random() < 0.6:
        t = rng.choice(farkles)
        r = t.end - 1
        dice = _random_roll(rng, len(ev[r]["dice"]), False, ctx.rules)
        if dice is None:
            return None
        ev[r]["dice"] = dice
        return [Planted(ev[t.end], "false_farkle", f"farkle called on {_show(dice)}, which scores")]
    t = rng.choice([t for t in turns if ev[t.end]["type"] == "bank"])
    bank = ev[t.end]
    farkle = {"game_id": ctx.gid, "seq": 0, "ts": bank["ts"], "type": "farkle", "player": t.player}
    ev[t.end] = farkle
    recompute(ev, ctx)
    return [Planted(farkle, "false_farkle", "farkle logged after a keep instead of the bank")]


def inj_penalty_error(ev, ctx):
    rng = ctx.rng
    rules = ctx.rules
    turns = [t for t in turns_of(ev) if ev[t.end]["type"] == "farkle"]
    if not turns:
        return None
    t = rng.choice(turns)
    f = ev[t.end]
    before = total_before(ev, t.end, t.player)
    if rules.farkle_penalty:
        if f["total"] != before:
            claim, what = before, "the penalty was not taken off"
        else:
            claim, what = before - rules.farkle_penalty, "a penalty taken off too early"
    else:
        x = rng.choice((500, 1000, 300))
        claim, what = before - x, f"{x} taken off though this table has no penalty"
    f["total"] = claim
    ctx.freeze(f, "total")
    recompute(ev, ctx)
    return [Planted(f, "penalty_error", what)]


def inj_final_score_mismatch(ev, ctx):
    rng = ctx.rng
    end = ev[-1]
    scores = dict(end["scores"])
    p = rng.choice(ctx.players)
    delta = rng.choice(DELTAS)
    scores[p] += delta
    end["scores"] = scores
    ctx.freeze(end, "scores")
    ctx.freeze(end, "winner")
    return [Planted(end, "final_score_mismatch", f"{p}'s final score off by {delta}")]


def inj_wrong_winner(ev, ctx):
    rng = ctx.rng
    variant = rng.choice(("name", "early", "unfinished"))
    end = ev[-1]
    if variant == "name":
        scores = end["scores"]
        top = max(scores.values())
        losers = [p for p in ctx.players if scores[p] != top]
        tied = [p for p in ctx.players if scores[p] == top]
        if len(tied) > 1:
            end["winner"] = rng.choice(tied)
            what = "a tie, but only one winner named"
        elif losers:
            end["winner"] = rng.choice(losers)
            what = f"{end['winner']} named winner with {scores[end['winner']]}"
        else:
            return None
        ctx.freeze(end, "winner")
        return [Planted(end, "wrong_winner", what)]
    turns = turns_of(ev)
    if end.get("reason") == "abandoned":
        # the game stopped early, but its game_end does not say it was abandoned
        del end["reason"]
        if end.get("winner") is None or "scores" not in end:
            return None
        planted = [Planted(end, "wrong_winner", "game ended early without saying it was abandoned")]
        if len(ev) - 2 > (turns[-1].end if turns else 0):  # cut mid-turn: that turn stays open
            planted.append(Planted(end, "missing_turn_end", "the turn the game stopped in was never ended"))
        ctx.freeze(end, "winner")
        ctx.freeze(end, "scores")
        return planted
    target = ctx.rules.target
    if target is None or ctx.rules.rounds is not None:  # ended early: cut after any turn but the last
        t = turns[rng.randrange(len(turns) - 1)]
        what = "game_end before the game was over"
    else:
        reach = next(i for i, t in enumerate(turns) if ev[t.end].get("total", -(10**18)) >= target)
        if variant == "early":
            if reach == 0:
                return None
            t = turns[rng.randrange(reach)]
            what = "game_end before anyone reached the target"
        else:
            if reach == len(turns) - 1:
                return None
            t = turns[reach]
            what = "game_end before the final round was played"
    del ev[t.end + 1 : len(ev) - 1]
    recompute(ev, ctx)
    return [Planted(ev[-1], "wrong_winner", what)]


def lost_end_sites(ev) -> list[Turn]:
    """Turns whose ending line can be dropped so that the next line reveals it (log-format.md,
    "a lost turn end"): the next turn starts right after with a six-dice roll by another player."""
    turns = turns_of(ev)
    return [
        t
        for t, nxt in zip(turns, turns[1:])
        if nxt.start == t.end + 1 and nxt.player != t.player and len(ev[nxt.start]["dice"]) == 6
    ]


def _drop_turn_end(ev, ctx) -> tuple[dict, Turn, dict]:
    """Remove one turn-ending line (a bank or a farkle); returns (the line, its turn, the roll after it)."""
    t = ctx.rng.choice(lost_end_sites(ev))
    end = ev.pop(t.end)
    return end, t, ev[t.end]


def inj_missing_turn_end(ev, ctx):
    rng = ctx.rng
    if rng.random() < 0.5:
        # the turn-ending line is lost and seq numbering closes over it (a client that numbers
        # what it writes): the next player's six dice reveal it
        end, t, roll = _drop_turn_end(ev, ctx)
        renumber(ev)
        return [Planted(roll, "missing_turn_end", f"{t.player}'s {end['type']} line was lost before this roll")]
    t = rng.choice(turns_of(ev))
    k = rng.randrange(t.start, t.end)
    del ev[k + 1 :]
    return [
        Planted(ev[k], "missing_turn_end", "log cut off mid-turn"),
        Planted(ev[k], "game_incomplete", "log cut off mid-turn: no game_end"),
    ]


def inj_game_incomplete(ev, ctx):
    rng = ctx.rng
    turns = turns_of(ev)
    t = turns[-1] if rng.random() < 0.3 else rng.choice(turns)
    del ev[t.end + 1 :]
    return [Planted(ev[-1], "game_incomplete", "log cut off between turns: no game_end")]


INJECTORS: dict[str, Injector] = {code: globals()[f"inj_{code}"] for code in INJECTABLE}


def injectable_under(code: str, rules: Ruleset) -> str | None:
    """None when `code` can be planted under `rules`, else why not."""
    if code in NOT_INJECTABLE:
        return NOT_INJECTABLE[code]
    if code not in INJECTORS:
        return "not a finding code"
    need = NEEDS.get(code)
    if need and not getattr(rules, need[0]):
        return need[1]
    return None


def inject(events: list[dict], code: str, rules: Ruleset, rng: random.Random) -> Injected | None:
    """Plant one error of `code` in a copy of a clean game; None if no site works."""
    gid = events[0]["game_id"]
    players = list(events[0]["players"])
    if injectable_under(code, rules):
        return None
    for _ in range(ATTEMPTS):
        ev = [dict(e) for e in events]
        ctx = Ctx(rules, rng, gid, players)
        ctx.running = claims_of_running(ev)
        try:
            planted = INJECTORS[code](ev, ctx)
        except (LookupError, ValueError, StopIteration):
            planted = None  # the game has no site of this kind (e.g. no farkle turn, no scores)
        if planted is None:
            continue
        if ctx.running:
            running_of_claims(ev, ctx.running)
        if _verified(ev, planted, gid, rules):
            return Injected(ev, planted)
    return None


def _verified(items: list, planted: list[Planted], gid: str, rules: Ruleset) -> bool:
    """The independent checker finds exactly the planted findings in the game's own events."""
    own = [e for e in items if isinstance(e, dict) and e["game_id"] == gid]
    want = sorted(
        (next(i for i, e in enumerate(own) if e is p.target), p.code)
        for p in planted
        if not isinstance(p.target, Raw) and p.target["game_id"] == gid
    )
    try:
        got = sorted(check_game(own, rules))
    except (KeyError, TypeError, ValueError):
        return False
    return got == want

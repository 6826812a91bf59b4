"""Judging logged choices against the solved single-turn policy.

Two kinds of choice are judged, both as "expected points banked this turn" (MODEL_NOTE):

- a **keep**: with `points` in the turn, `dice` rolled and `kept` taken from them, the keep
  made is worth V(points + value(kept), dice left after it, 6 after hot dice) and the best
  keep is the maximum of that over every legal keep of the roll;
- a **bank-or-roll** after a keep, with `points` (this keep included) and `dice_left`: the
  choice made is worth the bank value or the roll value, the best is the larger.

loss = best - made (>= 0); a choice is optimal when loss < OPTIMAL_TOL.

The SQL path (`sql/int_decision_values.sql`) computes the same from three Arrow tables built
here per ruleset and registered in DuckDB by `pipeline.stats.session` (as `exact_odds` is):
`policy_values` (the solver's state table below the cap), `policy_tail` (per dice count, the
closed form at or above the cap: bank = points, roll = (1 - farkle_prob) * points + a_inf)
and `keep_options` (every legal keep of each of the 923 rolls of 1-6 dice, with its value and
the dice left after it). `farkle-logs audit --coach` judges one game with the functions
below; a test checks that both paths give the same losses.

A choice is judged only when its state is valid (`judge_game` and the SQL apply the same
rules): the keep is a legal scoring keep of the roll it follows, turn points are on the
ruleset's grid, and the bank-or-roll follows such a keep with the turn points and dice left
it implies. Anything else (a keep after a bust, a second keep from one roll, a ruleset the
solver cannot read) is "not judged".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Sequence

import pyarrow as pa

from pipeline.rules import Ruleset, RulesetError
from pipeline.rules.scoring import counts_to_dice
from pipeline.rules.play import key_counts
from pipeline.rules.table import dice_key, score_table, sub_keys
from pipeline.strategy.export import policy_table
from pipeline.strategy.solver import BANK, MODEL_NOTE, ROLL, TOL, Policy, solve

OPTIMAL_TOL = 1e-6  # points: a choice losing less than this is optimal
DEFAULT_BLUNDER_THRESHOLD = 150.0  # points: a loss above this is a blunder

VALUES_SCHEMA = pa.schema(
    [
        ("ruleset", pa.string()),
        ("points", pa.int64()),
        ("dice_left", pa.int32()),
        ("opened", pa.bool_()),
        ("bank_value", pa.float64()),
        ("roll_value", pa.float64()),
        ("value", pa.float64()),
    ]
)
TAIL_SCHEMA = pa.schema(
    [
        ("ruleset", pa.string()),
        ("dice_left", pa.int32()),
        ("cap", pa.int64()),
        ("granularity", pa.int64()),
        ("farkle_prob", pa.float64()),
        ("a_inf", pa.float64()),
    ]
)
KEEPS_SCHEMA = pa.schema(
    [
        ("ruleset", pa.string()),
        ("roll_key", pa.int64()),
        ("kept_key", pa.int64()),
        ("kept_dice", pa.string()),  # "1 5": sorted faces
        ("kept_n", pa.int32()),
        ("keep_value", pa.int64()),
        ("dice_after", pa.int32()),  # dice left to roll after the keep (6 after hot dice)
    ]
)


def show_dice(dice: Iterable[int]) -> str:
    return " ".join(str(d) for d in sorted(dice))


def policy_for(text: str | None) -> Policy | None:
    """The solved policy of a games.ruleset text; None when it cannot be read or solved."""
    if text is None:
        return None
    try:
        return solve(Ruleset.from_value(json.loads(text)))
    except (ValueError, RulesetError):
        return None


def policy_tables(ruleset_texts: Sequence[str | None]) -> dict[str, pa.Table]:
    """`policy_values`, `policy_tail` and `keep_options` for every solvable ruleset text."""
    values: list[pa.Table] = []
    tail: dict[str, list] = {n: [] for n in TAIL_SCHEMA.names}
    keeps: dict[str, list] = {n: [] for n in KEEPS_SCHEMA.names}
    for text in sorted({t for t in ruleset_texts if t is not None}):
        policy = policy_for(text)
        if policy is None:
            continue
        states = policy_table(policy)  # the one walk over the solved states
        states = states.append_column("ruleset", pa.array([text] * states.num_rows, pa.string()))
        values.append(states.select(VALUES_SCHEMA.names).cast(VALUES_SCHEMA))
        for n in range(1, 7):
            tail["ruleset"].append(text)
            tail["dice_left"].append(n)
            tail["cap"].append(policy.cap)
            tail["granularity"].append(policy.granularity)
            tail["farkle_prob"].append(policy.farkle[n - 1])
            tail["a_inf"].append(policy.tail_gain(n))
        table = score_table(policy.rules)
        for row in table.rows:
            n = row.n_dice
            for sub in sub_keys()[row.key]:
                v = table.value[sub]
                if v is None:
                    continue
                kept = counts_to_dice(key_counts(sub))
                keeps["ruleset"].append(text)
                keeps["roll_key"].append(row.key)
                keeps["kept_key"].append(sub)
                keeps["kept_dice"].append(show_dice(kept))
                keeps["kept_n"].append(len(kept))
                keeps["keep_value"].append(v)
                keeps["dice_after"].append(6 if len(kept) == n else n - len(kept))
    return {
        "policy_values": pa.concat_tables(values) if values else VALUES_SCHEMA.empty_table(),
        "policy_tail": pa.table(tail, schema=TAIL_SCHEMA),
        "keep_options": pa.table(keeps, schema=KEEPS_SCHEMA),
    }


# ---- judging in Python (the coach; the reference the SQL is tested against) ----------
@dataclass(frozen=True)
class Judgement:
    """One judged choice. kind: "keep" or "action"; made/best: "1 5" or "bank"/"roll"."""

    kind: str
    made: str
    best: str
    value_made: float
    value_best: float

    @property
    def loss(self) -> float:
        return self.value_best - self.value_made

    @property
    def optimal(self) -> bool:
        return self.loss < OPTIMAL_TOL


def on_grid(policy: Policy, points: int | None) -> bool:
    return points is not None and points >= 0 and points % policy.granularity == 0


def judge_action(policy: Policy, points: int, dice_left: int, opened: bool, choice: str) -> Judgement:
    """Bank-or-roll with `points` (the keep included) and `dice_left` dice to roll."""
    bank = policy.bank_value(points, dice_left, opened)
    roll = policy.roll_value(points, dice_left, opened)
    best = ROLL if roll > bank + TOL else BANK
    made = bank if choice == BANK else roll
    return Judgement("action", choice, best, made, max(bank, roll))


def keep_outcome(policy: Policy, roll: Sequence[int], kept: Sequence[int]) -> tuple[int, int] | None:
    """(value of the keep, dice left after it) if `kept` is a legal scoring keep of `roll`."""
    key, sub = dice_key(roll), dice_key(kept)
    if not kept or sub not in sub_keys().get(key, ()):
        return None
    v = score_table(policy.rules).value[sub]
    if v is None:
        return None
    return v, 6 if len(kept) == len(roll) else len(roll) - len(kept)


def judge_keep(policy: Policy, points: int, roll: Sequence[int], kept: Sequence[int], opened: bool) -> Judgement:
    """The keep `kept` from `roll` with `points` before it (must be a legal scoring keep).
    The best keep is named as `Policy.keep_values` orders them (on equal value fewer dice)."""
    outcome = keep_outcome(policy, roll, kept)
    if outcome is None:
        raise ValueError(f"{show_dice(kept)} is not a legal scoring keep of {show_dice(roll)}")
    v, after = outcome
    made = policy.value(points + v, after, opened)
    best_dice, best = policy.keep_values(points, roll, opened)[0]
    return Judgement("keep", show_dice(kept), show_dice(best_dice), made, best)


@dataclass(frozen=True)
class Judged:
    """One choice of a game, judged or not (`judgement` None, `why` says why)."""

    kind: str
    game_id: str
    seq: int
    player: str
    turn: int
    points: int | None
    dice: int | None  # keep: dice rolled; action: dice left to roll
    opened: bool
    roll: str | None  # keep: the roll
    made: str
    judgement: Judgement | None
    why: str | None = None


def judge_game(policy: Policy | None, rolls: Sequence, decisions: Sequence) -> list[Judged]:
    """Every keep (`RollRecord` with `kept`) and bank-or-roll (`DecisionRecord`) of a game's
    replay records, judged under the same validity rules as sql/int_decision_values.sql."""
    out: list[Judged] = []
    by_turn: dict[tuple[str, int], list] = {}
    for r in sorted(rolls, key=lambda r: r.seq):
        by_turn.setdefault((r.player, r.turn), []).append(r)
    keep_info: dict[int, tuple[int, int] | None] = {}  # roll seq -> (points after, dice after)
    for r in rolls:
        if r.kept is None:
            continue
        why, judgement, info = None, None, None
        outcome = keep_outcome(policy, r.dice, r.kept) if policy is not None else None
        if policy is None:
            why = "no policy for this ruleset"
        elif not r.scored or outcome is None:
            why = "not a legal scoring keep of the roll"
        elif not on_grid(policy, r.points_before):
            why = "turn points off the ruleset's grid"
        else:
            judgement = judge_keep(policy, r.points_before, r.dice, r.kept, r.opened)
            info = (r.points_before + outcome[0], outcome[1])
        keep_info[r.seq] = info
        out.append(
            Judged(
                "keep",
                r.game_id,
                r.seq,
                r.player,
                r.turn,
                r.points_before,
                r.dice_count,
                r.opened,
                show_dice(r.dice),
                show_dice(r.kept),
                judgement,
                why,
            )
        )
    for d in decisions:
        earlier = [r for r in by_turn.get((d.player, d.turn), []) if r.seq < d.seq]
        last = earlier[-1] if earlier else None
        info = keep_info.get(last.seq) if last is not None else None
        why, judgement = None, None
        if policy is None:
            why = "no policy for this ruleset"
        elif info is None:
            why = "does not follow a judged keep"
        elif info != (d.turn_points_corrected, d.dice_left) or d.choice not in (BANK, ROLL):
            why = "turn points or dice left do not follow from the keep"
        else:
            judgement = judge_action(policy, d.turn_points_corrected, d.dice_left, d.opened, d.choice)
        out.append(
            Judged(
                "action",
                d.game_id,
                d.seq,
                d.player,
                d.turn,
                d.turn_points_corrected,
                d.dice_left,
                d.opened,
                None,
                d.choice,
                judgement,
                why,
            )
        )
    out.sort(key=lambda j: (j.seq, j.kind != "keep"))
    return out


def coach_game(items: Iterable, game_id: str, default_rules: Ruleset | None = None):
    """Replay one game from log items (Event / BadLine; other games are skipped) and judge
    every choice in it: (its GameResult or None if the game is not in the items, the
    policy or None if its ruleset cannot be solved, the judged choices in seq order)."""
    result, policy, judged, _ = coach_game_turns(items, game_id, default_rules)
    return result, policy, judged


def coach_game_turns(items: Iterable, game_id: str, default_rules: Ruleset | None = None):
    """`coach_game` and the game's replayed turns (TurnRecord), which the winning-chance
    yardstick needs for the banked totals at each turn's start."""
    from pipeline.replay import Replayer

    replayer = Replayer(default_rules, records=True)
    for item in items:
        if getattr(item, "game_id", None) == game_id:
            replayer.feed(item)
    replayer.finish()
    out = replayer.drain()
    result = next((g for g in out.games if g.game_id == game_id), None)
    if result is None:
        return None, None, [], []
    turns = [t for t in out.turns if t.game_id == game_id]
    try:
        policy = solve(result.ruleset)
    except ValueError:
        policy = None
    rolls = [r for r in out.rolls if r.game_id == game_id]
    decisions = [d for d in out.decisions if d.game_id == game_id]
    return result, policy, judge_game(policy, rolls, decisions), turns


__all__ = [
    "coach_game",
    "coach_game_turns",
    "DEFAULT_BLUNDER_THRESHOLD",
    "MODEL_NOTE",
    "OPTIMAL_TOL",
    "Judged",
    "Judgement",
    "judge_action",
    "judge_game",
    "judge_keep",
    "keep_outcome",
    "policy_for",
    "policy_tables",
]

"""One game's choices judged by the winning chance they cost (`audit --game ID --coach`, the
dispute view's winning-chance graph).

The same judgement as the stats path (pipeline.solved.judge), one game at a time and
in Python: the banked totals at each turn's start come from the replayed turns (the
mover's corrected total after their previous turn; the other's after their last turn that
had ended when this one started, a lost end implied by this turn's first roll included),
and a choice is judged when its single-turn judgement is (`judge.judge_game`) and its
two-player state holds (two players, totals on the grid, the mover below the target, opened
exactly when above 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pipeline.rules.table import dice_key, score_table
from pipeline.strategy.race import Race, TurnView, keep_choices

BANK, ROLL = "bank", "roll"


@dataclass(frozen=True)
class RaceJudgement:
    mover_total: int
    other_total: int
    chance_best: float  # the mover's chance before the choice, under best play
    chance_made: float  # after the choice made
    best: str  # the best keep ("1 5") or "bank" / "roll"

    @property
    def loss_pp(self) -> float:
        return (self.chance_best - self.chance_made) * 100.0


def turn_totals(turns: Sequence, players: Sequence[str]) -> dict[tuple[str, int], tuple[int, int]]:
    """(player, turn) -> (the mover's banked total at its start, the other player's)."""
    out: dict[tuple[str, int], tuple[int, int]] = {}
    if len(players) != 2:
        return out
    other = {players[0]: players[1], players[1]: players[0]}
    previous: dict[str, int] = {}
    ordered = sorted(turns, key=lambda t: (t.start_seq, t.turn))
    for t in ordered:
        mine = previous.get(t.player, 0)
        ended = [
            u for u in ordered if u.player == other.get(t.player) and u.end_seq is not None and u.end_seq <= t.start_seq
        ]
        theirs = max(ended, key=lambda u: u.end_seq).corrected_total if ended else 0
        out[(t.player, t.turn)] = (mine, theirs)
        previous[t.player] = t.corrected_total
    return out


def judge_race(
    race: Race, judged: Sequence, turns: Sequence, players: Sequence[str]
) -> dict[tuple[str, int], RaceJudgement]:
    """(kind, state seq) -> the winning-chance judgement of each judgeable choice."""
    totals = turn_totals(turns, players)
    g = race.granularity
    views: dict[tuple[int, int], TurnView] = {}
    values = score_table(race.rules).value
    out: dict[tuple[str, int], RaceJudgement] = {}
    for j in judged:
        if j.judgement is None or (j.player, j.turn) not in totals:
            continue
        mine, theirs = totals[(j.player, j.turn)]
        if mine < 0 or theirs < 0 or mine % g or theirs % g or mine // g >= race.n_levels:
            continue
        if race.rules.opening > 0 and (mine > 0) != bool(j.opened):
            continue
        view = views.get((mine, theirs))
        if view is None:
            view = views[(mine, theirs)] = race.turn(mine, theirs)
        p = j.points // g
        if j.kind == "keep":
            roll = tuple(int(d) for d in j.roll.split())
            kept = tuple(int(d) for d in j.made.split())
            choices = keep_choices(view, p, len(roll), roll)
            made_value = values[dice_key(kept)] or 0
            after = 6 if len(kept) == len(roll) else len(roll) - len(kept)
            made = view.value(p + made_value // g, after)
            best_dice, best = choices[0]
            out[(j.kind, j.seq)] = RaceJudgement(mine, theirs, best, made, " ".join(map(str, best_dice)))
        else:
            bank = view.bank(p) if p > 0 else -1.0
            roll_value = view.roll(p, j.dice)
            made = bank if j.made == BANK else roll_value
            best_name = ROLL if roll_value > bank + 1e-12 else BANK
            out[(j.kind, j.seq)] = RaceJudgement(mine, theirs, max(bank, roll_value), made, best_name)
    return out

"""An independent, compact reading of log-format.md's findings, for one well-formed game.

The simulator uses it to prove its own output: a clean game must give no finding, and an
injected game exactly the findings its manifest promises (an injection site that would give
anything else is rejected and another one tried). It is deliberately separate from
`pipeline.replay`: the tests compare the two, so agreement means something.

Input: the game's events as dicts in log order (valid events only; bad lines and events of
other games are the caller's business). Output: `(event index, code)` pairs in order.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from pipeline.rules import Ruleset, corrected_keep_value, counts_key, dice_counts
from pipeline.simulate.dice import dice_tables

TURN_TYPES = {"roll", "keep", "bank", "farkle"}
#: The meld search looks at every set of earlier keeps, 2^k of them; past this many keeps
#: only the most recent are searched (the simulator never alters claims in such turns).
SEARCH_KEEPS = 16


def value_of(dice, rules: Ruleset) -> int:
    """value(X) of log-format.md: the corrected value of any multiset of dice."""
    return corrected_keep_value(dice, rules)


def meld_subsets(keeps: list[tuple[list[int], int]], rules: Ruleset, min_size: int):
    """Yield (S indices, value of the union, sum of values) for sets S of earlier keeps that
    are worth more together than apart."""
    for size in range(min_size, len(keeps) + 1):
        for s in combinations(range(len(keeps)), size):
            union = [d for i in s for d in keeps[i][0]]
            together = value_of(union, rules)
            apart = sum(value_of(keeps[i][0], rules) for i in s)
            if together > apart:
                yield s, together, apart


def keep_is_cross_roll(keeps, dice, claimed, rules) -> bool:
    own = value_of(dice, rules)
    if claimed == own:
        return False
    keeps = keeps[-SEARCH_KEEPS:]
    for size in range(1, len(keeps) + 1):
        for s in combinations(range(len(keeps)), size):
            union = [d for i in s for d in keeps[i][0]] + list(dice)
            together = value_of(union, rules)
            if together > own + sum(value_of(keeps[i][0], rules) for i in s):
                claimed_s = sum(keeps[i][1] for i in s)
                if claimed in (together - claimed_s, together):
                    return True
    return False


def bank_is_cross_roll(keeps, claimed, rules) -> bool:
    if claimed == sum(c for _, c in keeps):
        return False
    outside = sum(c for _, c in keeps[:-SEARCH_KEEPS])
    keeps = keeps[-SEARCH_KEEPS:]
    for s, together, _ in meld_subsets(keeps, rules, 2):
        if claimed == outside + together + sum(c for i, (_, c) in enumerate(keeps) if i not in s):
            return True
    return False


def _submultiset(kept, rolled) -> bool:
    a, b = dice_counts(kept), dice_counts(rolled)
    return all(x <= y for x, y in zip(a, b))


def check_game(events: list[dict[str, Any]], default_rules: Ruleset | None = None) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    if not events or events[0].get("type") != "game_start":
        return [(i, "unknown_game") for i in range(len(events))]
    start = events[0]
    rules = (
        Ruleset.from_value(start["rules"])
        if start.get("rules") is not None
        else (default_rules or Ruleset.builtin("standard"))
    )
    tabs = dice_tables(rules)
    players = list(start["players"])
    seat = {p: i for i, p in enumerate(players)}
    n = len(players)
    if start["seq"] != 1:
        out.append((0, "seq_error"))
    expected = start["seq"] + 1

    totals = [0] * n
    opened = [False] * n
    streak = [0] * n
    played = [0] * n  # turns ended, per seat (the round limit)
    first, remaining, over = -1, 0, False
    next_seat = 0
    turn_open = False
    tp = 0
    phase = ""  # "rolled" | "kept"
    roll: list[int] = []
    kept_n = 0
    missed = False
    keeps: list[tuple[list[int], int]] = []
    ended = False

    def lost_end() -> None:
        """log-format.md, "a lost turn end": end the open turn as the log implies, with no
        finding of its own: a bank of the claimed keeps after a keep, else a farkle."""
        if phase == "kept":
            totals[tp] += sum(c for _, c in keeps)
            opened[tp] = True
            streak[tp] = 0
        else:
            s = streak[tp] + 1
            due = rules.farkle_penalty if rules.farkle_penalty and s == rules.penalty_after else 0
            totals[tp] -= due
            streak[tp] = 0 if due else s
        end_turn()

    def end_turn() -> None:
        nonlocal turn_open, next_seat, first, remaining, over
        turn_open = False
        next_seat = (tp + 1) % n
        played[tp] += 1
        if first < 0:
            if rules.target is not None and totals[tp] >= rules.target:
                first, remaining = tp, n - 1
        else:
            remaining -= 1
        over = (first >= 0 and remaining <= 0) or (rules.rounds is not None and min(played) >= rules.rounds)

    for i in range(1, len(events)):
        e = events[i]
        typ, seq = e["type"], e["seq"]
        codes: list[str] = []
        if seq < expected:
            out.append((i, "seq_error"))
            continue
        if seq > expected:
            codes.append("seq_error")
        if typ == "game_start":  # not replayed, and uses up no seq
            out.append((i, "seq_error"))
            continue
        expected = seq + 1
        if typ in TURN_TYPES and (over or ended):
            out.append((i, codes[0] if codes else "play_after_game_over"))
            continue
        lost = (
            typ == "roll"
            and turn_open
            and e["player"] in seat
            and seat[e["player"]] != tp
            and len(e["dice"]) == 6
            and (phase == "kept" or (phase == "rolled" and missed))
        )
        if lost:
            lost_end()
            missed = False
            if over:  # the implied end was the final round's last turn
                out.append((i, codes[0] if codes else "play_after_game_over"))
                continue
        if typ in TURN_TYPES:
            name = e["player"]
            if name not in seat:
                codes.append("wrong_player")
            elif turn_open and seat[name] != tp:
                codes.append("wrong_player")
            elif not turn_open and typ == "roll" and seat[name] != next_seat:
                codes.append("wrong_player")
        if lost:
            codes.append("missing_turn_end")
        if typ == "roll":
            dice = e["dice"]
            if turn_open:
                if missed:
                    codes.append("missed_farkle")
                if phase == "rolled":
                    codes.append("missing_keep")
                want = len(roll) if phase == "rolled" else (6 if kept_n == len(roll) else len(roll) - kept_n)
            else:
                want = 6
                turn_open = True
                tp = seat[e["player"]] if e["player"] in seat else next_seat
                keeps = []
                missed = False
            if len(dice) != want:
                codes.append("wrong_dice_count")
            roll, kept_n, phase = list(dice), 0, "rolled"
            missed = tabs.farkle[counts_key(dice_counts(dice))]
        elif typ == "keep":
            dice = e["dice"]
            if "turn_points" in e:  # the running total: the claim is what it adds to the keeps before
                claimed = e["turn_points"] - (sum(c for _, c in keeps) if turn_open else 0)
            else:
                claimed = e["points"]
            if missed:
                codes.append("missed_farkle")
            if not turn_open or phase != "rolled" or not _submultiset(dice, roll):
                codes.append("kept_not_rolled")
            if len(dice) <= 6 and tabs.value.get(counts_key(dice_counts(dice))) is None:
                codes.append("non_scoring_kept")
            elif len(dice) > 6:
                codes.append("kept_not_rolled")
            if keep_is_cross_roll(keeps, dice, claimed, rules):
                codes.append("cross_roll_meld")
            if claimed != value_of(dice, rules):
                codes.append("scoring_error")
            missed = False
            keeps.append((list(dice), claimed))
            kept_n, phase = len(dice), "kept"
        elif typ == "bank":
            claimed, total = e["points"], e["total"]
            if missed:
                codes.append("missed_farkle")
            if not turn_open or phase != "kept":
                codes.append("missing_keep")
            if bank_is_cross_roll(keeps, claimed, rules):
                codes.append("cross_roll_meld")
            if claimed != sum(c for _, c in keeps):
                codes.append("bank_mismatch")
            if not opened[tp] and rules.opening and claimed < rules.opening:
                codes.append("bank_below_opening")
            if claimed < rules.min_bank:
                codes.append("bank_below_minimum")
            if total != totals[tp] + claimed:
                codes.append("total_mismatch")
            missed = False
            totals[tp] = total
            opened[tp] = True
            streak[tp] = 0
            end_turn()
        elif typ == "farkle":
            if turn_open and (phase == "kept" or not missed):
                codes.append("false_farkle")
            s = streak[tp] + 1
            due = rules.farkle_penalty if rules.farkle_penalty and s == rules.penalty_after else 0
            after = totals[tp] - due
            if "total" in e and e["total"] != after:
                codes.append("penalty_error")
            totals[tp] = e["total"] if "total" in e else after
            streak[tp] = 0 if s == rules.penalty_after and rules.farkle_penalty else s
            missed = False
            end_turn()
        elif typ == "game_end":
            abandoned = e.get("reason") == "abandoned"
            if abandoned:
                turn_open = False  # forfeited: no points, no penalty, no finding
            if not abandoned or "scores" in e:
                scores = e.get("scores") or {}
                if any(scores.get(p) != totals[k] for k, p in enumerate(players)):
                    codes.append("final_score_mismatch")
            winner = e.get("winner")
            top = max(totals)
            leaders = {p for k, p in enumerate(players) if totals[k] == top}
            if winner is None:
                if not abandoned:
                    codes.append("wrong_winner")
            else:
                named = {winner} if isinstance(winner, str) else set(winner)
                if (not over and not abandoned) or named != leaders:
                    codes.append("wrong_winner")
            ended = True
        if codes:
            out.append((i, codes[0]))
    last = len(events) - 1
    if turn_open:
        out.append((last, "missing_turn_end"))
    if not ended:
        out.append((last, "game_incomplete"))
    return out

"""The dispute view's verdict: the one sentence a referee reads out first.

"ana wins 10,600–10,550 by the dice; bo's claimed win rests on the cross-roll meld at seq 178,
line 178": who won by the dice and by how much, then, when the log claimed another winner,
the findings that claim rests on. Built from the rows the page already holds (the game's
seats and its findings); no figure is computed here that the dataset does not store.
"""

from __future__ import annotations

from typing import Any, Sequence

EVIDENCE_SHOWN = 2  # findings named in the sentence; the rest are counted


def verdict(seats: Sequence[dict[str, Any]], findings: Sequence[dict[str, Any]], complete: bool) -> str:
    """`seats`: the game's players with claimed_total, corrected_total, won_claimed and
    won_corrected (report model game_players); `findings`: every finding of the game, with
    seq, line, code, severity and player; `complete`: the log has its game_end."""
    players = [s for s in seats if s.get("player") is not None]
    if not players:
        return "No players were recorded for this game."
    errors = [f for f in findings if f.get("severity") == "error"]
    by_dice = sorted(players, key=lambda s: -(s["corrected_total"] or 0))
    if not complete:
        leaders = [s["player"] for s in by_dice if s["corrected_total"] == by_dice[0]["corrected_total"]]
        lead = _score(by_dice, leaders)
        return (
            f"No winner: the log ends before the game does (no game_end); by the dice {_names(leaders)} "
            f"{'leads' if len(leaders) == 1 else 'lead'}{lead}."
        )
    winners = [s["player"] for s in players if s["won_corrected"]]
    claimed = [s["player"] for s in players if s["won_claimed"]]
    if len(winners) > 1:
        text = f"{_names(winners)} tie at {by_dice[0]['corrected_total']:,} by the dice"
    elif winners:
        text = f"{winners[0]} wins{_score(by_dice, winners)} by the dice"
    else:
        text = "No winner by the dice"
    if set(claimed) == set(winners):
        if not errors:
            return f"{text}, as claimed; no findings."
        return f"{text}, as claimed; {_count(len(errors), 'error')} in the log did not change the winner."
    if not claimed:
        return f"{text}; the log names no winner."
    if set(claimed) < set(winners):  # a tie by the dice, claimed for fewer of them
        claim = f"the claim that {_names(claimed)} won {'alone' if len(claimed) == 1 else 'without ' + _names([w for w in winners if w not in claimed])}"
    elif len(claimed) == 1:
        claim = f"{claimed[0]}'s claimed win"
    else:
        claim = f"the claimed tie of {_names(claimed)}"
    return f"{text}; {claim} rests on {_evidence(claimed, errors)}."


def _score(by_dice: Sequence[dict[str, Any]], leaders: Sequence[str]) -> str:
    """' 10,600–10,550': the leaders' total and the best of the others ('' alone at the table)."""
    others = [s for s in by_dice if s["player"] not in leaders]
    top = by_dice[0]["corrected_total"] or 0
    if not others:
        return f" with {top:,}"
    return f" {top:,}–{others[0]['corrected_total'] or 0:,}"


def _evidence(claimed: Sequence[str], errors: Sequence[dict[str, Any]]) -> str:
    """The claimed winners' own errors (what raised their claim), else every error of the
    game (a wrong winner named at game_end, another player's total), in seq order."""
    theirs = [f for f in errors if f.get("player") in claimed] or list(errors)
    if not theirs:
        return "no finding of the audit: the claimed totals are what the dice say"
    theirs = sorted(theirs, key=lambda f: (f.get("seq") is None, f.get("seq") or 0))
    named = [_finding(f, claimed) for f in theirs[:EVIDENCE_SHOWN]]
    more = len(theirs) - len(named)
    text = " and ".join(named) if len(named) <= 2 else ", ".join(named)
    return text + (f", and {_count(more, 'more error')}" if more else "")


def _finding(f: dict[str, Any], claimed: Sequence[str]) -> str:
    """'the cross-roll meld at seq 178, line 178', or "milo's bank mismatch at ..." for a
    finding about someone other than the claimed winners."""
    where = []
    if f.get("seq") is not None:
        where.append(f"seq {f['seq']}")
    if f.get("line") is not None:
        where.append(f"line {f['line']}")
    whose = f"{f['player']}'s" if f.get("player") and f["player"] not in claimed else "the"
    return f"{whose} {phrase(f['code'])}" + (f" at {', '.join(where)}" if where else "")


# Codes whose words alone would read wrongly in "rests on the ..."
PHRASES = {
    "cross_roll_meld": "cross-roll meld",
    "wrong_winner": "game_end naming the wrong winner",
    "kept_not_rolled": "keep of dice not rolled",
    "non_scoring_kept": "non-scoring keep",
    "unknown_game": "event of an unknown game",
}


def phrase(code: str) -> str:
    """A finding code as words: cross_roll_meld -> 'cross-roll meld', scoring_error ->
    'scoring error'."""
    return PHRASES.get(code, code.replace("_", " "))


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(n: int, word: str) -> str:
    return f"{n:,} {word if n == 1 else word + 's'}"

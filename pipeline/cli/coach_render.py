"""`farkle-logs audit --game ID --coach`: every choice of one game against the exact
single-turn policy (pipeline.strategy.judge), as text or JSON."""
from __future__ import annotations

import json
from typing import Sequence

from pipeline.strategy.judge import Judged
from pipeline.strategy.solver import MODEL_NOTE


def _state(j: Judged) -> str:
    if j.kind == "keep":
        return f"keep from {j.roll} ({j.points} pts)"
    return f"bank/roll at {j.points} pts, {j.dice} dice left"


def coach_rows(judged: Sequence[Judged], threshold: float) -> list[dict]:
    rows = []
    for j in judged:
        g = j.judgement
        rows.append(
            {
                "seq": j.seq,
                "player": j.player,
                "turn": j.turn,
                "kind": j.kind,
                "points": j.points,
                "dice": j.dice,
                "opened": j.opened,
                "roll": j.roll,
                "made": j.made,
                "best": g.best if g else None,
                "value_made": g.value_made if g else None,
                "value_best": g.value_best if g else None,
                "loss": g.loss if g else None,
                "judged": g is not None,
                "blunder": bool(g and g.loss > threshold),
                "not_judged_because": j.why,
            }
        )
    return rows


def coach_text(game_id: str, judged: Sequence[Judged], threshold: float) -> str:
    lines = [f"coach: game {game_id}", f"note: {MODEL_NOTE}", ""]
    header = f"{'seq':>5}  {'player':<10} {'turn':>4}  {'choice':<40} {'made':<13} {'best':<13} {'value':>8} {'best':>8} {'loss':>8}"
    lines.append(header)
    totals: dict[str, list[float]] = {}
    for j in judged:
        g = j.judgement
        per = totals.setdefault(j.player, [0, 0.0, 0, 0, 0])
        if g is None:
            per[4] += 1
            tail = f"{'':<13} {'':>8} {'':>8} {'-':>8}  not judged: {j.why}"
        else:
            per[0] += 1
            per[1] += g.loss
            per[2] += g.optimal
            per[3] += g.loss > threshold
            mark = "  BLUNDER" if g.loss > threshold else ("" if g.optimal else "")
            tail = f"{g.best:<13} {g.value_made:>8.1f} {g.value_best:>8.1f} {g.loss:>8.1f}{mark}"
        lines.append(f"{j.seq:>5}  {j.player:<10} {j.turn:>4}  {_state(j):<40} {j.made:<13} {tail}")
    lines.append("")
    lines.append(f"per player (blunder = loss above {threshold:g} expected points):")
    for player, (n, loss, optimal, blunders, not_judged) in totals.items():
        mean = f"{loss / n:.1f}" if n else "-"
        lines.append(
            f"  {player}: {n} choices judged, mean loss {mean}, optimal {optimal}/{n}, "
            f"blunders {blunders}, not judged {not_judged}"
        )
    return "\n".join(lines) + "\n"


def coach_json(game_id: str, judged: Sequence[Judged], threshold: float) -> str:
    return json.dumps(
        {"game_id": game_id, "model": MODEL_NOTE, "blunder_threshold": threshold,
         "choices": coach_rows(judged, threshold)}
    ) + "\n"

"""`farkle-logs audit --game ID --coach`: every choice of one game against the exact
single-turn policy (pipeline.strategy.judge), as text or JSON.

The seq shown for a choice is the seq of the log line that made it, so it can be looked up
in the log: the keep for a keep, the roll or bank after the keep for a bank-or-roll. (The
judge keys a keep by the roll it was taken from and a bank-or-roll by the keep it followed;
JSON gives that as `state_seq`.)
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

from pipeline.cli.text import plain_table, printable

if TYPE_CHECKING:
    from pipeline.cli.text import LazyConsole
    from pipeline.strategy.judge import Judged

TURN_ENDS = ("roll", "bank", "farkle")
#: Terminals this wide get the winning-chance columns in the table itself.
WIDE_COLUMNS = 110


def event_seqs(judged: Sequence[Judged], events: Sequence[tuple[int, str]]) -> dict[tuple[str, int], int]:
    """(kind, state seq) -> seq of the event that made the choice: the first keep after the
    roll, or the first roll, bank or farkle after the keep (`events`: (seq, type) of the game)."""
    ordered = sorted(events)
    out: dict[tuple[str, int], int] = {}
    for j in judged:
        wanted = ("keep",) if j.kind == "keep" else TURN_ENDS
        out[(j.kind, j.seq)] = next((seq for seq, kind in ordered if seq > j.seq and kind in wanted), j.seq)
    return out


def coach_rows(
    judged: Sequence[Judged], threshold: float, seqs: dict[tuple[str, int], int] | None = None, race: dict | None = None
) -> list[dict]:
    rows = []
    for j in judged:
        g = j.judgement
        r = (race or {}).get((j.kind, j.seq))
        rows.append(
            {
                "seq": (seqs or {}).get((j.kind, j.seq), j.seq),
                "state_seq": j.seq,
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
                "totals": [r.mover_total, r.other_total] if r else None,
                "win_chance_before": r.chance_best if r else None,
                "win_chance_after": r.chance_made if r else None,
                "win_best": r.best if r else None,
                "win_loss_pp": r.loss_pp if r else None,
            }
        )
    return rows


def coach_text(
    game_id: str,
    judged: Sequence[Judged],
    threshold: float,
    seqs: dict[tuple[str, int], int],
    console: LazyConsole,
    race: dict | None = None,
) -> None:
    """One row per choice: seq, player, turn, the turn's points, the dice (the roll a keep
    was taken from, or the dice left to roll), what was made, the best choice and the loss;
    then a line per player. Expected values are in the JSON. In a two-player game the
    winning chance before each choice, the choice that keeps it and the points it lost are
    three more columns on a terminal of WIDE_COLUMNS or more, else a line per choice after
    the table (`seq N player: ...`), so no row wraps."""
    from pipeline.strategy.solver import MODEL_NOTE

    console.line(f"coach: game {game_id}")
    console.line(f"note: {MODEL_NOTE}", indent="  ")
    console.line(
        "A keep is judged against the roll it was taken from, a bank-or-roll with the dice "
        f"left to roll; * marks a blunder (a loss above {threshold:g} expected points).",
        indent="  ",
    )
    wide = race is not None and console.width >= WIDE_COLUMNS
    table = plain_table(
        ("seq", True),
        ("player", False),
        ("turn", True),
        ("points", True),
        ("dice", False),
        ("made", False),
        ("best", False),
        ("loss", True),
        *((("chance", True), ("win best", False), ("lost pp", True)) if wide else ()),
    )
    for column in table.columns[4:7]:
        column.no_wrap = True  # dice and choices read as a whole or not at all
    totals: dict[str, list[float]] = {}
    not_judged: dict[str, list[int]] = {}
    race_totals: dict[str, list[float]] = {}
    race_lines: list[str] = []
    for j, row in zip(judged, coach_rows(judged, threshold, seqs, race)):
        r = (race or {}).get((j.kind, j.seq))
        if r is not None:
            rt = race_totals.setdefault(j.player, [0, 0.0])
            rt[0] += 1
            rt[1] += r.loss_pp
        race_cells: tuple[str, ...] = ()
        if wide:
            race_cells = (
                (f"{r.chance_best:.1%}", printable(r.best), f"{r.loss_pp:.2f}") if r is not None else ("", "", "-")
            )
        elif r is not None:
            race_lines.append(
                f"seq {row['seq']} {printable(j.player)}: chance {r.chance_best:.1%}, best {printable(r.best)}, "
                f"lost {r.loss_pp:.2f} pp"
            )
        g = j.judgement
        per = totals.setdefault(j.player, [0, 0.0, 0, 0, 0])
        dice = j.roll if j.kind == "keep" else f"{j.dice} left"
        if g is None:
            per[4] += 1
            best, loss_text = "", "-"
            not_judged.setdefault(j.why or "not judged", []).append(row["seq"])
        else:
            per[0] += 1
            per[1] += g.loss
            per[2] += g.optimal
            per[3] += g.loss > threshold
            best, loss_text = g.best, f"{g.loss:.1f}" + (" *" if g.loss > threshold else "  ")
        table.add_row(
            str(row["seq"]),
            printable(j.player),
            str(j.turn),
            f"{j.points:,}" if j.points is not None else "",
            printable(dice),
            printable(j.made),
            printable(best),
            loss_text,
            *race_cells,
        )
    console.print(table)
    for why, seq_list in not_judged.items():
        console.line(f"not judged ({why}): seq {', '.join(map(str, seq_list))}", indent="  ")
    console.line("per player:")
    for player, (n, loss, optimal, blunders, unjudged) in totals.items():
        mean = f"{loss / n:.1f}" if n else "-"
        console.line(
            f"  {player}: {n} choice{'s' if n != 1 else ''} judged, mean loss {mean}, optimal {optimal}/{n}, "
            f"blunders {blunders}, not judged {unjudged}",
            indent="    ",
        )
    if race is not None:
        from pipeline.strategy.race import MODEL_NOTE as RACE_NOTE

        console.line(
            f"winning chance ({RACE_NOTE}): chance = before the choice, under best play; lost pp = "
            "percentage points of the game the choice gave up.",
            indent="  ",
        )
        for text in race_lines:
            console.line(text, indent="    ")
        for player, (n, lost) in race_totals.items():
            console.line(f"  {player}: {n} choices judged, {lost:.2f} pp lost in the game", indent="    ")


def coach_json(
    game_id: str,
    judged: Sequence[Judged],
    threshold: float,
    seqs: dict[tuple[str, int], int] | None = None,
    race: dict | None = None,
) -> str:
    from pipeline.strategy.race import MODEL_NOTE as RACE_NOTE
    from pipeline.strategy.solver import MODEL_NOTE

    return (
        json.dumps(
            {
                "game_id": game_id,
                "model": MODEL_NOTE,
                "blunder_threshold": threshold,
                "win_model": None if race is None else RACE_NOTE,
                "choices": coach_rows(judged, threshold, seqs, race),
            }
        )
        + "\n"
    )

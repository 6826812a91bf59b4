"""A hand-kept scoresheet beside the dispute view's replay (`report --game ID --scoresheet CSV`).

The same check as `audit --scoresheet` (pipeline.audit.scoresheet: parse_sheet, compare_sheet,
the numbering hint), run against the turns the dataset stores for the game instead of a
replay of the logs: ingest stored the corrected turns, so both give the same findings. The
page then shows each turn's sheet row next to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from pipeline.audit.scoresheet import (
    SheetError,
    SheetProblem,
    SheetRow,
    across_game_numbering,
    compare_sheet,
    numbering_hint,
    parse_sheet,
)
from pipeline.model import Finding, TurnRecord

TURN_FIELDS = (
    "player",
    "turn",
    "start_seq",
    "end_seq",
    "rolls",
    "hot_dice",
    "outcome",
    "claimed_points",
    "corrected_points",
    "claimed_total",
    "corrected_total",
)


@dataclass
class SheetView:
    """One sheet's rows of the dispute game and what the check found."""

    file: str
    game_id: str
    rows: dict[tuple[str, int], SheetRow]  # (player, turn) -> the sheet's row
    findings: list[Finding]
    checked: int  # the sheet's rows of this game
    problems: list[SheetProblem] = field(default_factory=list)
    other_rows: int = 0  # rows of other games: not this page's
    hints: list[str] = field(default_factory=list)

    def for_turn(self, player: str, turn: int) -> SheetRow | None:
        return self.rows.get((player, turn))

    def findings_at(self, line: int | None = None, seq: int | None = None, code: str | None = None) -> list[Finding]:
        return [
            f
            for f in self.findings
            if (line is None or f.line == line) and (seq is None or f.seq == seq) and (code is None or f.code == code)
        ]

    def summary(self) -> str:
        """The sheet's verdict, as `audit` words it."""
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.code] = counts.get(f.code, 0) + 1
        rows = f"{self.checked:,} row{'s' if self.checked != 1 else ''} of game {self.game_id} checked"
        if self.findings:
            codes = ", ".join(f"{n} {code}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            n = len(self.findings)
            text = f"Scoresheet {self.file}: {n} difference{'s' if n != 1 else ''} from the replay ({codes}); {rows}"
        else:
            text = f"Scoresheet {self.file}: agrees with the replay; {rows}"
        if self.problems:
            n = len(self.problems)
            text += f"; {n} row{'s' if n != 1 else ''} could not be read"
        if self.other_rows:
            text += f"; {self.other_rows:,} row{'s' if self.other_rows != 1 else ''} of other games left aside"
        return text + "."


def turn_records(game_id: str, turns: Sequence[dict[str, Any]]) -> list[TurnRecord]:
    """The stored turns of a game (report model game_turns rows) as the replay's records."""
    return [
        TurnRecord(
            game_id=game_id,
            dice_left=None,
            end_implied=bool(t.get("end_implied")),
            **{name: t[name] for name in TURN_FIELDS},
        )
        for t in turns
    ]


def check(name: str, text: str, game_id: str, turns: Sequence[dict[str, Any]]) -> SheetView:
    """The sheet (display name, CSV text) against the game's stored turns. SheetError when
    the sheet holds no row of the game: nothing of it belongs on this page."""
    rows, problems = parse_sheet(text, name)
    mine = [r for r in rows if r.game_id == game_id]
    if not mine:
        games = ", ".join(dict.fromkeys(r.game_id for r in rows)) or "none"
        raise SheetError(f"{name}: no row of game {game_id} (the sheet's games: {games})")
    records = turn_records(game_id, turns)
    findings = compare_sheet(mine, records, [game_id], name)
    by_turn: dict[tuple[str, int], SheetRow] = {}
    for row in mine:
        by_turn.setdefault((row.player, row.turn), row)
    return SheetView(
        file=name,
        game_id=game_id,
        rows=by_turn,
        findings=findings,
        checked=len(mine),
        problems=problems,
        other_rows=len(rows) - len(mine),
        hints=[numbering_hint(name, g) for g in across_game_numbering(mine, records)],
    )

"""Hand-kept scoresheets checked against the corrected replay (log-format.md, Scoresheets).

A disputed game often arrives with the paper sheet someone kept. Each row is matched on
(game_id, player, turn) with the replay's corrected turn; points and total are checked
independently, so one copied-wrong score shows up in every later total of that player,
which is exactly what the people arguing over the sheet need to see.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Iterable

from pipeline.errors import UserError
from pipeline.model import Finding, TurnRecord, severity_of

HEADER = ["game_id", "turn", "player", "points", "total"]


class SheetError(UserError):
    """A scoresheet that cannot be checked at all: unreadable, or its header is not HEADER."""


@dataclass(frozen=True)
class SheetRow:
    line: int
    game_id: str
    turn: int
    player: str
    points: int
    total: int


@dataclass(frozen=True)
class SheetProblem:
    """A row that could not be read: named with its line, never silently dropped."""

    file: str
    line: int
    reason: str


def check_header(name: str, text: str) -> None:
    """Raise SheetError when the sheet's header (or an empty sheet) rules out every row."""
    _, problems = parse_sheet(text.split("\n", 1)[0] + "\n", name)
    if problems:
        raise SheetError(f"{name}:{problems[0].line}: {problems[0].reason}")


def delimiter_of(text: str) -> str:
    """`;` when the header line has more of them than commas (a spreadsheet's export in a
    locale with a decimal comma), else `,`."""
    header = text.split("\n", 1)[0]
    return ";" if header.count(";") > header.count(",") else ","


def parse_sheet(text: str, file: str) -> tuple[list[SheetRow], list[SheetProblem]]:
    """The sheet's rows and the rows it could not read. The header is HEADER in that order;
    its case and the spaces around its names do not matter (`Game_ID, Turn, ...` as a
    spreadsheet writes it), and fields may be separated by `;` (delimiter_of)."""
    rows: list[SheetRow] = []
    problems: list[SheetProblem] = []
    # newline="": csv's own rule for \r and \r\n
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter_of(text))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        problems.append(SheetProblem(file, 1, f"header is not CSV: {exc}"))
        return rows, problems
    if header is None:
        problems.append(SheetProblem(file, 1, "empty scoresheet: expected header " + ",".join(HEADER)))
        return rows, problems
    if [h.strip().lower() for h in header] != HEADER:
        problems.append(SheetProblem(file, 1, f"header is {','.join(header)!r}, expected {','.join(HEADER)}"))
        return rows, problems
    for record in _records(reader, file, problems):
        line = reader.line_num
        if not record or all(not cell.strip() for cell in record):
            continue
        if len(record) != len(HEADER):
            problems.append(SheetProblem(file, line, f"expected {len(HEADER)} columns, got {len(record)}"))
            continue
        game_id, turn, player, points, total = (cell.strip() for cell in record)
        numbers: dict[str, int | None] = {}
        for name, raw in (("turn", turn), ("points", points), ("total", total)):
            try:
                numbers[name] = int(raw)
            except ValueError:
                numbers[name] = None
                problems.append(SheetProblem(file, line, f"{name} {raw!r} is not an integer"))
        turn_n, points_n, total_n = numbers["turn"], numbers["points"], numbers["total"]
        if turn_n is None or points_n is None or total_n is None:
            continue
        if turn_n < 1 or not game_id or not player:
            problems.append(SheetProblem(file, line, "game_id and player must be set and turn must be >= 1"))
            continue
        rows.append(SheetRow(line, game_id, turn_n, player, points_n, total_n))
    return rows, problems


def _records(reader, file: str, problems: list[SheetProblem]):
    """The reader's records; a row that is not CSV (a field over csv's size limit, a stray
    quote or \r) is a problem with its line, and reading goes on after it."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append(SheetProblem(file, reader.line_num, f"not a CSV row: {exc}"))


def compare_sheet(
    rows: Iterable[SheetRow], turns: Iterable[TurnRecord], logged_games: Iterable[str], file: str
) -> list[Finding]:
    """Findings for every sheet row that disagrees with the corrected replay, in sheet order,
    then the turns the sheet left out."""
    played: dict[tuple[str, str, int], TurnRecord] = {}
    by_game: dict[str, list[TurnRecord]] = {}
    for t in turns:
        played[(t.game_id, t.player, t.turn)] = t
        by_game.setdefault(t.game_id, []).append(t)
    games = set(logged_games)
    findings: list[Finding] = []
    seen: set[tuple[str, str, int]] = set()
    sheet_games: list[str] = []

    def finding(row_line, game_id, seq, player, code, message, claimed=None, expected=None):
        findings.append(
            Finding(game_id, seq, file, row_line, player, code, severity_of(code), message, claimed, expected)
        )

    for row in rows:
        key = (row.game_id, row.player, row.turn)
        where = f"{file}:{row.line}"
        if row.game_id not in games:
            finding(
                row.line,
                row.game_id,
                None,
                row.player,
                "sheet_extra_turn",
                f"{where}: game {row.game_id} is not in the logs",
            )
            continue
        if row.game_id not in sheet_games:
            sheet_games.append(row.game_id)
        if key in seen:
            finding(
                row.line,
                row.game_id,
                None,
                row.player,
                "sheet_extra_turn",
                f"{where}: a second row for {row.player}'s turn {row.turn}",
            )
            continue
        seen.add(key)
        turn = played.get(key)
        if turn is None:
            finding(
                row.line,
                row.game_id,
                None,
                row.player,
                "sheet_extra_turn",
                f"{where}: {row.player} never played a turn {row.turn} in game {row.game_id}",
            )
            continue
        if row.points != turn.corrected_points:
            finding(
                row.line,
                row.game_id,
                turn.end_seq,
                row.player,
                "sheet_points_mismatch",
                f"{where}: {row.player}'s turn {row.turn} scored {row.points} on the sheet, "
                f"{turn.corrected_points} by the dice ({turn.outcome})",
                row.points,
                turn.corrected_points,
            )
        if row.total != turn.corrected_total:
            finding(
                row.line,
                row.game_id,
                turn.end_seq,
                row.player,
                "sheet_total_mismatch",
                f"{where}: {row.player}'s total after turn {row.turn} is {row.total} on the sheet, "
                f"{turn.corrected_total} by the dice",
                row.total,
                turn.corrected_total,
            )
    for game_id in sheet_games:
        for t in by_game.get(game_id, ()):
            if t.outcome == "open" or (t.game_id, t.player, t.turn) in seen:
                continue
            finding(
                None,
                game_id,
                t.end_seq,
                t.player,
                "sheet_missing_turn",
                f"{file}: no row for {t.player}'s turn {t.turn} (ended at seq {t.end_seq}, "
                f"{t.corrected_points} points, total {t.corrected_total})",
                None,
                t.corrected_points,
            )
    return findings


def across_game_numbering(rows: Iterable[SheetRow], turns: Iterable[TurnRecord]) -> list[str]:
    """The games whose sheet numbers its turns across the game (1, 2, 3, ... over every
    player's turns in the order played) instead of per player (log-format.md: turn = the
    count of that player's turns). Such a sheet disagrees with the replay on almost every
    row; read the other way it agrees with more rows than read the right way (and with at
    least half of them), which is what is checked, game by game."""
    played: dict[str, list[TurnRecord]] = {}
    for t in turns:
        played.setdefault(t.game_id, []).append(t)
    by_game: dict[str, list[SheetRow]] = {}
    for row in rows:
        by_game.setdefault(row.game_id, []).append(row)
    found = []
    for game_id, game_rows in by_game.items():
        game_turns = sorted(played.get(game_id, ()), key=lambda t: t.start_seq)
        if len(game_rows) < 2 or not game_turns:
            continue
        own = {(t.player, t.turn): t for t in game_turns}
        in_order = {i: t for i, t in enumerate(game_turns, start=1)}

        def agrees(row: SheetRow, turn: TurnRecord | None) -> bool:
            return (
                turn is not None
                and turn.player == row.player
                and row.points == turn.corrected_points
                and row.total == turn.corrected_total
            )

        per_player = sum(agrees(r, own.get((r.player, r.turn))) for r in game_rows)
        across = sum(agrees(r, in_order.get(r.turn)) for r in game_rows)
        if across > per_player and 2 * across >= len(game_rows):
            found.append(game_id)
    return found


def numbering_hint(file: str, game_id: str) -> str:
    return (
        f"{file}: game {game_id}: the turn column looks numbered across the game (1, 2, 3, ... over "
        "every player's turns); it counts each player's own turns (each player's first turn is 1, their "
        "second 2, ...): renumber it that way and check again (docs/audit.md, Scoresheets)"
    )

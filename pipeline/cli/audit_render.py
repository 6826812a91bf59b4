"""How an audit is shown: text for people settling a dispute, json/jsonl/csv for machines.

Text is escaped and fits the terminal (pipeline/cli/text.py): a finding is its severity,
code and place on one line, its message wrapped under it; tables have no outer borders.
JSON and CSV carry the data exactly; winners are always lists of names (or null).
"""

from __future__ import annotations

import csv
import io
import json
from json.encoder import encode_basestring_ascii
import textwrap
from typing import TYPE_CHECKING, Any, Iterable, TextIO

from pipeline.cli.text import Listing, plural, printable, rule_text, terminal_width, wrap

if TYPE_CHECKING:
    from pipeline.audit.run import AuditReport
    from pipeline.model import Finding
    from pipeline.cli.text import LazyConsole

FINDING_FIELDS = ["game_id", "seq", "file", "line", "player", "code", "severity", "message", "claimed", "expected"]
SHEET_CODES = ("sheet_points_mismatch", "sheet_total_mismatch", "sheet_extra_turn", "sheet_missing_turn")


def as_names(winner: Any) -> list[str] | None:
    """A winner as log-format.md says every output gives it: a list of names, or null."""
    if winner is None:
        return None
    if isinstance(winner, str):
        return [winner]
    return list(winner)


def game_dict(game) -> dict[str, Any]:
    d = game.to_dict()
    d["winner_claimed"] = as_names(d["winner_claimed"])
    d["winner_corrected"] = as_names(d["winner_corrected"])
    return d


def write_json(report: AuditReport, out: TextIO, sheets: list[dict] | None = None) -> None:
    """The same text as json.dumps({"findings": [...], "games": [...]}, indent=2), written a
    finding at a time (an audit can have millions)."""
    out.write("{\n")
    _write_list(out, "findings", (f.to_dict() for f in report.findings), last=False)
    _write_list(out, "games", (game_dict(g) for g in report.games), last=not sheets)
    if sheets:
        _write_list(out, "scoresheets", sheets, last=True)
    out.write("}")


def _write_list(out: TextIO, name: str, items: Iterable[dict[str, Any]], last: bool) -> None:
    out.write(f"  {json.dumps(name)}: [")
    first = True
    for item in items:
        out.write("\n" if first else ",\n")
        first = False
        out.write(_indented(item))
    out.write("]" if first else "\n  ]")
    out.write("\n" if last else ",\n")


_dumps = json.dumps


def _indented(item: dict[str, Any]) -> str:
    """textwrap.indent(json.dumps(item, indent=2), "    "), built directly for dicts, lists
    and scalars (a finding, a game): json's indenting encoder is pure Python and would be
    most of a long audit's output time."""
    try:
        return "    " + _pretty(item, "    ")
    except _Unusual:
        return textwrap.indent(json.dumps(item, indent=2), "    ")


class _Unusual(Exception):
    """A value _pretty does not write itself (a key that is not a str, a subclass, ...)."""


_quote = encode_basestring_ascii  # what json.dumps writes a str as (ensure_ascii)
_CONSTANTS = {True: "true", False: "false", None: "null"}


def _pretty(value: Any, indent: str) -> str:
    """json.dumps(value, indent=2) for a value that starts `indent` into its line."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return _CONSTANTS[value]
    if kind is float:
        return _dumps(value)
    inner = indent + "  "
    if kind is dict:
        if not value:
            return "{}"
        if not all(type(k) is str for k in value):
            raise _Unusual
        body = f",\n{inner}".join(f"{_quote(k)}: {_pretty(v, inner)}" for k, v in value.items())
    elif kind is list or kind is tuple:
        if not value:
            return "[]"
        body = f",\n{inner}".join(_pretty(v, inner) for v in value)
        return f"[\n{inner}{body}\n{indent}]"
    else:
        raise _Unusual
    return f"{{\n{inner}{body}\n{indent}}}"


def write_jsonl(report: AuditReport, out: TextIO) -> None:
    for f in report.findings:
        out.write(json.dumps(f.to_dict()) + "\n")


def write_csv(report: AuditReport, out: TextIO, exact: bool = False) -> None:
    """The findings as CSV; text cells that start like a formula defused unless `exact`
    (pipeline/cli/csv_cells.py)."""
    from pipeline.cli.csv_cells import defused

    writer = csv.DictWriter(out, fieldnames=FINDING_FIELDS, lineterminator="\n")
    writer.writeheader()
    for f in report.findings:
        row = f.to_dict()
        writer.writerow(row if exact else {k: defused(v) for k, v in row.items()})


def as_json(report: AuditReport, sheets: list[dict] | None = None) -> str:
    buffer = io.StringIO()
    write_json(report, buffer, sheets)
    return buffer.getvalue()


def as_csv(report: AuditReport, exact: bool = False) -> str:
    buffer = io.StringIO()
    write_csv(report, buffer, exact)
    return buffer.getvalue()


def sheet_verdict(report: AuditReport, name: str, text: str) -> dict[str, Any]:
    """One scoresheet's verdict: rows checked, games found or not, differences by code."""
    from pipeline.audit.scoresheet import parse_sheet

    rows, problems = parse_sheet(text, name)
    sheet_games = list(dict.fromkeys(r.game_id for r in rows))
    result_of = report.games.get
    logged = {g for g in sheet_games if result_of(g) is not None}
    found = [g for g in sheet_games if g in logged]
    not_found = [g for g in sheet_games if g not in logged]
    differences = [f for f in report.findings if f.file == name and f.code in SHEET_CODES and f.game_id in logged]
    by_code: dict[str, int] = {}
    for f in differences:
        by_code[f.code] = by_code.get(f.code, 0) + 1
    checked = sum(1 for r in rows if r.game_id in logged)
    return {
        "file": name,
        "rows": len(rows),
        "rows_checked": checked,
        "rows_unreadable": len(problems),
        "games_found": found,
        "games_not_found": not_found,
        "differences": len(differences),
        "by_code": by_code,
        "agrees": checked == len(rows) and checked > 0 and not differences and not problems,
        "hints": list(report.sheet_hints),
    }


def verdict_line(v: dict[str, Any]) -> str:
    games = len(v["games_found"])
    where = f"{plural(v['rows_checked'], 'row')} of {plural(games, 'game')} checked"
    if not v["rows"]:
        return f"scoresheet {v['file']}: no rows to check"
    if not v["rows_checked"]:
        return f"scoresheet {v['file']}: nothing checked, none of its games is in these logs"
    if v["differences"]:
        codes = ", ".join(f"{n} {code}" for code, n in sorted(v["by_code"].items(), key=lambda kv: (-kv[1], kv[0])))
        text = (
            f"scoresheet {v['file']}: {v['differences']} difference{'s' if v['differences'] != 1 else ''} "
            f"from the replay ({codes}); {where}"
        )
    elif v["rows_unreadable"] or v["games_not_found"]:
        text = f"scoresheet {v['file']}: the rows checked agree with the replay; {where}"
    else:
        text = f"scoresheet {v['file']}: agrees with the replay; {where}"
    if v["rows_unreadable"]:
        text += f"; {v['rows_unreadable']} row{'s' if v['rows_unreadable'] != 1 else ''} could not be read"
    if v["games_not_found"]:
        text += f"; {len(v['games_not_found'])} of its games not in these logs (above)"
    return text


# ---------------------------------------------------------------------- text
def _names(names: list[str] | None) -> str:
    if not names:
        return "nobody"
    return names[0] if len(names) == 1 else " & ".join(names) + " (tie)"


def winner_lines(result) -> list[str]:
    """Who won, as claimed and by the dice, without calling a game over that is not."""
    claimed, corrected = as_names(result.winner_claimed), as_names(result.winner_corrected)
    target = getattr(result.ruleset, "target", None)
    best = max(result.corrected.values(), default=None)
    lines = []
    if not result.complete:
        lines.append("no winner: the log ends before the game does (no game_end)")
        if corrected:
            lines.append(f"leading by the dice: {_names(corrected)}")
        return lines
    if getattr(result, "ended", None) == "abandoned":
        lines.append(f"the game was abandoned; winner named: {_names(claimed) if claimed else 'none'}")
        if best is not None:
            leaders = [p for p, total in result.corrected.items() if total == best]
            lines.append(f"no winner by the dice (leading when it stopped: {_names(leaders)})")
        return lines
    same = "same as claimed" if set(claimed or ()) == set(corrected or ()) else "DIFFERENT from the claim"
    lines.append(f"winner claimed: {_names(claimed)}")
    rounds = getattr(result.ruleset, "rounds", None)
    if target is not None and rounds is None and best is not None and best < target:
        lines.append(
            f"by the dice nobody reached the target of {target:,}: the game was not over "
            f"({_names(corrected)} leads with {best:,})"
        )
    else:
        lines.append(f"winner by the dice: {_names(corrected)} ({same})")
    return lines


def print_text(report: AuditReport, console: LazyConsole, sheet: dict | None = None, show_clean: bool = False) -> None:
    """Game by game, as the finding store gives them back (it may have spilled to disk), so
    memory holds one game's findings at a time. Each game's text is made as one string and
    written at once; its tables are `Listing`s (text.py): an audit can show thousands.
    `show_clean`: the games without findings get their result too (`--game`: the games asked
    for), after those with findings."""
    out = _TextOut(console)
    result_of = report.games.get
    absent = _AbsentGames()  # sheet rows of games not in the logs: a line for each of the first few
    shown = 0  # games with findings that have a result
    with_findings: set[str | None] = set()
    findings: Iterable[Finding]
    for game_id, count, findings in report.findings.by_game():
        result = result_of(game_id)
        if game_id is not None and result is None:
            findings = list(findings)
            rows = [f for f in findings if f.code == "sheet_extra_turn"]
            if rows:
                absent.add(game_id, rows)
                findings = [f for f in findings if f.code != "sheet_extra_turn"]
                count = len(findings)
                if not count:
                    continue
        title = f"game {game_id}" if game_id is not None else "lines of no readable game"
        shown += result is not None
        with_findings.add(game_id)
        rules = f" [{result.ruleset.name}]" if result is not None else ""
        out.rule(f"{title}{rules}: {count} finding{'s' if count != 1 else ''}")
        for f in findings:
            where = f"{f.file}:{f.line}" if f.line is not None else (f.file or "")
            out.line(f"  {f.severity:<7} {f.code}  {where}", indent="    ")
            out.line(f"    {f.message}")
        timeline = report.timelines.get(game_id) if game_id is not None else None
        if timeline:
            table = Listing(
                ("seq", True),
                ("player", False),
                ("event", False),
                ("dice", False),
                ("claimed", True),
                ("worth", True),
                ("total", True),
                ("finding", False),
                title="turns involved (claimed, and worth by the dice)",
            )
            for i, turn in enumerate(timeline):
                if i:
                    table.add_section()
                for step in turn:
                    dice = "" if step.dice is None else " ".join(map(str, step.dice))
                    table.add_row(
                        step.seq,
                        step.player,
                        step.type,
                        dice,
                        step.claimed,
                        step.worth,
                        step.total,
                        step.code,
                        style="bold red" if step.code else None,
                    )
            out.table(table)
        if result is not None:
            _result_text(result, out)
        out.flush()
    absent.write(out)
    if show_clean:
        for result in report.games:
            if result.game_id not in with_findings:
                rules = f" [{result.ruleset.name}]" if result.ruleset is not None else ""
                out.rule(f"game {result.game_id}{rules}: clean, no findings")
                _result_text(result, out)
                out.flush()
    out.rule("summary")
    games, events = len(report.games), report.events
    clean = games - shown
    warnings = len(report.findings) - report.errors
    out.line(
        f"{games:,} game{'s' if games != 1 else ''}, {events:,} event{'s' if events != 1 else ''}: "
        f"{clean:,} clean, {games - clean:,} with findings; {report.errors:,} error{'s' if report.errors != 1 else ''}, "
        f"{warnings:,} warning{'s' if warnings != 1 else ''}"
    )
    abandoned = sum(1 for g in report.games if getattr(g, "ended", None) == "abandoned")
    if abandoned:
        out.line(f"{abandoned:,} game{'s' if abandoned != 1 else ''} abandoned (no winner by the dice)")
    if report.file_problems or report.sheet_problems:
        out.line(
            f"{len(report.file_problems) + len(report.sheet_problems):,} unreadable files or rows (named on stderr)"
        )
    if sheet is not None:
        out.line(verdict_line(sheet), indent="  ")
        for hint in sheet.get("hints", ()):
            out.line(f"hint: {hint}", indent="  ")
    counts = report.counts_by_code()
    if counts:
        table = Listing(("code", False), ("findings", True))
        for code, n in counts.items():
            table.add_row(code, n)
        out.table(table)
    out.flush()


class _TextOut:
    """What print_text writes, gathered and written a game at a time; the width and whether
    to colour are asked once."""

    def __init__(self, console: LazyConsole):
        self.stream = console.stream
        self.wrap_width = terminal_width(self.stream)  # None: a file or a pipe, nothing wraps
        self.rule_width = self.wrap_width or 80
        self.color = console.color
        self.parts: list[str] = []

    def line(self, text: str, indent: str = "") -> None:
        if self.wrap_width is None:
            self.parts.append(printable(text) + "\n")
            return
        lead = text[: len(text) - len(text.lstrip(" "))]
        self.parts.append("\n".join(wrap(text, self.wrap_width, lead, lead + indent)) + "\n")

    def rule(self, title: str) -> None:
        self.parts.append(rule_text(title, self.rule_width, self.color, self.wrap_width))

    def table(self, table: Listing) -> None:
        self.parts.append(table.render(self.color))

    def flush(self) -> None:
        self.stream.write("".join(self.parts))
        self.parts.clear()


class _AbsentGames:
    """The games a scoresheet names that the logs do not hold: the first SHOWN each get a
    line (its rows and their lines), the rest are counted (a sheet can name a million)."""

    SHOWN = 10

    def __init__(self) -> None:
        self.named: list[tuple[str, str, int, list[int]]] = []  # (sheet, game id, rows, lines)
        self.more_games = 0
        self.more_rows = 0
        self.sheet = ""

    def add(self, game_id: str, rows: list[Finding]) -> None:
        self.sheet = rows[0].file or ""
        if len(self.named) < self.SHOWN:
            lines = [f.line for f in rows if f.line is not None]
            self.named.append((self.sheet, game_id, len(rows), lines))
        else:
            self.more_games += 1
            self.more_rows += len(rows)

    def write(self, out: _TextOut) -> None:
        for sheet, game_id, n, lines in self.named:
            span = f"line {lines[0]}" if len(lines) == 1 else f"lines {min(lines)}-{max(lines)}"
            out.line(
                f"scoresheet {sheet}: game {game_id} is not in these logs: its "
                f"{n} row{'s' if n != 1 else ''} ({span}) were not checked",
                indent="  ",
            )
        if self.more_games:
            out.line(
                f"scoresheet {self.sheet}: {self.more_games:,} more of its games are not in these logs: "
                f"their {self.more_rows:,} row{'s' if self.more_rows != 1 else ''} were not checked",
                indent="  ",
            )


def _result_text(result, out: _TextOut) -> None:
    # scores as the log writes them (no thousands separators), so they can be searched for
    table = Listing(("player", False), ("claimed", True), ("corrected", True), title="result (final totals)")
    for p in result.players:
        claimed, corrected = result.claimed.get(p), result.corrected.get(p)
        table.add_row(p, claimed, corrected, style="yellow" if claimed != corrected else None)
    out.table(table)
    for line in winner_lines(result):
        out.line(f"  {line}", indent="  ")

"""How an audit is shown: text for people settling a dispute, json/jsonl/csv for machines."""
from __future__ import annotations

import csv
import io
import json
import textwrap
from typing import Any, Iterable, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline.audit import AuditReport

FINDING_FIELDS = ["game_id", "seq", "file", "line", "player", "code", "severity", "message", "claimed", "expected"]


def write_json(report: AuditReport, out: TextIO) -> None:
    """The same text as json.dumps({"findings": [...], "games": [...]}, indent=2), written a
    finding at a time (an audit can have millions)."""
    out.write("{\n")
    _write_list(out, "findings", (f.to_dict() for f in report.findings), last=False)
    _write_list(out, "games", (g.to_dict() for g in report.games), last=True)
    out.write("}")


def _write_list(out: TextIO, name: str, items: Iterable[dict[str, Any]], last: bool) -> None:
    out.write(f"  {json.dumps(name)}: [")
    first = True
    for item in items:
        out.write("\n" if first else ",\n")
        first = False
        out.write(textwrap.indent(json.dumps(item, indent=2), "    "))
    out.write("]" if first else "\n  ]")
    out.write("\n" if last else ",\n")


def write_jsonl(report: AuditReport, out: TextIO) -> None:
    for f in report.findings:
        out.write(json.dumps(f.to_dict()) + "\n")


def write_csv(report: AuditReport, out: TextIO) -> None:
    writer = csv.DictWriter(out, fieldnames=FINDING_FIELDS, lineterminator="\n")
    writer.writeheader()
    for f in report.findings:
        writer.writerow(f.to_dict())


def as_json(report: AuditReport) -> str:
    return _text(write_json, report)


def as_jsonl(report: AuditReport) -> str:
    return _text(write_jsonl, report)


def as_csv(report: AuditReport) -> str:
    return _text(write_csv, report)


def _text(write, report: AuditReport) -> str:
    buffer = io.StringIO()
    write(report, buffer)
    return buffer.getvalue()


def _winner(w: Any) -> str:
    """A winner list as a referee says it: one name, or "ana & bo (tie)"."""
    if not w:
        return "none (no game_end)"
    return w[0] if len(w) == 1 else " & ".join(w) + " (tie)"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def print_text(report: AuditReport, console: Console) -> None:
    results = {g.game_id: g for g in report.games}
    for game_id, count, findings in report.findings.by_game():
        title = f"game {game_id}" if game_id is not None else "lines of no readable game"
        result = results.get(game_id)
        rules = f" [{result.ruleset.name}]" if result is not None else ""
        console.rule(escape(f"{title}{rules}: {count} finding{'s' if count != 1 else ''}"))
        for f in findings:
            where = f"{f.file}:{f.line}" if f.line is not None else (f.file or "")
            console.print(f"  {f.severity:7} {f.code:22} {where}  {f.message}", markup=False)
        timeline = report.timelines.get(game_id) if game_id is not None else None
        if timeline:
            table = Table("seq", "player", "event", "dice", "claimed", "worth", "total", "finding",
                          title="turns involved (claimed vs worth by the dice)", title_justify="left")
            for i, turn in enumerate(timeline):
                if i:
                    table.add_section()
                for step in turn:
                    dice = "" if step.dice is None else " ".join(map(str, step.dice))
                    style = "bold red" if step.code else None
                    table.add_row(str(step.seq), _cell(step.player), step.type, dice, _cell(step.claimed),
                                  _cell(step.worth), _cell(step.total), step.code or "", style=style)
            console.print(table)
        if result is not None:
            table = Table("player", "claimed", "corrected", title="result", title_justify="left")
            for p in result.players:
                claimed, corrected = result.claimed.get(p), result.corrected.get(p)
                style = "yellow" if claimed != corrected else None
                table.add_row(p, _cell(claimed), _cell(corrected), style=style)
            console.print(table)
            if result.winner_claimed is None:
                verdict = "nothing claimed"
            elif set(result.winner_claimed) == set(result.winner_corrected or ()):
                verdict = "same"
            else:
                verdict = "DIFFERENT"
            console.print(
                f"  winner claimed: {_winner(result.winner_claimed)}; by the dice: "
                f"{_winner(result.winner_corrected)} ({verdict}); "
                f"{'complete' if result.complete else 'incomplete'}",
                markup=False,
            )
    for p in report.file_problems:
        console.print(f"file problem: {p.file}" + (f":{p.line}" if p.line else "") + f": {p.reason}", markup=False)
    for p in report.sheet_problems:
        console.print(f"scoresheet problem: {p.file}:{p.line}: {p.reason}", markup=False)
    counts = report.counts_by_code()
    clean = sum(1 for g in report.games if g.game_id not in report.findings.count)
    console.rule("summary")
    console.print(
        f"{len(report.games)} games, {report.events} events: {clean} clean, "
        f"{len(report.games) - clean} with findings; {report.errors} errors, "
        f"{len(report.findings) - report.errors} warnings",
        markup=False,
    )
    if counts:
        table = Table("code", "findings")
        for code, n in counts.items():
            table.add_row(code, str(n))
        console.print(table)

"""How an audit is shown: text for people settling a dispute, json/jsonl/csv for machines."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline.audit import AuditReport

FINDING_FIELDS = ["game_id", "seq", "file", "line", "player", "code", "severity", "message", "claimed", "expected"]


def as_json(report: AuditReport) -> str:
    return json.dumps(
        {"findings": [f.to_dict() for f in report.findings], "games": [g.to_dict() for g in report.games]},
        indent=2,
    )


def as_jsonl(report: AuditReport) -> str:
    return "".join(json.dumps(f.to_dict()) + "\n" for f in report.findings)


def as_csv(report: AuditReport) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FINDING_FIELDS, lineterminator="\n")
    writer.writeheader()
    for f in report.findings:
        writer.writerow(f.to_dict())
    return buffer.getvalue()


def _winner(w: Any) -> str:
    """A winner list as a referee says it: one name, or "ana & bo (tie)"."""
    if not w:
        return "none (no game_end)"
    return w[0] if len(w) == 1 else " & ".join(w) + " (tie)"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def print_text(report: AuditReport, console: Console) -> None:
    by_game: dict[str | None, list] = {}
    for f in report.findings:
        by_game.setdefault(f.game_id, []).append(f)
    results = {g.game_id: g for g in report.games}
    for game_id, findings in by_game.items():
        title = f"game {game_id}" if game_id is not None else "lines of no readable game"
        result = results.get(game_id)
        rules = f" [{result.ruleset.name}]" if result is not None else ""
        console.rule(escape(f"{title}{rules}: {len(findings)} finding{'s' if len(findings) != 1 else ''}"))
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
    clean = sum(1 for g in report.games if g.game_id not in by_game)
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

"""`farkle-logs audit`: replay every game and say what went wrong, where, and who really won."""
from __future__ import annotations

import enum
import sys
from typing import List, Optional

import typer

from pipeline.audit import audit_stream, read_sheet
from pipeline.cli.audit_render import as_csv, as_json, as_jsonl, print_text
from pipeline.cli.common import (
    EXIT_DATA,
    EXIT_OK,
    EXIT_USAGE,
    RULES_HELP,
    progress_bar,
    rules_or_exit,
    stderr,
    stdout,
    usage_error,
)
from pipeline.cli.main import app
from pipeline.inputs import resolve
from pipeline.model import FileProblem
from pipeline.reader import read_events


class AuditFormat(str, enum.Enum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


@app.command()
def audit(
    logs: List[str] = typer.Argument(..., help="Log files, directories, globs, .gz files, or - for stdin."),
    scoresheet: Optional[str] = typer.Option(None, "--scoresheet", help="Hand-kept scoresheet CSV to check."),
    rules: Optional[str] = typer.Option(None, "--rules", "-r", help=RULES_HELP + " Used when game_start has no rules."),
    format: AuditFormat = typer.Option(AuditFormat.text, "--format", "-f", help="text, json, jsonl or csv"),
    game: Optional[List[str]] = typer.Option(None, "--game", "-g", help="Only this game id (repeatable)."),
) -> None:
    """Replay every game against the rules. Exit 0: no errors; 1: findings; 2: bad usage."""
    default_rules = rules_or_exit(rules) if rules is not None else None
    resolution = resolve(logs)
    for notice in resolution.notices:
        stderr.print(f"note: {notice}", markup=False)
    for problem in resolution.problems:
        stderr.print(f"error: {problem}", markup=False)
    sheet = None
    if scoresheet is not None:
        try:
            sheet = read_sheet(scoresheet)
        except (OSError, UnicodeDecodeError) as exc:
            usage_error(f"cannot read scoresheet {scoresheet}: {getattr(exc, 'strerror', None) or exc}")
    if not resolution.sources and resolution.problems:
        raise typer.Exit(EXIT_USAGE)
    file_problems: list[FileProblem] = []
    with progress_bar("auditing") as advance:
        report = audit_stream(
            read_events(resolution.sources, on_problem=file_problems.append),
            default_rules,
            games=set(game) if game else None,
            sheet=sheet,
            trace=format is AuditFormat.text,
            on_item=advance,
        )
    report.file_problems.extend(file_problems)
    for p in report.file_problems:
        where = f"{p.file}:{p.line}" if p.line is not None else p.file
        stderr.print(f"error: {where}: {p.reason}", markup=False)
    for p in report.sheet_problems:
        stderr.print(f"error: {p.file}:{p.line}: {p.reason}", markup=False)
    if format is AuditFormat.text:
        print_text(report, stdout)
    else:
        text = {AuditFormat.json: as_json, AuditFormat.jsonl: as_jsonl, AuditFormat.csv: as_csv}[format](report)
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        sys.stdout.flush()
    if resolution.problems or any(p.line is None for p in report.file_problems):
        raise typer.Exit(EXIT_USAGE)
    if report.errors or report.file_problems or report.sheet_problems:
        raise typer.Exit(EXIT_DATA)
    raise typer.Exit(EXIT_OK)

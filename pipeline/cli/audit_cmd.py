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
    max_line_bytes_option,
    progress_bar,
    rules_or_exit,
    stderr,
    stdout,
    usage_error,
)
from pipeline.cli.engine_options import Engine, check_engine, engine_option, master_option, spark_or_exit
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
    coach: bool = typer.Option(
        False, "--coach",
        help="With one --game: every keep and bank-or-roll of that game against the exact single-turn "
             "policy (value made, best, loss) instead of the findings. Exit 0, or 1 if the game is not in the logs.",
    ),
    blunder_threshold: float = typer.Option(
        150.0, "--blunder-threshold", min=0.0, help="--coach: mark choices losing more than this as blunders."
    ),
    max_line_bytes: int = max_line_bytes_option(),
    engine: Engine = engine_option(),
    spark_master: Optional[str] = master_option(),
) -> None:
    """Replay every game against the rules. Exit 0: no errors; 1: findings; 2: bad usage."""
    default_rules = rules_or_exit(rules) if rules is not None else None
    if coach and (not game or len(game) != 1):
        usage_error("--coach needs exactly one --game ID")
    if coach and format not in (AuditFormat.text, AuditFormat.json):
        usage_error("--coach prints text or json")
    check_engine(engine, spark_master)
    if engine is Engine.spark:
        if scoresheet is not None or coach:
            usage_error("--scoresheet and --coach are for --engine local (docs/spark.md)")
        if "-" in logs:
            usage_error("--engine spark reads files its tasks can open: stdin (-) is for --engine local")
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
    if coach:
        _coach(resolution, game[0], default_rules, format, blunder_threshold, max_line_bytes)
    if engine is Engine.spark:
        from pipeline.engines.spark.audit import audit as spark_audit

        with spark_or_exit(spark_master) as spark:
            report = spark_audit(spark, resolution.sources, default_rules, games=set(game) if game else None,
                                 max_line_bytes=max_line_bytes)
    else:
        with progress_bar("auditing") as advance:
            report = audit_stream(
                read_events(resolution.sources, on_problem=file_problems.append, max_line_bytes=max_line_bytes),
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


def _coach(resolution, game_id: str, default_rules, format: AuditFormat, threshold: float, max_line_bytes: int) -> None:
    from pipeline.cli.coach_render import coach_json, coach_text
    from pipeline.strategy.judge import coach_game

    file_problems: list[FileProblem] = []
    result, policy, judged = coach_game(
        read_events(resolution.sources, on_problem=file_problems.append, max_line_bytes=max_line_bytes),
        game_id, default_rules,
    )
    for p in file_problems:
        where = f"{p.file}:{p.line}" if p.line is not None else p.file
        stderr.print(f"error: {where}: {p.reason}", markup=False)
    if result is None:
        stderr.print(f"error: game {game_id} is not in these logs", markup=False)
        raise typer.Exit(EXIT_DATA)
    if policy is None:
        from pipeline.strategy.solver import SolverBudgetError, check_budget

        why = "its ruleset cannot be solved"
        try:
            if result.ruleset is not None:
                check_budget(result.ruleset)
        except SolverBudgetError as exc:
            why = str(exc)
        stderr.print(f"note: game {game_id}: {why}; nothing is judged", markup=False)
    text = (coach_json if format is AuditFormat.json else coach_text)(game_id, judged, threshold)
    sys.stdout.write(text)
    sys.stdout.flush()
    raise typer.Exit(EXIT_OK)

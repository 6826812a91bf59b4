"""Audit as a library call: read logs, replay every game, compare a scoresheet.

The CLI's `audit` is a thin shell over `run_audit`, so a league's own tooling can settle
disputes from Python with the same answers the command prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from pipeline.audit import finding_store
from pipeline.audit.finding_store import FindingStore
from pipeline.reader.inputs import InputSource
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem, GameResult
from pipeline.reader import read_events
from pipeline.replay import Replayer, TraceStep
from pipeline.rules import Ruleset
from pipeline.audit.scoresheet import SheetError, SheetProblem, check_header, compare_sheet, parse_sheet


@dataclass
class AuditReport:
    findings: FindingStore = field(default_factory=FindingStore)  # in order; spilled to disk when many
    games: list[GameResult] = field(default_factory=list)
    timelines: dict[str, list[list[TraceStep]]] = field(default_factory=dict)
    file_problems: list[FileProblem] = field(default_factory=list)
    sheet_problems: list[SheetProblem] = field(default_factory=list)
    events: int = 0
    lines: int = 0

    @property
    def errors(self) -> int:
        return self.findings.errors

    def counts_by_code(self) -> dict[str, int]:
        return dict(sorted(self.findings.by_code.items(), key=lambda kv: (-kv[1], kv[0])))


def audit_stream(
    items: Iterable[Event | BadLine | FileProblem],
    default_rules: Ruleset | None = None,
    *,
    games: set[str] | None = None,
    sheet: tuple[str, str] | None = None,
    trace: bool = True,
    on_item: Callable[[], None] | None = None,
) -> AuditReport:
    """Replay items (in input order) and, given `sheet=(name, csv_text)`, compare it.

    `games` restricts the audit to those game ids (their bad lines included); lines whose
    game could not be read are kept only when no filter is given.
    """
    report = AuditReport()
    replayer = Replayer(default_rules, trace=trace, records=sheet is not None)
    turns = []
    for item in items:
        if on_item is not None:
            on_item()
        if isinstance(item, FileProblem):
            report.file_problems.append(item)
            continue
        if games is not None and item.game_id not in games:
            continue
        if isinstance(item, Event):
            report.events += 1
        replayer.feed(item)
        if len(replayer.out.findings) >= finding_store.DRAIN:
            report.findings.extend(replayer.out.findings)
            replayer.out.findings.clear()
        if sheet is not None and len(replayer.out.rolls) > 10_000:
            replayer.out.rolls.clear()
            replayer.out.decisions.clear()
    replayer.finish()
    out = replayer.drain()
    report.findings.extend(out.findings)
    report.games = out.games
    report.timelines = out.timelines
    turns = out.turns
    if sheet is not None:
        name, text = sheet
        rows, problems = parse_sheet(text, name)
        if games is not None:
            rows = [r for r in rows if r.game_id in games]
        report.sheet_problems = problems
        report.findings.extend(compare_sheet(rows, turns, [g.game_id for g in report.games], name))
    return report


def audit_sources(
    sources: Sequence[InputSource],
    default_rules: Ruleset | None = None,
    *,
    games: set[str] | None = None,
    sheet: tuple[str, str] | None = None,
    trace: bool = True,
    on_item: Callable[[int], None] | None = None,
    on_problem: Callable[[FileProblem], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    reference: bool = False,
    jit: bool = True,
) -> AuditReport:
    """Audit input sources: the same report as `audit_stream(read_events(sources))`
    (lines over `max_line_bytes` are bad_json rejects either way).

    Plain audits take the two-pass fast path (`pipeline.audit.fast`, its kernel compiled
    unless `jit` is False); standard input (read once), a scoresheet (every game's turns) or
    a game filter take the one-pass reference path, as does `reference`. `on_item(n)` is
    told of every n lines read.
    """
    rules = default_rules or Ruleset.builtin("standard")
    # stdin (read once) and logs at URLs (read as streams) take the one-pass reference path
    if reference or games is not None or sheet is not None or any(s.path is None for s in sources):
        advance = (lambda: on_item(1)) if on_item is not None else None
        return audit_stream(
            read_events(sources, on_problem=on_problem, max_line_bytes=max_line_bytes),
            rules,
            games=games,
            sheet=sheet,
            trace=trace,
            on_item=advance,
        )
    from pipeline.audit import fast as audit_fast

    problems: list[FileProblem] = []  # told once pass 1 is through (a reference pass would tell them again)
    try:
        found = audit_fast.scan(
            sources, rules, problems.append, on_item, max_line_bytes=max_line_bytes, give_up=True, jit=jit
        )
    except audit_fast.MostlyBad:  # a log of mostly bad lines: one reference pass is cheaper than two
        fresh = [s.fresh() for s in sources]  # no stdin here: files read again
        advance = (lambda: on_item(1)) if on_item is not None else None
        return audit_stream(
            read_events(fresh, on_problem=on_problem, max_line_bytes=max_line_bytes),
            rules,
            trace=trace,
            on_item=advance,
        )
    if on_problem is not None:
        for problem in problems:
            on_problem(problem)
    report = AuditReport(events=found.events)
    out = audit_fast.replay_suspects(
        sources, found, rules, trace=trace, findings=report.findings, max_line_bytes=max_line_bytes
    ).drain()
    report.findings.extend(out.findings)
    report.timelines = out.timelines
    report.games = audit_fast.merged_results(found, out.games)
    return report


def read_sheet(path: str) -> tuple[str, str]:
    """(display name, text) of a scoresheet; SheetError when it cannot be read or its header is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"cannot read scoresheet {path}: {getattr(exc, 'strerror', None) or exc}") from None
    check_header(path, text)
    return path, text

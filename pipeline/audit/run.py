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
from pipeline.audit.game_stores import DiskGames, GameStore, Timelines
from pipeline.reader.inputs import InputSource
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem
from pipeline.reader import read_events
from pipeline.replay import Replayer, ReplayOutput
from pipeline.rules import Ruleset
from pipeline.audit.scoresheet import (
    SheetError,
    SheetProblem,
    across_game_numbering,
    check_header,
    compare_sheet,
    numbering_hint,
    parse_sheet,
)


@dataclass
class AuditReport:
    """What an audit found. Findings, results and timelines go to disk once they are many
    (pipeline/audit/finding_store.py, game_stores.py): `close` removes those files."""

    findings: FindingStore = field(default_factory=FindingStore)  # in order
    games: GameStore = field(default_factory=GameStore)  # in order of each game's start
    timelines: Timelines = field(default_factory=Timelines)
    file_problems: list[FileProblem] = field(default_factory=list)
    sheet_problems: list[SheetProblem] = field(default_factory=list)
    # what the sheet's findings may come from, said once (scoresheet.numbering_hint)
    sheet_hints: list[str] = field(default_factory=list)
    events: int = 0
    lines: int = 0

    @property
    def errors(self) -> int:
        return self.findings.errors

    def counts_by_code(self) -> dict[str, int]:
        return dict(sorted(self.findings.by_code.items(), key=lambda kv: (-kv[1], kv[0])))

    def take(self, out: ReplayOutput) -> None:
        """Move a replayer's findings, results and timelines here (`drain` first)."""
        self.findings.extend(out.findings)
        self.games.extend(out.games)
        self.timelines.update(out.timelines)

    def close(self) -> None:
        self.findings.close()
        self.games.close()
        self.timelines.close()


def finish(replayer: Replayer, report: AuditReport, on_turns: Callable[[list], None] | None = None) -> None:
    """End the replay, moving what each step of it gives to `report` (the results of a
    million games are never all in memory); `on_turns` gets the turn records, if kept."""
    for _ in replayer.finish_steps():
        out = replayer.drain()
        report.take(out)
        if on_turns is not None:
            on_turns(out.turns)
    out = replayer.drain()
    report.take(out)
    if on_turns is not None:
        on_turns(out.turns)


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
    replayer = Replayer(default_rules, trace=trace, records=sheet is not None, spill=DiskGames())
    sheet_rows: list = []
    problems: list[SheetProblem] = []
    sheet_games: set[str] = set()
    turns: list = []  # the turns of the games the sheet names (compare_sheet needs no others)
    if sheet is not None:
        name, text = sheet
        sheet_rows, problems = parse_sheet(text, name)
        if games is not None:
            sheet_rows = [r for r in sheet_rows if r.game_id in games]
        sheet_games = {r.game_id for r in sheet_rows}

    def keep_turns(records: list) -> None:
        turns.extend(t for t in records if t.game_id in sheet_games)

    out = replayer.out
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
        if len(out.findings) >= finding_store.DRAIN:
            report.findings.extend(out.findings)
            out.findings.clear()
        if sheet is not None and len(out.turns) > 10_000:
            keep_turns(out.turns)
            out.turns.clear()
            out.rolls.clear()
            out.decisions.clear()
    finish(replayer, report, keep_turns if sheet is not None else None)
    if sheet is not None:
        name, _ = sheet
        logged = [g for g in sheet_games if report.games.get(g) is not None]
        report.sheet_problems = problems
        report.findings.extend(compare_sheet(sheet_rows, turns, logged, name))
        report.sheet_hints = [numbering_hint(name, g) for g in across_game_numbering(sheet_rows, turns)]
    return report


def audit_sources(
    sources: Sequence[InputSource],
    default_rules: Ruleset | None = None,
    *,
    games: set[str] | None = None,
    sheet: tuple[str, str] | None = None,
    trace: bool = True,
    progress: Callable[..., None] | None = None,
    on_problem: Callable[[FileProblem], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    reference: bool = False,
    jit: bool = True,
    fast_min_bytes: int = 0,
    notice: Callable[[str], None] | None = None,
) -> AuditReport:
    """Audit input sources: the same report as `audit_stream(read_events(sources))`
    (lines over `max_line_bytes` are bad_json rejects either way).

    Plain audits take the two-pass fast path (`pipeline.audit.fast`, its kernel compiled
    unless `jit` is False); standard input (read once), a scoresheet (every game's turns) or
    a game filter take the one-pass reference path, as do `reference` and inputs of fewer
    than `fast_min_bytes` bytes in all (the compiled kernel's start-up would cost more than
    it saves). `progress` follows the work: `progress(stage=..., total=..., unit=...)` as a
    stage begins, `progress(n)` as n more of it is done (bytes read, mostly); `notice` is
    told when the fast path's compiled code is being compiled (the first run after an
    install), a wait worth a word.
    """
    rules = default_rules or Ruleset.builtin("standard")
    progress = progress or _quiet
    total = input_bytes(sources)
    # stdin (read once) and logs at URLs (read as streams) take the one-pass reference path
    if (
        reference
        or games is not None
        or sheet is not None
        or any(s.path is None for s in sources)
        or (fast_min_bytes and total < fast_min_bytes)
    ):
        progress(stage="replaying games", total=total or None, unit="bytes")
        return audit_stream(
            read_events(sources, on_problem=on_problem, max_line_bytes=max_line_bytes),
            rules,
            games=games,
            sheet=sheet,
            trace=trace,
            on_item=bytes_read(sources, progress),
        )
    from pipeline.audit import fast as audit_fast
    from pipeline.ingest import warm

    def compiling() -> None:
        if notice is not None:
            notice(warm.WHAT)
        progress(stage=warm.WHAT)

    warm.ready(jit, on_compile=compiling)
    progress(stage="replaying games", total=total or None, unit="bytes")
    problems: list[FileProblem] = []  # told once pass 1 is through (a reference pass would tell them again)
    try:
        found = audit_fast.scan(
            sources, rules, problems.append, progress, max_line_bytes=max_line_bytes, give_up=True, jit=jit
        )
    except audit_fast.MostlyBad:  # a log of mostly bad lines: one reference pass is cheaper than two
        fresh = [s.fresh() for s in sources]  # no stdin here: files read again
        progress(stage="replaying games (one pass: most lines are bad)", total=total or None, unit="bytes")
        return audit_stream(
            read_events(fresh, on_problem=on_problem, max_line_bytes=max_line_bytes),
            rules,
            trace=trace,
            on_item=bytes_read(fresh, progress),
        )
    if on_problem is not None:
        for problem in problems:
            on_problem(problem)
    report = AuditReport(events=found.events)
    replayer = audit_fast.replay_suspects(
        sources,
        found,
        rules,
        trace=trace,
        findings=report.findings,
        max_line_bytes=max_line_bytes,
        finish=False,
        progress=progress,
    )
    suspects = AuditReport()  # the suspect games' results, to merge with the clean ones
    finish(replayer, suspects)
    report.findings.extend(suspects.findings)
    report.timelines = suspects.timelines
    report.games = GameStore(audit_fast.merged_results(found, suspects.games))
    suspects.games.close()
    return report


def _quiet(*args: object, **kwargs: object) -> None:
    pass


def bytes_read(sources: Sequence[InputSource], progress: Callable[..., None], every: int = 2048) -> Callable[[], None]:
    """An `on_item` for `audit_stream` that tells `progress` the bytes the reader has read
    from `sources` since it last did, every `every` items (so a long one-pass audit moves a
    bar whose total is the inputs' size)."""
    told = 0
    count = 0

    def on_item() -> None:
        nonlocal told, count
        count += 1
        if count % every == 0:
            now = sum(s.raw_bytes for s in sources)
            progress(now - told)
            told = now

    return on_item


def input_bytes(sources: Sequence[InputSource]) -> int:
    """The sources' size on disk in all (a file that cannot be read counts 0: the reader
    reports it)."""
    total = 0
    for source in sources:
        try:
            total += source.path.stat().st_size if source.path is not None else 0
        except OSError:
            pass
    return total


def read_sheet(path: str) -> tuple[str, str]:
    """(display name, text) of a scoresheet; SheetError when it cannot be read or its header is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"cannot read scoresheet {path}: {getattr(exc, 'strerror', None) or exc}") from None
    check_header(path, text)
    return path, text

"""`farkle-logs audit`: replay every game and say what went wrong, where, and who really won."""

from __future__ import annotations

import enum
import sys
from typing import Iterable, Iterator, List, Optional

import typer

from pipeline.cli.common import (
    EXIT_DATA,
    EXIT_OK,
    EXIT_USAGE,
    RULES_HELP,
    did_you_mean,
    lean_program,
    max_line_bytes_option,
    note,
    compiles_announced,
    progress_bar,
    rules_or_exit,
    stderr,
    stdout,
    usage_error,
)
from pipeline.cli.csv_cells import exact_csv_option
from pipeline.cli.engine_options import Engine, check_engine, engine_option, master_option, routing
from pipeline.cli.main import app


SHOWN_GAMES = 5  # game ids named in one message; the rest are counted


class AuditFormat(str, enum.Enum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


@app.command(short_help="Replay logs against the rules: findings, who really won.")
def audit(
    logs: List[str] = typer.Argument(
        ..., metavar="LOGS...", help="Log files, directories, globs, .gz files, or - for stdin."
    ),
    scoresheet: Optional[str] = typer.Option(
        None, "--scoresheet", metavar="CSV", help="Hand-kept scoresheet to check against the replay."
    ),
    rules: Optional[str] = typer.Option(
        None, "--rules", "-r", metavar="RULES", help=RULES_HELP + " Used when game_start has no rules."
    ),
    format: AuditFormat = typer.Option(
        AuditFormat.text, "--format", "-f", metavar="FORMAT", help="text, json, jsonl or csv."
    ),
    game: Optional[List[str]] = typer.Option(
        None, "--game", "-g", metavar="ID", help="Only this game id (repeatable)."
    ),
    coach: bool = typer.Option(
        False,
        "--coach",
        help="With one --game: every keep and bank-or-roll of that game against the exact single-turn "
        "policy (value made, best, loss) instead of the findings.",
    ),
    blunder_threshold: float = typer.Option(
        150.0,
        "--blunder-threshold",
        min=0.0,
        metavar="POINTS",
        help="--coach: mark choices losing more than this as blunders.",
    ),
    max_line_bytes: int = max_line_bytes_option(),
    exact_csv: bool = exact_csv_option(),
    engine: Engine = engine_option(),
    spark_master: Optional[str] = master_option(),
) -> None:
    """Replay every game against the rules: findings with file, line and seq, the turns
    involved, claimed against corrected scores and winners.

    Exit 0: no errors; 1: findings; 2: bad usage (a missing file, a --game or scoresheet
    that matches nothing, a scoresheet that cannot be read).
    """
    if engine is Engine.local:
        lean_program()
    from pipeline.reader.inputs import resolve

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
    route = routing(engine, spark_master)
    resolution = resolve(logs)
    from pipeline.audit.run import read_sheet
    from pipeline.cli.audit_render import print_text, sheet_verdict, write_csv, write_json, write_jsonl
    from pipeline.model import FileProblem

    for notice in resolution.notices:
        note(notice)
    for problem in resolution.problems:
        stderr.print(f"error: {problem}")
    sheet = None
    if scoresheet is not None:
        sheet = read_sheet(scoresheet)
    if not resolution.sources:
        raise typer.Exit(EXIT_USAGE)
    seen = SeenGames(game or ())
    if coach:
        assert game  # --coach needs exactly one --game (checked above)
        _coach(resolution, game[0], default_rules, format, blunder_threshold, seen, max_line_bytes)
    file_problems: list[FileProblem] = []
    with progress_bar("reading") as advance:
        if engine is Engine.local and (game or sheet is not None):
            report = _audit_watched(
                resolution, default_rules, game, sheet, format, seen, file_problems, advance, max_line_bytes
            )
        else:
            from pipeline import engines

            report = engines.audit(
                resolution.sources,
                default_rules,
                route,
                games=set(game) if game else None,
                trace=format is AuditFormat.text,
                progress=advance,
                on_problem=file_problems.append,
                max_line_bytes=max_line_bytes,
                notice=note,
            )
            if game:  # what --game is checked against (Spark: the games it kept)
                seen.ids.update(dict.fromkeys(g.game_id for g in report.games))
    report.file_problems.extend(file_problems)
    for source in resolution.sources:
        if source.is_stdin and source.problem is None and source.lines == source.blank_lines:
            note(f"{source.name}: no events" + (": it holds only blank lines" if source.lines else ""))
    for p in report.file_problems:
        where = f"{p.file}:{p.line}" if p.line is not None else p.file
        stderr.print(f"error: {where}: {p.reason}")
    for p in report.sheet_problems:
        stderr.print(f"error: {p.file}:{p.line}: {p.reason}")
    missing_games = [g for g in dict.fromkeys(game or []) if g not in seen.ids]
    verdict = sheet_verdict(report, sheet[0], sheet[1]) if sheet is not None else None
    nothing_matched = bool(game) and not report.games  # the error below says so: no summary of nothing
    if nothing_matched:
        pass
    elif format is AuditFormat.text:
        # games asked for by name are shown even when clean: their result is the answer
        print_text(report, stdout, verdict, show_clean=bool(game))
    else:
        write = {
            AuditFormat.json: lambda r, out: write_json(r, out, [verdict] if verdict else []),
            AuditFormat.jsonl: write_jsonl,
            AuditFormat.csv: lambda r, out: write_csv(r, out, exact_csv),
        }[format]
        ends = _LastChar(sys.stdout)
        write(report, ends)  # streamed: an audit can have millions of findings
        if ends.last not in ("", "\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
    report.close()
    from pipeline.cli import entry

    entry.skip_teardown()  # the output is out: the process need not free every object
    for wanted in missing_games:
        stderr.print(f"error: no game {wanted!r} in these logs{did_you_mean(wanted, seen.ids)}")
    if verdict is not None and verdict["rows"] and not verdict["games_found"]:
        missing = verdict["games_not_found"]
        named = ", ".join(missing[:SHOWN_GAMES]) + (
            f" and {len(missing) - SHOWN_GAMES:,} more" if len(missing) > SHOWN_GAMES else ""
        )
        stderr.print(
            f"error: {verdict['file']}: none of its games is in these logs ({named})"
            f"{did_you_mean(missing[0], seen.ids)}"
        )
        raise typer.Exit(EXIT_USAGE)
    if resolution.problems or missing_games or any(p.line is None for p in report.file_problems):
        raise typer.Exit(EXIT_USAGE)
    if report.errors or report.file_problems or report.sheet_problems:
        raise typer.Exit(EXIT_DATA)
    raise typer.Exit(EXIT_OK)


def _audit_watched(resolution, default_rules, game, sheet, format, seen, file_problems, advance, max_line_bytes):
    """One game or a scoresheet: the one-pass reference path that audit_sources takes for
    them too, here watching every game id read (what a --game typo is compared to)."""
    from pipeline.audit.run import audit_stream, bytes_read, input_bytes
    from pipeline.reader import read_events

    advance(stage="replaying games", total=input_bytes(resolution.sources) or None, unit="bytes")
    return audit_stream(
        seen.watch(read_events(resolution.sources, on_problem=file_problems.append, max_line_bytes=max_line_bytes)),
        default_rules,
        games=set(game) if game else None,
        sheet=sheet,
        trace=format is AuditFormat.text,
        on_item=bytes_read(resolution.sources, advance),
    )


class _LastChar:
    """A text stream that remembers the last character written (the output ends with a newline)."""

    def __init__(self, out):
        self._out = out
        self.last = ""

    def write(self, text: str) -> int:
        if text:
            self.last = text[-1]
        return self._out.write(text)


class SeenGames:
    """The game ids of the lines read, whatever --game keeps: what a typo is compared to.
    Past KEPT ids only those `wanted` are still noted (a log can hold millions)."""

    KEPT = 100_000

    def __init__(self, wanted: Iterable[str] = ()) -> None:
        self.ids: dict[str, None] = {}
        self.wanted = set(wanted)

    def watch(self, items: Iterable) -> Iterator:
        ids, wanted, kept = self.ids, self.wanted, self.KEPT
        for item in items:
            game_id = getattr(item, "game_id", None)
            if game_id is not None and game_id not in ids and (len(ids) < kept or game_id in wanted):
                ids[game_id] = None
            yield item


def _coach(
    resolution, game_id: str, default_rules, format: AuditFormat, threshold: float, seen: SeenGames, max_line_bytes: int
) -> None:
    from pipeline.cli.coach_render import coach_json, coach_text, event_seqs
    from pipeline.model import FileProblem
    from pipeline.reader import read_events
    from pipeline.strategy.judge import coach_game_turns

    file_problems: list[FileProblem] = []
    events: list = []

    def keep_game_events(items):
        for item in items:
            if getattr(item, "game_id", None) == game_id and hasattr(item, "type"):
                events.append((item.seq, item.type))
            yield item

    result, policy, judged, turns = coach_game_turns(
        keep_game_events(
            seen.watch(read_events(resolution.sources, on_problem=file_problems.append, max_line_bytes=max_line_bytes))
        ),
        game_id,
        default_rules,
    )
    for p in file_problems:
        where = f"{p.file}:{p.line}" if p.line is not None else p.file
        stderr.print(f"error: {where}: {p.reason}")
    if result is None:
        usage_error(f"no game {game_id!r} in these logs{did_you_mean(game_id, seen.ids)}")
    if policy is None:
        from pipeline.strategy.solver import SolverBudgetError, check_budget

        why = "its ruleset cannot be solved"
        try:
            if result.ruleset is not None:
                check_budget(result.ruleset)
        except SolverBudgetError as exc:
            why = str(exc)
        note(f"game {game_id}: {why}; nothing is judged")
    seqs = event_seqs(judged, events)
    race, race_note = race_judgements(result, judged, turns)
    if race_note:
        note(f"game {game_id}: {race_note}")
    if format is AuditFormat.json:
        sys.stdout.write(coach_json(game_id, judged, threshold, seqs, race))
        sys.stdout.flush()
    else:
        coach_text(game_id, judged, threshold, seqs, stdout, race)
    raise typer.Exit(EXIT_OK)


def race_judgements(result, judged, turns):
    """(the winning-chance judgement of each choice or None, why not): two-player games of a
    ruleset the two-player solver takes (solved on first use, with a progress bar)."""
    if len(result.players) != 2:
        return None, f"{len(result.players)} players: choices are judged by the single-turn yardstick only"
    from pipeline.solved import tables as race_tables
    from pipeline.strategy.race import Race, refusal
    from pipeline.strategy.race_coach import judge_race

    reason = refusal(result.ruleset) if result.ruleset is not None else "its ruleset cannot be read"
    if reason is not None:
        return None, f"{reason}; choices are judged by the single-turn yardstick only"
    table = race_tables.load(result.ruleset)
    with progress_bar("judging the choices by winning chance") as advance, compiles_announced(advance):
        if table is None:
            advance(stage="solving the two-player game")
            state = {"done": 0}

            def report(done: int, total: int) -> None:
                advance(done - state["done"], total=total)
                state["done"] = done

            table = race_tables.load_or_solve(result.ruleset, report)
        return judge_race(Race(table), judged, turns, result.players), None

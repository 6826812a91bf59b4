"""`farkle-logs ingest`: logs → the Parquet dataset (docs/dataset.md)."""

from __future__ import annotations

import errno
import json
from typing import List, Optional

import typer

from pipeline.cli.common import (
    EXIT_DATA,
    EXIT_OK,
    RULES_HELP,
    TextOrJson,
    lean_program,
    outcome,
    max_line_bytes_option,
    progress_bar,
    rules_or_exit,
    stderr,
    stdout,
    usage_error,
)
from pipeline.cli.main import app
from pipeline.cli.engine_options import Engine, check_engine, engine_option, master_option, routing


@app.command("ingest", short_help="Store logs as a Parquet dataset, incrementally.")
def ingest_command(
    logs: List[str] = typer.Argument(
        ..., metavar="LOGS...", help="Log files, directories, globs, .gz files, or - for stdin."
    ),
    out: str = typer.Option(..., "--out", "-o", metavar="DATASET", help="The dataset directory (created if missing)."),
    rules: Optional[str] = typer.Option(
        None, "--rules", "-r", metavar="RULES", help=RULES_HELP + " Used for games whose game_start has no rules."
    ),
    name: Optional[str] = typer.Option(
        None,
        "--name",
        metavar="NAME",
        help="Name the stream read (- or a pipe) like a file: the next run with the same name reads it again, "
        "its old lines duplicates. Without it, a stream whose content is stored already adds nothing.",
    ),
    format: TextOrJson = typer.Option(
        TextOrJson.text, "--format", "-f", metavar="FORMAT", help="Summary as text or json."
    ),
    max_line_bytes: int = max_line_bytes_option(),
    engine: Engine = engine_option(),
    spark_master: Optional[str] = master_option(),
) -> None:
    """Validate, replay and store logs as Parquet tables; re-ingesting adds only what is new.

    Exit 0: everything valid. Exit 1: the data has rejects (lines that are not valid events),
    error findings, or broken files; the summary's `rejects`, `replay_errors` and
    `file_problems` say which. Exit 2: bad usage, a damaged dataset, or a dataset that cannot
    be written (full disk, read-only): nothing is committed.
    """
    if engine is Engine.local:
        lean_program()
    from pipeline.cli.dataset_options import dataset_failure
    from pipeline import engines
    from pipeline.ingest import InputErrors, StoreError
    from pipeline.ingest.identity import StreamNameError
    from pipeline.dataset.store import describe_os_error
    from pipeline.reader.inputs import InputError

    ruleset = rules_or_exit(rules)
    check_engine(engine, spark_master)
    route = routing(engine, spark_master)
    if engine is Engine.spark and "-" in logs:
        usage_error("--engine spark reads files its tasks can open: stdin (-) is for --engine local")

    def notice(message: str) -> None:
        stderr.print(f"note: {message}")

    try:
        with outcome("nothing was ingested", InputError, InputErrors, StoreError, StreamNameError):
            with progress_bar("reading the logs") as advance:
                summary = engines.ingest(
                    logs,
                    out,
                    ruleset,
                    route,
                    progress=advance,
                    notice=notice,
                    max_line_bytes=max_line_bytes,
                    stream_name=name,
                )
    except OSError as exc:  # the reader reports input problems itself: this is the dataset's disk
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            usage_error(
                f"too many open files: {exc.filename or out}: the limit of open files (`ulimit -n`) is too low "
                "for this run; nothing was ingested, the dataset is as it was"
            )
        usage_error(
            f"cannot write to the dataset: {describe_os_error(exc, out)}; nothing was ingested, "
            "the dataset is as it was"
        )
    except Exception as exc:  # a damaged Parquet file of the dataset (exit 2) or a bug (re-raised)
        dataset_failure(out, exc, suffix="; nothing was ingested")
    data = summary.to_dict()
    if format is TextOrJson.json:
        stdout.print_json(json.dumps(data))
    else:
        nothing_new = not data["files"] and not data["lines"]  # one sentence, not a table of numbers
        stdout.line(_text(data), indent="" if nothing_new else " " * 25)  # a wrapped line continues after the numbers
    from pipeline.cli import entry

    entry.skip_teardown()  # committed (fsynced) and summarised: no need to free every object
    raise typer.Exit(EXIT_DATA if summary.exit_code else EXIT_OK)


def _text(d: dict) -> str:
    from pipeline.cli.text import plural, rate

    skipped = f" ({d['files_skipped']:,} skipped: content ingested before)" if d["files_skipped"] else ""
    if not d["files"] and not d["lines"]:  # every file's content was ingested before: nothing new
        return (
            f"nothing new to ingest: {plural(d['files_skipped'], 'file')} skipped (content ingested before); "
            f"{d['dataset']} is unchanged (snapshot {d['snapshot']})"
        )
    lines = [
        f"ingested into {d['dataset']} (snapshot {d['snapshot']}, ingest {d['ingest_id']})",
        f"files      {d['files']:>12,}{skipped}",
        f"lines      {d['lines']:>12,}  = events + duplicates + rejects + blank lines"
        + ("" if d["invariant_holds"] else "  (DOES NOT HOLD: please report)"),
        f"events     {d['events']:>12,}",
        f"duplicates {d['duplicates']:>12,}",
        f"rejects    {d['rejects']:>12,}",
        f"blank      {d['blank_lines']:>12,}",
        f"games      {d['games']:>12,}  ({d['games_recomputed']:,} recomputed with events from earlier ingests)",
        f"findings   {d['findings']:>12,}  ({plural(d['findings_error'], 'error')}: {d['rejects']:,} for the rejects, "
        f"{d['replay_errors']:,} from replay; {plural(d['findings_warning'], 'warning')})",
    ]
    if d.get("superseded"):
        lines.append(f"superseded {d['superseded']:>12,}  stored lines replaced: their file changed there")
        for f in d.get("superseded_files", []):
            lines.append(f"           {f['path']}: {f['events']:,} stored events, {f['rejects']:,} rejects replaced")
    if d["file_problems"]:
        lines.append(
            f"broken     {d['file_problems']:>12,}  {'file' if d['file_problems'] == 1 else 'files'} (see the notes above)"
        )
    lines.append(f"time       {d['seconds']:>12,.2f}  s{rate(d['events'], d['seconds'])}")
    return "\n".join(lines)

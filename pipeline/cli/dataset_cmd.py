"""`farkle-logs dataset check|repair`: is a dataset whole, and if not, make it usable again
(pipeline/dataset/verify.py, pipeline/dataset/repair.py; docs/dataset.md, "Damage and repair")."""

from __future__ import annotations

import json

import typer

from pipeline.cli.common import EXIT_DATA, EXIT_OK, TextOrJson, stdout, usage_error
from pipeline.cli.main import app, make_app

dataset_app = make_app(help="Check a dataset directory file by file, or repair one that is damaged.")
app.add_typer(dataset_app, name="dataset", short_help="Check a dataset, or repair a damaged one.")

FULL_HELP = "Also read every row of every file (slower): finds damage inside a file, not only in its footer."


@dataset_app.command("check", short_help="Verify a dataset file by file (exit 1 if damaged).")
def check(
    dataset: str = typer.Argument(..., metavar="DATASET", help="A dataset directory written by `farkle-logs ingest`."),
    full: bool = typer.Option(False, "--full", help=FULL_HELP),
    format: TextOrJson = typer.Option(
        TextOrJson.text, "--format", "-f", metavar="FORMAT", help="Report as text or json."
    ),
) -> None:
    """Verify the pointer (_current.json), the manifest it names, and that every file the
    manifest lists is a readable Parquet file with its table's schema; count rows.

    Exit 0: healthy. 1: problems found (each named; `dataset repair` says how it would
    fix them). 2: DATASET is not a farkle-logs dataset (missing, foreign, another version)."""
    from pipeline.dataset.verify import check_dataset

    _local_only(dataset, "check")
    report = check_dataset(dataset, full=full)
    if format is TextOrJson.json:
        stdout.print_json(json.dumps(report.to_dict()))
    else:
        stdout.print(_check_text(dataset, report), markup=False)
    raise typer.Exit(EXIT_OK if report.healthy else EXIT_DATA)


def _local_only(dataset: str, command: str) -> None:
    """`check` and `repair` verify and re-point a local directory; a dataset at a URL is read
    by stats and report, which check its pointer, manifest and listed files as they open it."""
    from pipeline.storage import is_url

    if is_url(dataset):
        usage_error(
            f"{dataset}: `dataset {command}` works on a local dataset; a dataset on an object store is checked "
            "by `stats` and `report` as they open it (docs/spark.md, \"Object stores\")"
        )


def _check_text(path: str, report) -> str:
    from pipeline.dataset.tables import TABLES

    lines = [
        f"dataset {path}: "
        + (
            f"snapshot {report.snapshot} ({report.manifest_path})"
            if report.snapshot is not None
            else "no usable pointer"
        )
    ]
    if report.rows:
        lines.append(f"{'table':<14}{'files':>8}{'rows':>14}")
        for table in TABLES:
            lines.append(f"{table:<14}{report.files.get(table, 0):>8,}{report.rows.get(table, 0):>14,}")
    if report.problems:
        lines.append(f"problems ({len(report.problems)}):")
        lines += [f"  {p}" for p in report.problems]
    if report.copies:
        lines.append(f"copies: {report.copies.describe()}")
    if report.notes:
        lines.append("notes:")
        lines += [f"  {n}" for n in report.notes]
    if report.problems:
        lines.append(f"DAMAGED: `farkle-logs dataset repair {path}` points it at its newest complete snapshot")
    elif report.copies:
        lines.append(f"COPIES: `farkle-logs dataset repair {path}` drops the later copies and replays their games")
    else:
        lines.append("healthy")
    return "\n".join(lines)


@dataset_app.command("repair", short_help="Point a damaged dataset at its newest complete snapshot; drop copies.")
def repair(
    dataset: str = typer.Argument(..., metavar="DATASET", help="A dataset directory written by `farkle-logs ingest`."),
    full: bool = typer.Option(False, "--full", help=FULL_HELP),
    format: TextOrJson = typer.Option(
        TextOrJson.text, "--format", "-f", metavar="FORMAT", help="Report as text or json."
    ),
) -> None:
    """Point a damaged dataset at its newest complete snapshot; deletes nothing (snapshots
    it drops go to DATASET/.damaged/) and names the input files to ingest again. Then drop
    the later copies of events stored twice from two sources (what `dataset check` calls
    copies) and replay their games.

    Exit 0: healthy, or repaired. 1: no snapshot verifies (nothing changed). 2: DATASET is
    not a farkle-logs dataset, another ingest holds it, or it cannot be written."""
    from pipeline.dataset.repair import repair_dataset
    from pipeline.ingest.copies import drop_copies

    _local_only(dataset, "repair")
    result = repair_dataset(dataset, full=full)
    dropped = drop_copies(dataset) if result.ok else None
    if dropped is not None and dropped.snapshot is not None:
        if result.healthy:  # its files verify, but it held copies: not "nothing to repair"
            result.actions = [f"snapshot {result.before}: its manifest and files verify"]
        result.actions.append(
            f"dropped {dropped.events:,} later cop{'y' if dropped.events == 1 else 'ies'} of events stored twice "
            f"from two sources ({', '.join(f'{n:,} from {name}' for name, n in sorted(dropped.by_file.items()))}) "
            f"and replayed their {dropped.games:,} game(s): snapshot {dropped.snapshot}"
        )
        result.after = dropped.snapshot
    if format is TextOrJson.json:
        data = result.to_dict()
        data["copies_dropped"] = dropped.events if dropped is not None else 0
        stdout.print_json(json.dumps(data))
    else:
        lines = [f"{dataset}: {action}" for action in result.actions]
        if result.reingest:
            lines.append(
                f"{dataset}: ingest these files again (they were in the snapshots dropped): "
                + ", ".join(result.reingest)
            )
        stdout.print("\n".join(lines), markup=False)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_DATA)

"""The `farkle-logs` console script: one Typer app, one module per command."""
from __future__ import annotations

import typer

app = typer.Typer(
    name="farkle-logs",
    help="Turn raw Farkle game logs into trustworthy numbers: ingest, audit, stats, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each command module registers itself on `app` when imported.
from pipeline.cli import score_cmd, rules_cmd  # noqa: E402,F401
from pipeline.cli import audit_cmd  # noqa: E402,F401
from pipeline.cli import ingest_cmd  # noqa: E402,F401
from pipeline.cli import stats_cmd  # noqa: E402,F401
from pipeline.cli import simulate_cmd  # noqa: E402,F401
from pipeline.cli import report_cmd  # noqa: E402,F401
from pipeline.cli import dataset_cmd  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover
    app()

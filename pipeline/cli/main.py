"""The `farkle-logs` console script: one Typer app, one module per command.

Start-up matters (`farkle-logs --help`, `farkle-logs score 1 5`): importing this module
imports only Typer and the command modules, which import their machinery (the replay
engine, DuckDB, pyarrow, polars, Altair, rich) inside the command functions.
tests/test_cli_conventions.py holds that line.
"""

from __future__ import annotations

import typer

from pipeline.cli.help import Command, Group


class App(typer.Typer):
    """A Typer app whose commands print plain, metavar-based help (pipeline/cli/help.py)."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or Command, **kwargs)


CONTEXT = {"help_option_names": ["-h", "--help"]}


def make_app(**kwargs) -> App:
    return App(
        cls=Group,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=CONTEXT,
        **kwargs,
    )


app = make_app(name="farkle-logs")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("farkle-logs")
        except PackageNotFoundError:  # running from a source tree that was never installed
            number = "unknown"
        typer.echo(f"farkle-logs {number}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Turn raw Farkle game logs into trustworthy numbers: ingest, audit, stats, report.

    Exit codes: 0 fine, 1 findings or errors in the data, 2 bad usage.
    """


# Each command module registers itself on `app` when imported.
from pipeline.cli import score_cmd, rules_cmd  # noqa: E402,F401
from pipeline.cli import audit_cmd  # noqa: E402,F401
from pipeline.cli import ingest_cmd  # noqa: E402,F401
from pipeline.cli import stats_cmd  # noqa: E402,F401
from pipeline.cli import simulate_cmd  # noqa: E402,F401
from pipeline.cli import report_cmd  # noqa: E402,F401
from pipeline.cli import dataset_cmd  # noqa: E402,F401
from pipeline.cli import explore_cmd  # noqa: E402,F401
from pipeline.cli import advise_cmd  # noqa: E402,F401
from pipeline.cli import warm_cmd  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover
    app()

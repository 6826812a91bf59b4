"""Pieces every command shares: usage errors, --rules, --format, progress on terminals.

Commands stay thin: parse options here, call the library, print. Exit codes are the
project's contract: 0 fine, 1 findings or errors in the data, 2 bad usage.
"""
from __future__ import annotations

import enum
import sys
from contextlib import contextmanager
from typing import Iterator, NoReturn

import typer
from rich.console import Console

from pipeline.limits import MAX_LINE_BYTES, format_bytes, parse_size
from pipeline.rules import Ruleset, RulesetError
from pipeline.rules_source import load_ruleset

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2

# Piped output is read by people too (less, CI logs): wide enough that tables are not cut.
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


class TextOrJson(str, enum.Enum):
    text = "text"
    json = "json"


RULES_HELP = "Ruleset: a built-in name (standard, playmonster), a .json/.toml file, or inline JSON."


def usage_error(message: str) -> NoReturn:
    """One clear line on stderr, exit 2."""
    stderr.print(f"error: {message}", markup=False)
    raise typer.Exit(EXIT_USAGE)


def _line_size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def max_line_bytes_option():
    """--max-line-bytes SIZE for the commands that read logs (docs/reliability.md)."""
    return typer.Option(
        format_bytes(MAX_LINE_BYTES).replace(" ", ""), "--max-line-bytes", metavar="SIZE", parser=_line_size,
        help="Longest line read (e.g. 4MiB); a longer line is a bad_json reject naming its size.",
    )


def rules_or_exit(spec: str | None) -> Ruleset:
    try:
        return load_ruleset(spec)
    except RulesetError as exc:
        usage_error(str(exc))


def interactive() -> bool:
    """Progress bars only on a terminal: piped or redirected output stays quiet."""
    return sys.stderr.isatty()


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator["Advance"]:
    """A rich progress bar on stderr when it is a terminal, a no-op otherwise."""
    if not interactive():
        yield Advance(None, None)
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,.0f}"),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total)
        yield Advance(progress, task)


class Advance:
    def __init__(self, progress, task):
        self._progress = progress
        self._task = task

    def __call__(self, amount: float = 1, description: str | None = None) -> None:
        if self._progress is not None:
            if description is not None:
                self._progress.update(self._task, advance=amount, description=description)
            else:
                self._progress.advance(self._task, amount)

"""Pieces every command shares: usage errors, --rules, --format, progress on terminals.

Commands stay thin: parse options here, call the library, print. Exit codes are the
project's contract: 0 fine, 1 findings or errors in the data, 2 bad usage. A user error the
library raises (pipeline.errors.UserError) becomes exit 2 in `user_errors`, around every
command (pipeline.cli.help.Group), so no command catches one only to exit.
"""

from __future__ import annotations

import enum
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterable, Iterator, NoReturn

import typer

from pipeline.cli.text import LazyConsole
from pipeline.errors import UserError  # no imports of its own
from pipeline.limits import MAX_LINE_BYTES, format_bytes, parse_size  # no imports of its own

if TYPE_CHECKING:  # the rules engine loads when a command needs a ruleset, not for --help
    from pipeline.rules import Ruleset

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2

# Text for people, control characters escaped (pipeline/cli/text.py); rich loads on first use.
stdout = LazyConsole()
stderr = LazyConsole(stderr=True, hanging="  ")  # a wrapped note or error stays one block


class TextOrJson(str, enum.Enum):
    text = "text"
    json = "json"


RULES_HELP = "Ruleset: a built-in name (standard, playmonster), a .json/.toml file, or inline JSON."


def lean_program() -> None:
    """In the `farkle-logs` program (not when a test or a user imports the library): make
    pandas unimportable for the rest of the process. pyarrow imports it (a large share of
    start-up) on its first array made from a Python list, only to ask whether the list is a pandas
    object, and the local ingest and audit never use it. Spark's paths need it: they do not
    call this."""
    from pipeline.cli import entry

    if entry.AS_PROGRAM:
        from pipeline.worker_boot import without_pandas

        without_pandas()


def usage_error(message: str) -> NoReturn:
    """One clear line on stderr, exit 2."""
    stderr.print(f"error: {message}")
    raise typer.Exit(EXIT_USAGE)


@contextmanager
def user_errors() -> Iterator[None]:
    """The one place a user error becomes exit 2: its details, then `error: message; remedy`."""
    try:
        yield
    except UserError as exc:
        for detail in exc.details:
            stderr.print(f"error: {detail}")
        usage_error(str(exc))


@contextmanager
def outcome(text: str, *kinds: type[UserError]) -> Iterator[None]:
    """Add what did not happen (`nothing was ingested`) to a user error of `kinds` on its way out."""
    try:
        yield
    except kinds as exc:
        exc.remedy = f"{exc.remedy}; {text}" if exc.remedy else text
        raise


def _line_size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def max_line_bytes_option():
    """--max-line-bytes SIZE for the commands that read logs (docs/reliability.md)."""
    return typer.Option(
        format_bytes(MAX_LINE_BYTES).replace(" ", ""),
        "--max-line-bytes",
        metavar="SIZE",
        parser=_line_size,
        help="Longest line read (e.g. 4MiB); a longer line is a bad_json reject naming its size.",
    )


def note(message: str) -> None:
    stderr.print(f"note: {message}")


def did_you_mean(wanted: str, known: Iterable[str]) -> str:
    """' (did you mean s1-g000003?)' for the closest of `known` (several only when they are
    equally close), or '' when nothing is close; case is ignored in the comparison."""
    from difflib import SequenceMatcher

    known = list(dict.fromkeys(k for k in known if k is not None))
    target = wanted.lower()
    scored = []
    for name in known:
        matcher = SequenceMatcher(None, target, name.lower())
        if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6:
            ratio = matcher.ratio()
            if ratio >= 0.6:
                scored.append((ratio, name))
    if not scored:
        return ""
    best = max(r for r, _ in scored)
    close = [name for r, name in sorted(scored, key=lambda x: (-x[0], x[1])) if r >= best - 1e-9][:3]
    return f" (did you mean {' or '.join(close)}?)"


def no_match_error(what: str, wanted: str, known: Iterable[str], where: str) -> NoReturn:
    """Exit 2: a filter that matches nothing, with the closest names it could have meant."""
    usage_error(f"no {what} {wanted!r} in {where}{did_you_mean(wanted, known)}")


def rules_or_exit(spec: str | None) -> "Ruleset":
    """The ruleset `spec` names (a RulesetError is a user error: exit 2)."""
    from pipeline.reader.rules_source import load_ruleset

    return load_ruleset(spec)


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
        console=stderr.console,
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

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
def progress_bar(stage: str, total: float | None = None, unit: str = "") -> Iterator["Advance"]:
    """A rich progress bar on stderr when it is a terminal, a no-op otherwise (piped or
    redirected output stays quiet). It shows the stage, done/total in `unit`, the percentage
    and an estimate of the time left; the library moves it through `Advance`'s calls."""
    if not interactive():
        yield Advance(None, None)
        return
    from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn
    from rich.text import Text

    class Done(ProgressColumn):
        def render(self, task) -> Text:
            return Text(done_text(task.completed, task.total, task.fields.get("unit", "")))

    class Left(ProgressColumn):
        def render(self, task) -> Text:
            return Text(time_text(task.elapsed, task.time_remaining if task.completed else None, task.total))

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=24),
        Done(),
        Left(),
        console=stderr.console,
        transient=True,
        redirect_stdout=False,  # only notes (stderr) may appear while the bar is drawn
    ) as progress:
        yield Advance(progress, progress.add_task(stage, total=total, unit=unit))


JUDGE_COMPILE = "compiling the two-player judge (first run after an install only; farkle-logs warm does it ahead)"


@contextmanager
def compiles_announced(advance: "Advance", what: str = JUDGE_COMPILE) -> Iterator[None]:
    """Within the block, numba's first compile (the two-player judge's loops, on a first
    run that was not warmed) is said in a note on stderr and on the bar: a wait with a name."""
    from pipeline.ingest.warm import first_compile

    def say() -> None:
        note(what)
        advance(label=what)

    with first_compile(say):
        yield


def live(advance: "Advance") -> "Advance | None":
    """`advance` where a bar is drawn, else None: a library then skips measuring progress."""
    return advance if advance.live else None


def done_text(done: float, total: float | None, unit: str) -> str:
    """'12.3/74.0 MB 17%', '1,204/3,000 games 40%', '5,120 lines' (no total), '' (nothing yet)."""
    if not total and not done:
        return ""
    if unit == "bytes":
        scale, unit = (1e9, "GB") if max(total or 0, done) >= 1e9 else (1e6, "MB")
        text = f"{done / scale:,.1f}" + (f"/{total / scale:,.1f}" if total else "") + f" {unit}"
    else:
        text = f"{done:,.0f}" + (f"/{total:,.0f}" if total else "") + (f" {unit}" if unit else "")
    return text + (f" {min(done / total, 1):.0%}" if total else "")


def time_text(elapsed: float | None, left: float | None, total: float | None) -> str:
    """'about 0:42 left' once there is an estimate, else the time spent so far, '0:05'."""
    if total and left is not None:
        minutes, seconds = divmod(int(left + 0.5), 60)
        return f"about {minutes}:{seconds:02d} left"
    minutes, seconds = divmod(int(elapsed or 0), 60)
    return f"{minutes}:{seconds:02d}"


class Advance:
    """What the library calls to move the bar: `advance(n)` adds n to the stage's count;
    `advance(stage="replaying games", total=2_907_192, unit="events")` starts a new stage
    (its count from zero, its own estimate); `advance(n, total=N)` sets the total once known;
    `advance(label="computing blunders")` says what the stage is doing now. Safe to call from
    several threads (rich locks)."""

    @property
    def live(self) -> bool:
        """Whether a bar is drawn (libraries skip the work of measuring progress otherwise)."""
        return self._progress is not None

    def __init__(self, progress, task):
        self._progress = progress
        self._task = task

    def __call__(
        self,
        amount: float = 0,
        *,
        stage: str | None = None,
        total: float | None = None,
        unit: str | None = None,
        label: str | None = None,
    ) -> None:
        if self._progress is None:
            return
        if stage is not None:  # a task of its own: its count, total and estimate start afresh
            self._progress.remove_task(self._task)
            self._task = self._progress.add_task(stage, total=total, unit=unit or "")
        elif total is not None:  # the stage's total, once it is known
            self._progress.update(self._task, total=total)
        if label is not None:  # what the stage is doing now, its count kept
            self._progress.update(self._task, description=label)
        if amount:
            self._progress.advance(self._task, amount)

"""Text for people's terminals: control characters escaped, lines that fit the width.

Names, game ids, file names and messages come from the logs, and a log is written by
someone else: a player called `ev\\x1b[31mil\\r` or a game id holding `\\x1b]0;...\\x07`
would recolour, retitle or overwrite the user's terminal if printed raw. Every text
renderer (audit, coach, stats, ingest, rules, notes and errors on stderr) passes what it
prints through `printable`, either directly or through the two consoles below, which apply
it to every string they are given. JSON and CSV are data, not text for a terminal: they
keep the values exact and never pass through here.

The consoles need rich only for tables, and import it on first use (start-up time, issue
12). Lines wrap at spaces to the terminal's width ($COLUMNS if set); nothing is cut with an
ellipsis, and wide tables are split into parts that fit (see `fitted_tables`). Output to a
pipe or a file is not wrapped, and its tables are laid out for 80 columns. A word is never
broken: a code, an id or a number longer than the line stays whole on a line of its own.

`Listing` is a table drawn without rich, for output that holds thousands of tables (an
audit's text: a timeline and a result per game): the same layout as `plain_table`, a
fraction of the time, and its cells are never folded, whatever the width.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Iterable, Sequence

# C0 and C1 controls and DEL, lone surrogates (undecodable bytes), line and paragraph
# separators, and the bidirectional overrides and isolates that reorder what follows them
# ("trojan source"). Other format characters (zero-width joiners in emoji) print harmlessly.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_TRAILING_BLANKS = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: Any) -> str:
    """`value` as text that cannot drive a terminal: control characters become visible
    escapes (`\\x1b`, `\\r`, `\\u202e`). None becomes the empty string."""
    text = "" if value is None else str(value)
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(_escape, text)


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 error', '2 errors', '1,204 games' (`words` for an irregular plural: '1 die', '3 dice')."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


# A rate on a tiny input measures start-up, not work: it is said only for at least this much.
RATE_MIN_SECONDS = 1.0
RATE_MIN_EVENTS = 10_000


def rate(events: int, seconds: float) -> str:
    """', 25,020 events/s' for a run long and large enough for the rate to mean something
    (RATE_MIN_SECONDS, RATE_MIN_EVENTS), else ''."""
    if seconds < RATE_MIN_SECONDS or events < RATE_MIN_EVENTS:
        return ""
    return f", {events / seconds:,.0f} events/s"


def terminal_width(stream: Any = None) -> int | None:
    """Columns to fit: $COLUMNS if set, else the width of the terminal `stream` writes to
    (stdout by default), else None: output to a pipe or a file is not wrapped (the pager or
    the log viewer does that), and tables there are laid out for 80 columns."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        pass
    return None


class LazyConsole:
    """Text output on stdout or stderr. `print` escapes every string it is given and wraps
    it to `terminal_width()`; tables and rules go through a rich Console created on first
    use (plain lines do not need rich, and `score` prints only those)."""

    def __init__(self, stderr: bool = False, hanging: str = ""):
        self._stderr = stderr
        self._hanging = hanging  # indent of the wrapped lines of a printed string
        self._console = None

    @property
    def stream(self):
        return sys.stderr if self._stderr else sys.stdout

    @property
    def console(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=False)
        # a file or a pipe: nothing to fit, so no cell is ever folded (fitted_tables lays parts out for 80)
        self._console.width = terminal_width(self.stream) or 100_000
        return self._console

    @property
    def width(self) -> int:
        """The width tables are laid out for: the terminal's, else 80."""
        return terminal_width(self.stream) or 80

    def print(self, *objects: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("highlight", False)
        if all(isinstance(o, str) for o in objects) and set(kwargs) <= {"markup", "highlight"}:
            self.line(" ".join(objects), indent=self._hanging)
            return
        safe = [printable(o) if isinstance(o, str) else o for o in objects]
        console = self.console
        with console.capture() as captured:
            console.print(*safe, **kwargs)
        # rich pads every line of a table to its width: trailing blanks only get in the way
        text = _TRAILING_BLANKS.sub(r"\1", captured.get())
        self.stream.write(text)
        self.stream.flush()

    def line(self, text: str = "", indent: str = "") -> None:
        """`text` escaped and wrapped at spaces to the width; lines after the first get
        `indent` (a hanging indent keeps a wrapped entry readable as one)."""
        width = terminal_width(self.stream)
        out = []
        for part in str(text).split("\n"):
            if width is None:  # a pipe or a file: one line per line
                out.append(printable(part))
                continue
            lead = part[: len(part) - len(part.lstrip(" "))]
            out.extend(wrap(part, width, lead, lead + indent))
        self.stream.write("\n".join(out) + "\n")
        self.stream.flush()

    @property
    def color(self) -> bool:
        """Whether to colour: on a terminal, unless $NO_COLOR is set (no-color.org)."""
        return is_terminal(self.stream) and not os.environ.get("NO_COLOR")

    def rule(self, title: str = "") -> None:
        """A horizontal rule across the width with `title` in it; a title too long for one
        goes on its own lines under a plain rule (never cut with an ellipsis)."""
        self.stream.write(rule_text(title, self.width, self.color, terminal_width(self.stream)))
        self.stream.flush()

    def print_json(self, text: str) -> None:
        """Machine output: the data exact (JSON escapes control characters itself)."""
        stream = sys.stderr if self._stderr else sys.stdout
        stream.write(json.dumps(json.loads(text), indent=2, ensure_ascii=True) + "\n")
        stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


_GREEN, _RESET = "\x1b[92m", "\x1b[0m"
STYLES = {"bold red": "\x1b[1;31m", "yellow": "\x1b[33m", "bold": "\x1b[1m", "italic": "\x1b[3m"}


def rule_text(title: str, width: int, color: bool = False, wrap_width: int | None = None) -> str:
    """LazyConsole.rule's text: `title` centred in a line of `width` "─" (as rich draws it),
    or, when it does not fit, a plain rule and the title wrapped under it (`wrap_width`:
    None for a file, where nothing wraps)."""
    title = printable(title)
    green, reset = (_GREEN, _RESET) if color else ("", "")
    if not title:
        return f"{green}{'─' * width}{reset}\n"
    size = cell_width(title) + 2
    if size + 4 <= width:
        left = (width - size) // 2
        return f"{green}{'─' * left} {reset}{title}{green} {'─' * (width - size - left)}{reset}\n"
    lines = [title] if wrap_width is None else wrap(title, wrap_width, "", "  ")
    return f"{green}{'─' * width}{reset}\n" + "\n".join(lines) + "\n"


def cell_width(text: str) -> int:
    """Columns `text` takes on a terminal: wide (East Asian) characters take two, combining
    marks none."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


class Listing:
    """A table drawn as text without rich: the layout of `plain_table` (a title, the headers,
    a rule under them, columns two spaces apart, numbers right-aligned, a blank line between
    sections), every cell whole. Cells are escaped here (`printable`)."""

    __slots__ = ("columns", "title", "rows")

    def __init__(self, *columns: tuple[str, bool], title: str | None = None):
        self.columns = [(printable(header), number) for header, number in columns]
        self.title = printable(title) if title else None
        self.rows: list[tuple[list[str], str | None] | None] = []  # None: a section break

    def add_row(self, *cells: Any, style: str | None = None) -> None:
        self.rows.append(([printable(c) for c in cells], style))

    def add_section(self) -> None:
        self.rows.append(None)

    def render(self, color: bool = False) -> str:
        headers = [h for h, _ in self.columns]
        widths = [cell_width(h) for h in headers]
        for row in self.rows:
            if row is not None:
                for i, cell in enumerate(row[0]):
                    w = cell_width(cell)
                    if w > widths[i]:
                        widths[i] = w
        numbers = [n for _, n in self.columns]

        def line(cells: list[str]) -> str:
            parts = []
            for cell, width, number in zip(cells, widths, numbers):
                pad = " " * (width - cell_width(cell))
                parts.append(pad + cell if number else cell + pad)
            return "  ".join(parts).rstrip(" ")

        def styled(text: str, style: str | None) -> str:
            return f"{STYLES[style]}{text}{_RESET}" if color and style and text else text

        out = []
        if self.title:
            out.append(styled(self.title, "italic"))
        out.append(styled(line(headers), "bold"))
        out.append("─" * (sum(widths) + 2 * (len(widths) - 1)))
        for row in self.rows:
            out.append("" if row is None else styled(line(row[0]), row[1]))
        return "\n".join(out) + "\n"


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """`text` (escaped) as lines of at most `width` columns, broken at spaces; a word longer
    than a line (a path, an id) stays whole on a line of its own, never split or cut."""
    import textwrap

    subsequent = indent if subsequent is None else subsequent
    return textwrap.wrap(
        printable(text.lstrip(" ")),
        width=max(width, len(subsequent) + 10, 20),
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


# ---------------------------------------------------------------------------- tables
def plain_table(*columns: tuple[str, bool], title: str | None = None):
    """A rich table as a listing: a rule under the headers, no borders, two spaces between
    columns. `columns`: (header, is_number); numbers are right-aligned and never wrapped,
    text folds rather than being cut with an ellipsis."""
    from rich import box
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        title=printable(title) if title else None,
        title_justify="left",
        min_width=len(printable(title)) if title else None,  # a narrow part keeps "(part 2 of 2)" on one line
    )
    for header, number in columns:
        table.add_column(printable(header), justify="right" if number else "left", overflow="fold", no_wrap=number)
    return table


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def fitted_tables(
    key: tuple[str, str],
    columns: Sequence[tuple[str, str]],
    rows: Iterable[dict[str, Any]],
    width: int,
    *,
    right: Iterable[str] = (),
) -> list:
    """Tables (`plain_table`) showing `rows`, with the `key` column (field, header) first in
    each and the `columns` (field, header) spread over as many tables as it takes to fit
    `width`; each part but a lone one is titled "(part i of n)".

    Cells are strings already formatted; numbers are never split or cut (their columns are
    as wide as their longest value), headers wrap at spaces, and only the key column (names,
    which can be any length) folds when even one value column would not fit beside it.
    """
    rows = list(rows)
    right = set(right)

    def natural(field: str, header: str) -> int:
        return max([_longest_word(header), *(len(printable(r[field])) for r in rows)] or [1])

    # plain_table: each column is followed by one space of padding and one of separator
    key_field, key_header = key
    key_width = max(min(natural(key_field, key_header), width // 3), min(8, natural(key_field, key_header)))
    groups: list[list[tuple[str, str, int]]] = []
    used = width + 1  # forces a new group at the first column
    for field, header in columns:
        w = natural(field, header)
        if groups and used + 2 + w <= width:
            groups[-1].append((field, header, w))
            used += 2 + w
        else:
            groups.append([(field, header, w)])
            used = key_width + 2 + w
    tables = []
    for i, group in enumerate(groups):
        title = f"(part {i + 1} of {len(groups)})" if len(groups) > 1 else None
        table = plain_table((key_header, False), *((header, False) for _, header, _ in group), title=title)
        table.columns[0].width = key_width
        for column, (field, _, w) in zip(table.columns[1:], group):
            column.width = w
            column.justify = "right" if field in right else "left"
        for row in rows:
            table.add_row(printable(row[key_field]), *(printable(row[f]) for f, _, _ in group))
        tables.append(table)
    return tables

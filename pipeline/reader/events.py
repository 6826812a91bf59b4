"""Input sources → (file, line, bytes) → Event or BadLine, in reading order, blank lines skipped."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem
from pipeline.reader.inputs import InputSource
from pipeline.reader.lines import iter_lines
from pipeline.reader.parse import parse_line


def read_lines(
    sources: Iterable[InputSource],
    on_problem: Callable[[FileProblem], None] | None = None,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[tuple[str, int, bytes]]:
    """(file, line number, raw bytes) for every non-blank line of every source, in order;
    a line over `max_line_bytes` is a `LongLine` (parse_line makes it a bad_json BadLine)."""
    for source in sources:
        name = source.name
        for line, raw in iter_lines(source, max_line_bytes):
            yield name, line, raw
        if source.problem is not None and on_problem is not None:
            on_problem(source.problem)


def read_events(
    sources: Iterable[InputSource],
    on_problem: Callable[[FileProblem], None] | None = None,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Event | BadLine]:
    """Every line of every source as an Event or a BadLine; blank lines are skipped."""
    for name, line, raw in read_lines(sources, on_problem, max_line_bytes=max_line_bytes):
        yield parse_line(raw, name, line)  # type: ignore[misc]  # never None: no blanks

"""The log reader: input sources → numbered lines → Event or BadLine, in reading order.

Audit, ingest and the simulator's tests all read logs through here, so one file read by
any of them yields the same records with the same reasons. Split by job: `lines` turns
bytes into numbered lines (gzip, broken files, counters), `parse` turns one line into a
record (fast path in `fast`, reference checks and messages in `validate`), `timestamps`
holds the one definition of a valid `ts`.

A file that breaks is never an exception: its good lines come out, then the FileProblem
is put on the source and handed to `on_problem`, so a consumer such as the replay engine
only ever sees Event and BadLine.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from pipeline.inputs import InputSource
from pipeline.limits import MAX_LINE_BYTES
from pipeline.model import BadLine, Event, FileProblem
from pipeline.reader.lines import LongLine, iter_lines
from pipeline.reader.parse import is_blank, long_line_reject, parse_line

__all__ = [
    "FileProblem", "LongLine", "MAX_LINE_BYTES", "is_blank", "iter_lines", "long_line_reject", "parse_line",
    "read_events", "read_lines",
]


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

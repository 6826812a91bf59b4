"""The log reader: input sources → numbered lines → Event or BadLine, in reading order.

Audit, ingest and the simulator's tests all read logs through here, so one file read by
any of them yields the same records with the same reasons. Split by job: `lines` turns
bytes into numbered lines (gzip, broken files, counters), `parse` turns one line into a
record (fast path in `fast`, reference checks and messages in `validate`), `timestamps`
holds the one definition of a valid `ts`.

A file that breaks is never an exception: its good lines come out, then the FileProblem
is put on the source and handed to `on_problem`, so a consumer such as the replay engine
only ever sees Event and BadLine.

The names below load their module on first use, so that a command needing one small piece
(`score` reads a ruleset through `rules_source`) does not import the decoders.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "FileProblem": "pipeline.model",
    "MAX_LINE_BYTES": "pipeline.limits",
    "LongLine": "pipeline.reader.lines",
    "iter_lines": "pipeline.reader.lines",
    "is_blank": "pipeline.reader.parse",
    "long_line_reject": "pipeline.reader.parse",
    "parse_line": "pipeline.reader.parse",
    "read_events": "pipeline.reader.events",
    "read_lines": "pipeline.reader.events",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pipeline.reader' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

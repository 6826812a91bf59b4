"""Audit's second process for pass 1 of one large file, started as early as possible.

`pipeline.audit.fast` reads one large plain file with this process and one spawned worker
(see its `_Regions`). A spawned worker is a fresh interpreter that first imports numpy,
pyarrow, msgspec and numba (about half a second), and while it does only this process
works. Started by `audit_fast` itself, it would begin that only after this process had
imported the same modules; the audit command instead calls `prestart` before its own heavy
imports, and `audit_fast` takes that worker over (`take`), or starts one then if none was
started for the same file, rules and line limit.

Standard library only (and worker_boot), so the command reaches `prestart` quickly.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import worker_boot
from pipeline.reader.sniff import GZIP_MAGIC, starts_with
from pipeline.reader.split import line_start

PARALLEL_MIN_BYTES = 32 << 20  # a plain file this large is scanned by two processes at once
# The worker's region starts here (then the regions rebalance as they go: audit_fast._Regions).
FIRST_SHARE = 0.5
BLOCK = 1 << 20  # audit_fast reads this many bytes at a time; a smaller line limit reads by lines


@dataclass
class Worker:
    """A started worker: the regions array it shares, and the pipe its parts come back on."""

    process: Any
    shared: Any  # [this process's read position, its region's end, the worker's position, its end]
    receive: Any
    send: Any
    middle: int  # where the worker's region starts
    size: int

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
        self.receive.close()
        self.send.close()


_started: dict[tuple, Worker] = {}


def _key(source: Any, default_rules: Any, max_line_bytes: int, give_up: bool, jit: bool) -> tuple:
    return (str(source.path), source.name, default_rules, max_line_bytes, give_up, jit)


def start(
    source: Any,
    default_rules: Any,
    max_line_bytes: int,
    give_up: bool,
    *,
    jit: bool = True,
    min_bytes: int | None = None,
    first_share: float | None = None,
    block: int | None = None,
) -> Worker | None:
    """Spawn the worker for `source` (an InputSource), or None where one file is not read by
    two processes: stdin, gzip, not a regular file, smaller than min_bytes, one core, a line
    limit under a block (read by the reader's lines), no line start to split at. Options
    left None are this module's constants; `give_up` is audit_fast.scan's."""
    min_bytes = PARALLEL_MIN_BYTES if min_bytes is None else min_bytes
    first_share = FIRST_SHARE if first_share is None else first_share
    block = BLOCK if block is None else block
    if source.path is None or max_line_bytes < block or (os.cpu_count() or 1) < 2:
        return None
    try:
        path = Path(source.path)
        size = path.stat().st_size
        if size < min_bytes or not path.is_file():
            return None
        if starts_with(path, GZIP_MAGIC):
            return None
        middle = line_start(path, int(size * first_share), size)
    except OSError:
        return None
    if middle is None:
        return None
    import multiprocessing

    # spawned, not forked: the parent may already hold Arrow's thread pools
    ctx = multiprocessing.get_context("spawn")
    shared = ctx.Array("q", [0, middle, middle, size])
    receive, send = ctx.Pipe(duplex=False)
    payload = pickle.dumps((source, middle, default_rules, max_line_bytes, give_up, jit))
    process = ctx.Process(
        target=worker_boot.run, daemon=True, args=("pipeline.audit.fast:_region_worker", payload, shared, send)
    )
    try:
        process.start()
    except Exception:  # pragma: no cover - a worker that cannot start: scan in one process
        receive.close()
        send.close()
        return None
    return Worker(process, shared, receive, send, middle, size)


def prestart(source: Any, default_rules: Any, max_line_bytes: int, give_up: bool = True, jit: bool = True) -> None:
    """Start the worker now for a later `take` of the same file, rules and line limit."""
    key = _key(source, default_rules, max_line_bytes, give_up, jit)
    if key not in _started:
        worker = start(source, default_rules, max_line_bytes, give_up, jit=jit)
        if worker is not None:
            _started[key] = worker


def take(
    source: Any, default_rules: Any, max_line_bytes: int, give_up: bool, jit: bool = True, **options: Any
) -> Worker | None:
    """The worker `prestart` started for this file, rules and line limit, else a new one
    (`start`'s options); any other pre-started worker is stopped (it would only compete)."""
    worker = _started.pop(_key(source, default_rules, max_line_bytes, give_up, jit), None)
    discard()
    return worker if worker is not None else start(source, default_rules, max_line_bytes, give_up, jit=jit, **options)


def discard() -> None:
    """Stop every pre-started worker not taken."""
    while _started:
        _started.popitem()[1].stop()

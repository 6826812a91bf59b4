"""The compiled code of the fast paths, made ready before the work needs it.

The scan (`pipeline.ingest.scan`) and the replay kernel (`pipeline.replay.fast`) are
compiled by numba the first time they run after an install or an edit of their sources,
which takes a long while, and are loaded from numba's cache every later time (next to the
sources in `__pycache__`, or under NUMBA_CACHE_DIR when that is set). numba compiles one
version per argument type, so `warm` runs the very functions ingest and audit call, on a
few lines of one game, rather than naming signatures that could drift from theirs.

`farkle-logs warm` (and `make install`/`make demo`) compiles at a moment the user expects
to wait (the two-player judge's compiled loops too); a command that needs the compiled code
calls `ready` first, which says so when numba compiles (the first large input after an
install that was not warmed), and the commands that judge two-player games say so through
`first_compile`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from pipeline.limits import MAX_LINE_BYTES

# One short game, every event type: what the scan, msgspec and the kernel each take.
SAMPLE = b"""\
{"game_id":"warm","seq":1,"ts":"2024-01-01T00:00:00Z","type":"game_start","players":["a","b"],"rules":"standard"}
{"game_id":"warm","seq":2,"ts":"2024-01-01T00:00:01Z","type":"roll","player":"a","dice":[1,5,2,3,4,6]}
{"game_id":"warm","seq":3,"ts":"2024-01-01T00:00:02Z","type":"keep","player":"a","dice":[1,5,2,3,4,6],"points":1500}
{"game_id":"warm","seq":4,"ts":"2024-01-01T00:00:03Z","type":"bank","player":"a","points":1500,"total":1500}
{"game_id":"warm","seq":5,"ts":"2024-01-01T00:00:04Z","type":"roll","player":"b","dice":[2,2,3,4,6,6]}
{"game_id":"warm","seq":6,"ts":"2024-01-01T00:00:05Z","type":"farkle","player":"b"}
{"game_id":"warm","seq":7,"ts":"2024-01-01T00:00:06Z","type":"game_end","winner":"a","scores":{"a":1500,"b":0}}
"""
WHAT = "compiling the fast scanner and replay kernel (first run after an install only)"


def warm(jit: bool = True, replay: bool = True) -> None:
    """Compile (or load from numba's cache) every compiled function of ingest and audit:
    the scan, and unless `replay` is False (every game goes to the reference) the kernel."""
    import pyarrow.compute as pc

    from pipeline.ingest.parse import parse_block
    from pipeline.reader.split import Block
    from pipeline.replay.fast.arrow import replay_table
    from pipeline.rules import Ruleset

    events = parse_block(Block(0, "warm", 1, SAMPLE), "warm", MAX_LINE_BYTES, jit=jit).events
    if replay:
        events = events.take(pc.sort_indices(events.column("source_line")))
        replay_table(events, Ruleset.builtin("standard"), jit=jit)


def ready(jit: bool = True, on_compile: Callable[[], None] | None = None, replay: bool = True) -> bool:
    """`warm`, calling `on_compile` once when numba starts compiling (its cache held nothing
    usable): the caller says what the wait is before it turns into silence. Whether
    anything was compiled."""
    if not jit:
        return False
    with first_compile(on_compile) as seen:
        warm(jit, replay)
    return bool(seen)


@contextmanager
def first_compile(callback: Callable[[], None] | None) -> Iterator[list[bool]]:
    """Within the block, `callback` is called once if numba compiles anything (numba
    triggers its "numba:compile" event only when its cache had no machine code for a call);
    the list it yields holds True once that happened. Any compiled code counts: the two-player
    judge's too, which `stats`, `report` and `audit --coach` run. The listener is installed
    when numba is imported (`pipeline.rules.jit.when_imported`), so that a block which never
    loads compiled code never imports numba, and one that loads it in a thread imports it
    there, beside DuckDB's work, rather than before it."""
    from pipeline.rules import jit as jit_module

    seen: list[bool] = []
    installed: list[tuple] = []

    def install() -> None:
        try:
            from numba.core import event
        except ImportError:  # pragma: no cover - numba is a dependency; without it nothing compiles
            return

        class FirstCompile(event.Listener):
            def on_start(self, _event) -> None:
                if not seen:
                    seen.append(True)
                    if callback is not None:
                        callback()

            def on_end(self, _event) -> None:
                pass

        listener = FirstCompile()
        event.register("numba:compile", listener)
        installed.append((event, listener))

    jit_module.when_imported(install)
    try:
        yield seen
    finally:
        jit_module.forget(install)
        for event, listener in installed:
            event.unregister("numba:compile", listener)

"""The kernel compiled by numba: imported only when a replay runs, never for `--help`.

`cache=True` writes the machine code next to the sources (or numba's user cache when that
is read-only), so only the first run after an install or an edit of kernel.py pays the
compile (measured in docs/performance.md). Without numba (or with `jit=False` to
FastReplay, FARKLE_LOGS_NO_JIT=1 for the commands) the same functions run as plain
Python: slower, identical results.
"""

from __future__ import annotations


from pipeline.replay.fast import kernel

_COMPILED = None


def replay_events():
    """The compiled `kernel.replay_events` (or the Python one if numba is unavailable)."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = _compile()
    return _COMPILED


def _compile():
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency; this keeps a broken install usable
        return kernel.replay_events
    import types

    jit = numba.njit(cache=True, nogil=True)
    # numba resolves a function's globals when it compiles it, so the kernel is rebuilt
    # over a namespace whose helpers are the jitted ones; kernel.py itself stays plain
    # Python (the reference the tests compare against)
    namespace = dict(vars(kernel))
    for name in ("is_sub_multiset", "_decision_row", "_roll_row", "_turn_row", "_end_turn", "replay_events"):
        f = getattr(kernel, name)
        namespace[name] = jit(types.FunctionType(f.__code__, namespace, name, f.__defaults__))
    return namespace["replay_events"]

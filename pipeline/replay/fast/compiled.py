"""The kernel compiled by numba: imported only when a replay runs, never for `--help`.

`cache=True` writes the machine code next to the sources (or numba's user cache when that
is read-only), so only the first run after an install or an edit pays the compile. Without
numba (or with `jit=False` to FastReplay, FARKLE_LOGS_NO_JIT=1 for the commands) the same
functions run as plain Python: slower, identical results.

numba resolves a function's globals when it compiles it, so each module's functions are
rebuilt over a namespace whose helpers are the jitted ones; kernel.py and the rules of play
(`pipeline.rules.play`) stay plain Python, the reference the tests compare against. numba's
cache notices an edit of the file a function is in, not of the files it calls into or takes
constants from: the kernel's cache names therefore carry a digest of those files
(`DEPENDENCIES`), so an edit of a rule or a finding code compiles afresh instead of running
stale machine code.
"""

from __future__ import annotations

import hashlib
import types
from typing import Any, Callable

from pipeline import model
from pipeline.replay.fast import kernel
from pipeline.rules import play
from pipeline.rules.jit import import_numba

#: Modules whose functions or constants the compiled kernel holds.
DEPENDENCIES = (play, model)
#: The kernel's functions that run compiled (the rest of kernel.py is constants).
KERNEL_FUNCTIONS = ("_give_up", "_other_seat", "_decision_row", "_roll_row", "_turn_row", "_end_turn", "replay_events")

_COMPILED = None


def replay_events():
    """The compiled `kernel.replay_events` (or the Python one if numba is unavailable)."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = _compile()
    return _COMPILED


def play_functions() -> list[str]:
    """Every function of the rules of play (each compiled, since they call one another)."""
    return [
        name
        for name, value in vars(play).items()
        if isinstance(value, types.FunctionType) and value.__module__ == play.__name__
    ]


def digest() -> str | None:
    """A digest of the sources the kernel depends on; None if one cannot be read."""
    sha = hashlib.sha256()
    for module in DEPENDENCIES:
        try:
            with open(module.__file__ or "", "rb") as f:
                sha.update(f.read())
        except OSError:
            return None
    return sha.hexdigest()[:16]


def _compile():
    try:
        numba = import_numba()
    except ImportError:  # pragma: no cover - numba is a dependency; this keeps a broken install usable
        return kernel.replay_events
    stamp = digest()
    jit = numba.njit(cache=stamp is not None, nogil=True)
    rules = rebuild(vars(play), play_functions(), jit)
    namespace = dict(vars(kernel))
    namespace.update((name, rules[name]) for name in play_functions())
    compiled = rebuild(namespace, KERNEL_FUNCTIONS, jit, suffix=f"_{stamp}" if stamp else "")
    return compiled["replay_events"]


def rebuild(source: dict[str, Any], names: list[str] | tuple[str, ...], jit: Callable, suffix: str = "") -> dict:
    """`source` (a module's namespace) with `names` jitted, each resolving the others there."""
    namespace = dict(source)
    for name in names:
        f = source[name]
        g = types.FunctionType(f.__code__, namespace, name, f.__defaults__)
        g.__qualname__ = name + suffix  # the cache file's name
        namespace[name] = jit(g)
    return namespace

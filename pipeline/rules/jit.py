"""numba, imported the one way every compiled loop of farkle-logs wants it.

numba probes for SciPy's BLAS when it first loads its array maths (which loading any
function from its cache does): where SciPy is installed, that imports scipy.linalg, a few
tenths of a second on every run that judges or replays compiled, for linear algebra no
loop here does (no np.dot, no np.linalg). The probe is answered "absent" instead, by a
None in sys.modules for the one module it imports, which raises ImportError before any
SciPy package is imported; the entry is removed at once, so SciPy itself stays importable.
A loop that did use BLAS would fail to compile with numba's "scipy 0.16+ is required".
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Callable

_PROBED = "scipy.linalg.cython_blas"
# Called once numba is imported (`when_imported`): a listener of numba's events installed
# only by a run that loads numba, and by the thread that loads it.
_HOOKS: list[Callable[[], None]] = []
_HOOKS_LOCK = threading.Lock()


def import_numba() -> ModuleType:
    """The numba module (ImportError where it is not installed)."""
    if "numba.np.arraymath" not in sys.modules and _PROBED not in sys.modules:
        sys.modules[_PROBED] = None  # type: ignore[assignment]
        try:
            import numba.np.arraymath  # noqa: F401 - its import runs the probe
        finally:
            if sys.modules.get(_PROBED, 0) is None:
                del sys.modules[_PROBED]
    import numba

    with _HOOKS_LOCK:
        hooks, _HOOKS[:] = list(_HOOKS), []
    for hook in hooks:
        hook()
    return numba


def when_imported(hook: Callable[[], None]) -> None:
    """Call `hook` once numba is imported: now if it is, else when `import_numba` first
    imports it. Importing numba is slow (docs/performance.md), and a command whose compiled
    loops load in a background thread (the two-player judge) would otherwise pay for it up
    front, before any of its work, only to listen for a compile."""
    with _HOOKS_LOCK:
        if "numba" not in sys.modules:
            _HOOKS.append(hook)
            return
    hook()


def forget(hook: Callable[[], None]) -> None:
    """A hook of `when_imported` not called yet is no longer wanted."""
    with _HOOKS_LOCK:
        if hook in _HOOKS:
            _HOOKS.remove(hook)

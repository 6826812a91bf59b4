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
from types import ModuleType

_PROBED = "scipy.linalg.cython_blas"


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

    return numba

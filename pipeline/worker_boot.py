"""The first code a spawned worker process runs (ingest's pool, audit's second process).

A spawned worker is a fresh interpreter, and everything it imports before its first task
is time during which only the other core works. pyarrow imports pandas (a large share of
a worker's start-up) the first time it is handed a Python list, only to ask
whether that list is a pandas object. No worker uses pandas, so a worker records it as
absent before anything imports pyarrow; pyarrow then takes the list as a list. The parent
process is left alone: a library user may well use pandas there.

This module must stay free of heavy imports: it is unpickled, and run, before the worker's
real code is imported. The worker's own arguments travel pickled as bytes for the same
reason (unpickling them imports their classes' modules).
"""

from __future__ import annotations

import importlib
import pickle
import sys


class _NoPandas:
    """A meta path finder that refuses pandas. (A None entry in sys.modules is not enough:
    pyarrow's compiled import takes the None from sys.modules as the module.)"""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not loaded in farkle-logs worker processes", name=name)
        return None


def without_pandas() -> None:
    """Make pandas unimportable in this process (a worker's initializer)."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def run(target: str, payload: bytes, *channels: object) -> None:
    """Call `module:function` with the unpickled `payload` (a tuple of arguments) followed by
    `channels` (queues, which must travel as process arguments, not inside pickled bytes)."""
    without_pandas()
    module, _, function = target.partition(":")
    args = pickle.loads(payload)
    getattr(importlib.import_module(module), function)(*args, *channels)

"""The dataset on disk: its layout and opening, table schemas, Arrow batches, the snapshot store, verify and repair."""

import importlib.util
import sys

# pyarrow (C++) tries `import dateutil` on every compute call that converts a Python value
# (an option, a scalar); when dateutil is not installed, each try searches sys.path again
# (about 0.2 ms). Ingest makes thousands of such calls, so a missing dateutil is recorded
# as missing once, which makes the import fail at once. Nothing changes if it is installed.
if "dateutil" not in sys.modules and importlib.util.find_spec("dateutil") is None:
    sys.modules["dateutil"] = None  # type: ignore[assignment]

"""The on-disk cache of what stats derives from the rules engine and the solver alone.

The exact farkle odds (pipeline.stats.odds) and the solved policy tables
(pipeline.strategy.judge.policy_tables) depend only on a ruleset and on the code that
computes them, yet cost a few tenths of a second per ruleset: as much as the SQL of a
whole default `stats` run. So they are kept between runs, keyed by a fingerprint of that
code's source files (a change of the engine or the solver invalidates them) and the ruleset.

Where: `$FARKLE_LOGS_CACHE_DIR`, else `$XDG_CACHE_HOME/farkle-logs`, else
`~/.cache/farkle-logs`; `FARKLE_LOGS_CACHE_DIR=off` disables the cache. A cache that cannot
be read or written is ignored (the figures are recomputed): it never makes a run fail.
Files are written whole (temporary file, then rename), so a reader never sees half of one.
A ruleset the solver does not solve (past its state budget, pipeline.strategy.solver) is
never cached: asking the solver again costs only its budget check, and that check is what
records the refusal the commands print (`refusals`), on every run.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Sequence

import pyarrow as pa

OFF = ("", "0", "off", "no", "false")
POLICY_TABLES = ("policy_values", "policy_tail", "keep_options")


def cache_dir() -> Path | None:
    """The cache directory (not created here), or None when the cache is off."""
    setting = os.environ.get("FARKLE_LOGS_CACHE_DIR")
    if setting is not None and setting.strip().lower() in OFF:
        return None
    if setting:
        return Path(setting)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "farkle-logs"


@cache
def source_fingerprint(*packages: str) -> str:
    """A short hash of the .py files of pipeline/<package> for each package named."""
    digest = hashlib.sha256()
    for package in packages:
        directory = files(f"pipeline.{package}")
        for name in sorted(entry.name for entry in directory.iterdir() if entry.name.endswith(".py")):
            digest.update(f"{package}/{name}".encode() + b"\0" + (directory / name).read_bytes())
    return digest.hexdigest()[:16]


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole, or not at all (OSError is swallowed: a cache)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


# ---- the policy tables ------------------------------------------------------------------
def _policy_paths(text: str) -> dict[str, Path] | None:
    """One Arrow IPC file per table and ruleset (the three tables differ in length)."""
    base = cache_dir()
    if base is None:
        return None
    key = hashlib.sha256(text.encode()).hexdigest()[:20]
    prefix = f"policy-{source_fingerprint('rules', 'strategy')}-{key}"
    return {name: base / f"{prefix}-{name}.arrow" for name in POLICY_TABLES}


def _schemas() -> dict[str, pa.Schema]:
    from pipeline.strategy.judge import KEEPS_SCHEMA, TAIL_SCHEMA, VALUES_SCHEMA

    return {"policy_values": VALUES_SCHEMA, "policy_tail": TAIL_SCHEMA, "keep_options": KEEPS_SCHEMA}


def _read_policy(paths: dict[str, Path]) -> dict[str, pa.Table] | None:
    """The cached tables, or None when a file is missing, unreadable, of another shape, or
    empty (nothing solved is never written, so an empty table is damage)."""
    schemas = _schemas()
    try:
        out = {}
        for name, path in paths.items():
            table = pa.ipc.open_file(pa.py_buffer(path.read_bytes())).read_all()
            if not table.schema.equals(schemas[name]) or table.num_rows == 0:
                return None
            out[name] = table
        return out
    except (OSError, pa.ArrowException):
        return None


def _write_policy(paths: dict[str, Path], tables: dict[str, pa.Table]) -> None:
    for name, path in paths.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, tables[name].schema) as writer:
            writer.write_table(tables[name])
        write_atomically(path, sink.getvalue().to_pybytes())


def policy_tables(ruleset_texts: Sequence[str | None]) -> dict[str, pa.Table]:
    """pipeline.strategy.judge.policy_tables through the cache: `policy_values`,
    `policy_tail` and `keep_options` for every solvable ruleset text (solved once per
    ruleset and code version, not once per run)."""
    from pipeline.strategy.judge import policy_tables as solve

    parts: list[dict[str, pa.Table]] = []
    for text in sorted({t for t in ruleset_texts if t is not None}):
        paths = _policy_paths(text)
        tables = _read_policy(paths) if paths is not None else None
        if tables is None:
            tables = solve([text])
            solved = all(t.num_rows > 0 for t in tables.values())
            if paths is not None and solved:  # a refused ruleset is asked again (see above)
                _write_policy(paths, tables)
        parts.append(tables)
    if not parts:
        return solve([])
    return {name: pa.concat_tables([p[name] for p in parts]) for name in POLICY_TABLES}

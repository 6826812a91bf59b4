"""The solved two-player tables on disk: shipped with the package, or solved once and cached.

`pipeline.strategy.race` solves the turn starts of a ruleset (W[a, b] for every pair of
totals below the target); everything else (any turn's within-turn values, the final turn)
is recomputed from them on demand. The tables of the built-in rulesets ship as package data
(`data/NAME.npz`, written by `farkle-logs rules solve NAME`); any other ruleset is
solved on first use and kept in the user's cache directory (`pipeline.stats.cache`:
`$FARKLE_LOGS_CACHE_DIR`, else `$XDG_CACHE_HOME/farkle-logs`), keyed by the ruleset and a
fingerprint of the rules engine's and the solver's source. A file that cannot be read, or
that was solved for another ruleset or shape, is ignored and solved again.

File format: numpy's `.npz` (compressed): `w`, float64 [K, K]; `meta`, a JSON string with
the canonical ruleset, the largest fixed-point bound and the solver's tolerances.
"""

from __future__ import annotations

import hashlib
import io
import json
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from pipeline.rules import Ruleset
from pipeline.solved.headline import SHIPPED as SHIPPED  # re-exported: the shipped rulesets
from pipeline.solved.headline import shipped_name, shipped_path
from pipeline.strategy import race as race_model


def cache_dir():
    """`pipeline.stats.cache.cache_dir`, imported when a table is not shipped: reading a
    built-in's table (`rules show`) loads neither DuckDB nor pyarrow."""
    from pipeline.stats.cache import cache_dir as where

    return where()


def source_fingerprint(*packages: str) -> str:
    from pipeline.stats.cache import source_fingerprint as fingerprint

    return fingerprint(*packages)


def write_atomically(path: Path, data: bytes) -> None:
    from pipeline.stats.cache import write_atomically as write

    write(path, data)


def encode(table: race_model.RaceTable) -> bytes:
    """The table as `.npz` bytes: the same table always gives the same bytes."""
    buffer = io.BytesIO()
    meta = json.dumps(race_model.table_metadata(table), sort_keys=True)
    np.savez_compressed(buffer, w=np.ascontiguousarray(table.w, dtype=np.float64), meta=np.array(meta))
    return _strip_timestamps(buffer.getvalue())


def _strip_timestamps(data: bytes) -> bytes:
    """Rewrite the zip with fixed member dates, so a rerun writes identical bytes."""
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info.filename))
    return out.getvalue()


def decode(data: bytes, rules: Ruleset) -> race_model.RaceTable | None:
    """The table in `data` if it was solved for `rules` and has its shape, else None."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            w = np.array(npz["w"], dtype=np.float64)
    except (OSError, ValueError, KeyError, EOFError):
        return None
    k = race_model.levels(rules)
    if Ruleset.from_value(json.loads(meta.get("rules", "null")) or "standard") != rules or w.shape != (k, k):
        return None
    return race_model.RaceTable(rules, w, float(meta.get("bound", "nan")))


def cache_path(rules: Ruleset) -> Path | None:
    base = cache_dir()
    if base is None:
        return None
    key = hashlib.sha256(rules.to_json().encode()).hexdigest()[:20]
    return base / f"race-{source_fingerprint('rules', 'strategy')}-{key}.npz"


def load(rules: Ruleset) -> race_model.RaceTable | None:
    """The shipped or cached table of `rules`, or None."""
    name = shipped_name(rules)
    if name is not None:
        table = _read(shipped_path(name), rules)
        if table is not None:
            return table
    cached = cache_path(rules)
    return _read(cached, rules) if cached is not None else None


def _read(path: Path, rules: Ruleset) -> race_model.RaceTable | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode(data, rules)


@lru_cache(maxsize=8)
def race(rules: Ruleset) -> race_model.Race:
    """The solved race of `rules`: shipped, cached, or solved now and cached (RaceUnsolved
    when the solver refuses it)."""
    return race_model.Race(load_or_solve(rules))


def load_or_solve(rules: Ruleset, progress: Callable[[int, int], None] | None = None) -> race_model.RaceTable:
    race_model.check(rules)
    table = load(rules)
    if table is not None:
        return table
    table = race_model.solve_table(rules, progress)
    path = cache_path(rules)
    if path is not None:
        write_atomically(path, encode(table))
    return table


def solvable(rules: Ruleset) -> bool:
    return race_model.refusal(rules) is None


# ---- every turn's roll values ------------------------------------------------------------------
def turn_rolls_paths(rules: Ruleset) -> tuple[Path, Path] | None:
    base = cache_dir()
    if base is None:
        return None
    key = hashlib.sha256(rules.to_json().encode()).hexdigest()[:20]
    prefix = f"race-turns-{source_fingerprint('rules', 'strategy')}-{key}"
    return base / f"{prefix}-starts.npy", base / f"{prefix}-rolls.npy"


@lru_cache(maxsize=4)
def turn_rolls(rules: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """(starts, rolls): rolling's chance at every turn-points level below each pair's top, for
    every pair of totals (`race_kernel.fill_turn_rolls`, float32: enough for figures in
    percentage points), built the first time a ruleset's choices are judged in bulk and kept
    in the cache (read back memory-mapped). Pair i = a * K + b has rows starts[i] to
    starts[i + 1] - 1."""
    paths = turn_rolls_paths(rules)
    solved = race(rules)
    k = solved.n_levels
    if paths is not None:
        try:
            starts = np.load(paths[0], allow_pickle=False)
            rolls = np.load(paths[1], mmap_mode="r", allow_pickle=False)
            if starts.shape == (k * k + 1,) and rolls.shape == (int(starts[-1]), 6) and rolls.dtype == np.float32:
                return starts, rolls
        except (OSError, ValueError):
            pass
    m, ft = solved.moves, solved.final
    kernel = race_model.kernel()
    tops = np.zeros(k * k, dtype=np.int64)
    kernel["turn_tops"](k, solved.w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor, tops)
    starts = np.zeros(k * k + 1, dtype=np.int64)
    np.cumsum(tops, out=starts[1:])
    rolls = np.zeros((int(starts[-1]), 6), dtype=np.float32)
    kernel["fill_turn_rolls"](
        starts, k, solved.w, ft.catch_up, ft.d_cap, ft.bank_ok, m.risk_floor,
        m.roll_lo, m.r_prob, m.opt_lo, m.o_dv, m.o_next, m.farkle, m.max_dv, rolls,
    )  # fmt: skip
    if paths is not None:
        for path, array in zip(paths, (starts, rolls)):
            buffer = io.BytesIO()
            np.save(buffer, array, allow_pickle=False)
            write_atomically(path, buffer.getvalue())
    # read-only, as the cache gives it back (memory-mapped): numba compiles a loop once per
    # argument type, and a writable array is another type than a read-only one
    rolls.setflags(write=False)
    return starts, rolls

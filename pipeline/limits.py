"""The reader's hard limits: how long a line and how deep a JSON value may be.

Both exist so that one hostile line costs one reject, never the run: without them a single
64 MiB line is held whole (and copied several times over) and a line nested 5,000 deep makes
the JSON decoders recurse until Python gives up. Both are generous for real logs (an event
is a few hundred bytes, three levels deep) and documented in docs/reliability.md.

No imports: the reader, the input resolver and the ruleset loaders all read these.
"""

from __future__ import annotations

#: Longest line (bytes, decompressed, without the newline) that is parsed; longer lines are
#: rejected with their size, read past in bounded memory. `--max-line-bytes` changes it.
MAX_LINE_BYTES = 1 << 20

#: Deepest nesting of arrays and objects in one line or ruleset (the top-level object is
#: level 1). Deeper is `bad_json` "nested too deeply". 128 keeps every recursive encoder and
#: decoder downstream (msgspec, json, DuckDB, Arrow) far from Python's recursion limit.
MAX_JSON_DEPTH = 128
TOO_DEEP = f"nested too deeply: more than {MAX_JSON_DEPTH} levels of arrays and objects"
#: What a value with an integer of more than 4,300 digits gets (Python refuses to read it).
TOO_MANY_DIGITS = "a number is too large to represent"


def format_bytes(size: int) -> str:
    """1048576 -> '1 MiB', 1536 -> '1.5 KiB', 999 -> '999 bytes': for limit messages."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
}


def parse_size(text: str) -> int:
    """'1048576', '512KiB', '64M', '1 GiB' -> bytes (units are binary: 1 K = 1024). Raises
    ValueError with a message for anything else, or for a size below 1 byte."""
    stripped = text.strip().replace("_", "")
    digits = stripped.rstrip("kKmMgGiIbB ")
    unit = stripped[len(digits) :].strip().lower()
    if not (digits.isascii() and digits.isdigit()) or unit not in _UNITS:
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with K, M or G (binary: 1M = 1 MiB)")
    size = int(digits) * _UNITS[unit]
    if size < 1:
        raise ValueError(f"a size must be at least 1 byte, got {text!r}")
    return size

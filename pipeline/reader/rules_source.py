"""Where a ruleset comes from on the command line: a built-in name, a file, or JSON text.

Kept out of `pipeline.rules` because it reads files; the engine itself stays pure. A ruleset
file is a few hundred bytes, so one over MAX_RULESET_FILE_BYTES is refused unread, and a file
nested deeper than the parsers can recurse is an error like any other bad file (exit 2).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pipeline.limits import TOO_DEEP, format_bytes
from pipeline.rules import Ruleset, RulesetError
from pipeline.rules.ruleset import json_problem

MAX_RULESET_FILE_BYTES = 1 << 20


def load_ruleset(spec: str | None) -> Ruleset:
    """`standard`, `playmonster`, a `.json`/`.toml` file, or inline JSON such as
    `{"base": "standard", "opening": 1000}`. None means `standard`."""
    if spec is None:
        return Ruleset.builtin("standard")
    text = spec.strip()
    if text.startswith(("{", '"', "[")):
        return Ruleset.from_json_text(text)
    path = Path(spec)
    if path.suffix.lower() in (".json", ".toml") or _is_file(path):
        return load_ruleset_file(path)
    return Ruleset.builtin(spec)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long for the OS, or with a NUL: not a file
        return False


def load_ruleset_file(path: Path) -> Ruleset:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_RULESET_FILE_BYTES + 1)
    except OSError as exc:
        raise RulesetError(f"cannot read ruleset file {path}: {exc.strerror or exc}") from None
    except ValueError:  # a NUL in the name (only a library caller can pass one)
        raise RulesetError(f"cannot read ruleset file {str(path)!r}: a file name cannot hold a NUL byte") from None
    if len(raw) > MAX_RULESET_FILE_BYTES:
        raise RulesetError(f"ruleset file {path} is over {format_bytes(MAX_RULESET_FILE_BYTES)}: not a ruleset")
    kind = path.suffix[1:] or "JSON"
    try:
        if path.suffix.lower() == ".toml":
            value = tomllib.loads(raw.decode("utf-8"))
        else:
            value = json.loads(raw)
    except RecursionError:
        raise RulesetError(f"ruleset file {path} is not valid {kind}: {TOO_DEEP}") from None
    except UnicodeDecodeError as exc:
        raise RulesetError(f"ruleset file {path} is not valid {kind}: {exc}") from None
    except ValueError as exc:
        raise RulesetError(f"ruleset file {path} is not valid {kind}: {json_problem(exc)}") from None
    try:
        return Ruleset.from_value(value)
    except RulesetError as exc:
        raise RulesetError(f"{path}: {exc}") from None

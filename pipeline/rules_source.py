"""Where a ruleset comes from on the command line: a built-in name, a file, or JSON text.

Kept out of `pipeline.rules` because it reads files; the engine itself stays pure.
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pipeline.rules import Ruleset, RulesetError


def load_ruleset(spec: str | None) -> Ruleset:
    """`standard`, `playmonster`, a `.json`/`.toml` file, or inline JSON such as
    `{"base": "standard", "opening": 1000}`. None means `standard`."""
    if spec is None:
        return Ruleset.builtin("standard")
    text = spec.strip()
    if text.startswith("{") or text.startswith('"'):
        return Ruleset.from_json_text(text)
    path = Path(spec)
    if path.suffix.lower() in (".json", ".toml") or path.is_file():
        return load_ruleset_file(path)
    return Ruleset.builtin(spec)


def load_ruleset_file(path: Path) -> Ruleset:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RulesetError(f"cannot read ruleset file {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".toml":
            value = tomllib.loads(raw.decode("utf-8"))
        else:
            value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RulesetError(f"ruleset file {path} is not valid {path.suffix[1:] or 'JSON'}: {exc}") from None
    try:
        return Ruleset.from_value(value)
    except RulesetError as exc:
        raise RulesetError(f"{path}: {exc}") from None

"""The first-player line of `rules show` for the shipped rulesets, from a small JSON written
beside each shipped table (`data/standard.json` and the like, by `farkle-logs rules solve NAME`) holding the
ruleset and `pipeline.strategy.race.headline` of the table: showing a built-in reads a few
hundred bytes and imports neither numpy nor the solver. Any other ruleset (or a sidecar
that is missing or was written for other rules) goes the long way, through the table.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from pipeline.rules import BUILTIN_RULESETS, Ruleset, RulesetError

SHIPPED = ("standard", "playmonster")
DATA_PACKAGE = "pipeline.solved"
DATA_DIR = "data"


def shipped_name(rules: Ruleset) -> str | None:
    for name in SHIPPED:
        if BUILTIN_RULESETS[name] == rules:
            return name
    return None


def shipped_path(name: str) -> Path:
    """Where `rules solve NAME` writes a built-in's table: the package's data directory."""
    return Path(str(files(DATA_PACKAGE))) / DATA_DIR / f"{name}.npz"


def sidecar_path(table_path: Path) -> Path:
    """The headline written beside a table: `NAME.npz` -> `NAME.json`, any other name gets
    `.json` added (never the table's own path)."""
    if table_path.suffix == ".npz":
        return table_path.with_suffix(".json")
    return table_path.with_name(table_path.name + ".json")


def sidecar(rules: Ruleset, headline: dict) -> bytes:
    """The sidecar's bytes: the same headline always gives the same bytes."""
    return (json.dumps({"rules": rules.to_json(), "headline": headline}, sort_keys=True, indent=1) + "\n").encode()


def shipped_headline(rules: Ruleset) -> dict | None:
    """The shipped headline of `rules`, or None (not a shipped ruleset, no sidecar, or a
    sidecar for other rules)."""
    name = shipped_name(rules)
    if name is None:
        return None
    try:
        data = json.loads(sidecar_path(shipped_path(name)).read_text(encoding="utf-8"))
        headline = data["headline"]
        # the same rules, read as rules (a knob added later, at its default, is the same rules)
        if Ruleset.from_value(json.loads(data["rules"])) != rules or not isinstance(headline["first_player"], float):
            return None
    except (OSError, ValueError, KeyError, TypeError, RulesetError):
        return None
    return headline

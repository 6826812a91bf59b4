"""What `rules show` prints of a shipped ruleset's solutions, from a small JSON written beside
each shipped table (`data/standard.json` and the like, by `farkle-logs rules solve NAME`):
the ruleset, `pipeline.strategy.race.headline` of the table (the first-player line), and the
single-turn figures: the solved turn's headline (`Policy.headline`) and the exact farkle
odds. Showing a built-in reads a few kilobytes and imports neither numpy nor the solver,
which would take about a second to solve the turn again. Any other ruleset (or a sidecar
that is missing or was written for other rules) goes the long way, through the solvers.
"""

from __future__ import annotations

import json
from fractions import Fraction
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
    """The sidecar's bytes: the same headline always gives the same bytes. The single-turn
    figures are worked out here (writing is `rules solve`'s business: seconds are nothing
    beside the two-player solve); a ruleset the turn solver refuses has none."""
    from pipeline.rules.describe import odds_rows
    from pipeline.strategy.solver import SolverBudgetError, solve

    try:
        turn: dict | None = solve(rules).headline()
    except SolverBudgetError:
        turn = None
    odds = [[n, f"{p.numerator}/{p.denominator}"] for n, p in odds_rows(rules)]
    data = {"rules": rules.to_json(), "headline": headline, "turn": turn, "farkle_odds": odds}
    return (json.dumps(data, indent=1) + "\n").encode()  # in the order the solvers give (rules show prints it so)


def _shipped(rules: Ruleset) -> dict | None:
    """The sidecar of `rules` as written, or None (not a shipped ruleset, no sidecar, or a
    sidecar for other rules)."""
    name = shipped_name(rules)
    if name is None:
        return None
    try:
        data = json.loads(sidecar_path(shipped_path(name)).read_text(encoding="utf-8"))
        # the same rules, read as rules (a knob added later, at its default, is the same rules)
        if not isinstance(data, dict) or Ruleset.from_value(json.loads(data["rules"])) != rules:
            return None
    except (OSError, ValueError, KeyError, TypeError, RulesetError):
        return None
    return data


def shipped_headline(rules: Ruleset) -> dict | None:
    """The shipped first-player headline of `rules`, or None."""
    data = _shipped(rules)
    headline = data.get("headline") if data else None
    if not isinstance(headline, dict) or not isinstance(headline.get("first_player"), float):
        return None
    return headline


def shipped_turn(rules: Ruleset) -> tuple[dict, list[tuple[int, Fraction]]] | None:
    """The shipped single-turn headline and exact farkle odds (dice 6 to 1) of `rules`, or
    None (then the caller solves them: a sidecar written before they were kept has none)."""
    data = _shipped(rules)
    if data is None:
        return None
    try:
        turn, odds = data["turn"], [(int(n), Fraction(p)) for n, p in data["farkle_odds"]]
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if not isinstance(turn, dict) or [n for n, _ in odds] != [6, 5, 4, 3, 2, 1]:
        return None
    return turn, odds

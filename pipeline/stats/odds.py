"""The exact-odds table joined into the bust-rate SQL: one row per (ruleset, dice).

Built with the rules engine (`farkle_probability`, an enumeration of all 6^n rolls) for
each distinct canonical ruleset text in the dataset's `games` table, then registered in
DuckDB as the Arrow table `exact_odds`.
"""
from __future__ import annotations

import dataclasses
import json

import pyarrow as pa

from pipeline.rules import Ruleset, RulesetError, farkle_probability

ODDS_SCHEMA = pa.schema(
    [
        ("ruleset", pa.string()),  # the games.ruleset text, as stored
        ("ruleset_name", pa.string()),  # standard | playmonster | custom (base X)
        ("dice", pa.int32()),
        ("farkle_num", pa.int64()),  # exact probability = farkle_num / farkle_den
        ("farkle_den", pa.int64()),
        ("farkle_prob", pa.float64()),
    ]
)


def parse_ruleset(text: str | None) -> Ruleset | None:
    """A games.ruleset text as a Ruleset; None when it cannot be read."""
    if text is None:
        return None
    try:
        return Ruleset.from_value(json.loads(text))
    except (ValueError, RulesetError):
        return None


# Knobs that never decide whether a roll scores: rulesets differing only in these share odds,
# so the engine enumerates once for them (farkle_probability caches per ruleset).
NON_SCORING_KNOBS = {"opening": 500, "min_bank": 0, "farkle_penalty": 0, "penalty_after": 3, "target": 10000}


def exact_odds_table(ruleset_texts: list[str | None]) -> pa.Table:
    """Exact farkle odds for 1-6 dice under each readable ruleset text."""
    columns: dict[str, list] = {name: [] for name in ODDS_SCHEMA.names}
    for text in sorted({t for t in ruleset_texts if t is not None}):
        rules = parse_ruleset(text)
        if rules is None:
            continue
        scoring = dataclasses.replace(rules, **NON_SCORING_KNOBS)
        for dice in range(1, 7):
            p = farkle_probability(dice, scoring)
            columns["ruleset"].append(text)
            columns["ruleset_name"].append(rules.name)
            columns["dice"].append(dice)
            columns["farkle_num"].append(p.numerator)
            columns["farkle_den"].append(p.denominator)
            columns["farkle_prob"].append(float(p))
    return pa.table(columns, schema=ODDS_SCHEMA)


def matching_rulesets(ruleset_texts: list[str | None], wanted: Ruleset) -> list[str]:
    """The stored ruleset texts whose ruleset equals `wanted` knob for knob (base ignored)."""
    return sorted({t for t in ruleset_texts if t is not None and parse_ruleset(t) == wanted})

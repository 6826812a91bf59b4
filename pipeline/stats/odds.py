"""The exact-odds table joined into the bust-rate SQL: one row per (ruleset, dice).

Built with the rules engine (`farkle_probability`, an enumeration of all 6^n rolls) for
each distinct canonical ruleset text in the dataset's `games` table, then registered in
DuckDB as the Arrow table `exact_odds`.

The enumeration is a noticeable share of a `stats` run per ruleset, and its result only
changes with the engine; so results are kept in a small JSON file of the stats
cache (pipeline.stats.cache: where it lives, how to turn it off) keyed by a hash of the
engine's source files (`pipeline/rules/*.py`) and the ruleset's scoring knobs.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from pipeline.rules import Ruleset, RulesetError, farkle_probability
from pipeline.stats.cache import cache_dir, source_fingerprint, write_atomically

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

# Knobs that never decide whether a roll scores: rulesets differing only in these share odds.
NON_SCORING_KNOBS: dict[str, Any] = {
    "opening": 500,
    "min_bank": 0,
    "farkle_penalty": 0,
    "penalty_after": 3,
    "target": 10000,
    "rounds": None,
}


def parse_ruleset(text: str | None) -> Ruleset | None:
    """A games.ruleset text as a Ruleset; None when it cannot be read."""
    if text is None:
        return None
    try:
        return Ruleset.from_value(json.loads(text))
    except (ValueError, RulesetError):
        return None


def scoring_part(rules: Ruleset) -> Ruleset:
    return dataclasses.replace(rules, **NON_SCORING_KNOBS)


def engine_fingerprint() -> str:
    return source_fingerprint("rules")


def cache_file() -> Path | None:
    base = cache_dir()
    return None if base is None else base / f"exact-odds-{engine_fingerprint()}.json"


def _load(path: Path | None) -> dict[str, list[list[int]]]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _store(path: Path | None, data: dict[str, list[list[int]]]) -> None:
    if path is not None:
        write_atomically(path, json.dumps(data).encode())


def farkle_odds(rules_list: list[Ruleset]) -> dict[Ruleset, list[Fraction]]:
    """P(farkle) for 1..6 dice under each ruleset, from the engine (through the cache)."""
    path = cache_file()
    cached = _load(path)
    out: dict[Ruleset, list[Fraction]] = {}
    added = False
    for rules in rules_list:
        scoring = scoring_part(rules)
        key = scoring.to_json()
        entry = cached.get(key)
        try:
            odds = [Fraction(int(num), int(den)) for num, den in entry]  # type: ignore[union-attr]
            if len(odds) != 6:
                raise ValueError
        except (TypeError, ValueError, ZeroDivisionError):
            odds = [farkle_probability(n, scoring) for n in range(1, 7)]
            cached[key] = [[p.numerator, p.denominator] for p in odds]
            added = True
        out[rules] = odds
    if added:
        _store(path, cached)
    return out


def exact_odds_table(ruleset_texts: list[str | None]) -> pa.Table:
    """Exact farkle odds for 1-6 dice under each readable ruleset text."""
    readable = {}
    for text in sorted({t for t in ruleset_texts if t is not None}):
        rules = parse_ruleset(text)
        if rules is not None:
            readable[text] = rules
    odds = farkle_odds(list(readable.values()))
    rows = [
        {
            "ruleset": text,
            "ruleset_name": rules.name,
            "dice": dice,
            "farkle_num": p.numerator,
            "farkle_den": p.denominator,
            "farkle_prob": float(p),
        }
        for text, rules in readable.items()
        for dice, p in enumerate(odds[rules], start=1)
    ]
    return rows_table(rows, ODDS_SCHEMA)


def rows_table(rows: list[dict[str, object]], schema: pa.Schema) -> pa.Table:
    """`rows` as an Arrow table of `schema`, read by Arrow's JSON reader. Not pa.table or
    pa.array of Python lists: pyarrow then imports pandas (slow to import) only to ask whether a list is a pandas object. Floats go through their shortest repr,
    which reads back as the same double."""
    import pyarrow.json as pajson

    if not rows:
        return pa.Table.from_batches([], schema)
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    return pajson.read_json(pa.BufferReader(data), parse_options=options).select(schema.names)


def matching_rulesets(ruleset_texts: Sequence[str | None], wanted: Ruleset) -> list[str]:
    """The stored ruleset texts whose ruleset equals `wanted` knob for knob (base ignored)."""
    return sorted({t for t in ruleset_texts if t is not None and parse_ruleset(t) == wanted})

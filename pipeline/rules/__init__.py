"""The rules engine: rulesets, keep scoring, the lookup table and exact odds.

Pure: nothing in this package touches files, the network or the clock, so replay, the
simulator and the SQL stats can all trust it and tests can call it directly.
"""

from pipeline.rules.ruleset import BUILTIN_RULESETS, KNOB_NAMES, Ruleset, RulesetError
from pipeline.rules.scoring import (
    Keep,
    Meld,
    best_keep,
    best_split,
    corrected_keep_value,
    dice_counts,
    format_breakdown,
    is_farkle,
    keep_of,
    score_keep,
    scoring_dice,
)
from pipeline.rules.table import ScoreTable, counts_key, dice_key, score_table
from pipeline.rules.odds import farkle_probability

__all__ = [
    "BUILTIN_RULESETS",
    "KNOB_NAMES",
    "Keep",
    "Meld",
    "Ruleset",
    "RulesetError",
    "ScoreTable",
    "best_keep",
    "best_split",
    "corrected_keep_value",
    "counts_key",
    "dice_counts",
    "dice_key",
    "format_breakdown",
    "keep_of",
    "farkle_probability",
    "is_farkle",
    "score_keep",
    "score_table",
    "scoring_dice",
]

"""The simulator: bots play complete Farkle games that follow log-format.md and rules.md.

`simulate()` streams JSONL (gzip for `.gz`), byte-identical for the same seed; with an
injection rate it corrupts a share of games with exactly one error each and writes the
ground truth to a manifest (see inject.py and docs/simulate.md).
"""

from pipeline.simulate.bots import BOT_NAMES, BOTS, DEFAULT_BOTS
from pipeline.simulate.check import check_game
from pipeline.simulate.game import game_id, play_game
from pipeline.simulate.inject import INJECTABLE, NOT_INJECTABLE, inject
from pipeline.simulate.run import Summary, parse_players, simulate

__all__ = [
    "BOTS",
    "BOT_NAMES",
    "DEFAULT_BOTS",
    "INJECTABLE",
    "NOT_INJECTABLE",
    "Summary",
    "check_game",
    "game_id",
    "inject",
    "parse_players",
    "play_game",
    "simulate",
]

"""Dice for the simulator: one random number per roll, and per-ruleset keep tables.

A roll of n dice is drawn as one integer in [0, 6**n) (its base-6 digits are the faces), so
rolling costs a single call to `random()` whatever n is. Everything a bot needs to know about
a roll (is it a farkle, which keep each keep style picks and what that keep is worth) is
computed once per ruleset from `pipeline.rules.score_table` and looked up by that integer.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from pipeline.rules import Ruleset, counts_key, score_table
from pipeline.rules.play import key_counts
from pipeline.rules.scoring import counts_to_dice

POW6 = (1, 6, 36, 216, 1296, 7776, 46656)

#: How a bot chooses among the legal keeps of a roll when it means to roll on.
#: best: highest value, fewest dice on a tie; all: every die that can score (most dice,
#: then highest value); min: fewest dice (one combination), then highest value;
#: smart: highest value less SMART_DIE_COST per die kept (drops a lone 5 to roll one more
#: die, keeps three 1s). A bot that banks always banks on the highest-value keep.
KEEP_STYLES = ("best", "all", "min", "smart")
SMART_DIE_COST = 75


def _roll_faces(n: int) -> list[list[int]]:
    """Every ordered roll of n dice, indexed by its base-6 number (die i = digit i + 1)."""
    return [[d + 1 for d in digits] for digits in product(range(6), repeat=n)]


@lru_cache(maxsize=1)
def rolls_by_index() -> tuple[list[list[int]], ...]:
    """ROLLS[n][i]: the faces of roll number i of n dice (ROLLS[0] is empty)."""
    return ([],) + tuple(_roll_faces(n) for n in range(1, 7))


def _sub_counts(counts):
    for sub in product(*(range(c + 1) for c in counts)):
        if any(sub):
            yield sub


class DiceTables:
    """Per ruleset: for every roll index of n dice, the keep each style takes (None: farkle).

    `choice[style][n][i]` is a `(dice, points, n_kept)` tuple; the tuples are shared, so
    whoever edits an event must copy the dice list first.
    """

    def __init__(self, rules: Ruleset):
        self.rules = rules
        table = score_table(rules)
        value = table.value
        by_key: dict[int, dict[str, tuple | None]] = {}
        for row in table.rows:
            counts = key_counts(row.key)
            if row.is_farkle:
                by_key[row.key] = {s: None for s in KEEP_STYLES}
                continue
            legal = []
            for sub in _sub_counts(counts):
                v = value[counts_key(sub)]
                if v is not None:
                    legal.append((sub, v, sum(sub)))
            best = max(legal, key=lambda k: (k[1], -k[2], k[0]))
            most = max(legal, key=lambda k: (k[2], k[1], k[0]))
            least = max(legal, key=lambda k: (-k[2], k[1], k[0]))
            smart = max(legal, key=lambda k: (k[1] - SMART_DIE_COST * k[2], -k[2], k[1], k[0]))
            by_key[row.key] = {
                style: (list(counts_to_dice(k[0])), k[1], k[2])
                for style, k in (("best", best), ("all", most), ("min", least), ("smart", smart))
            }
        rolls = rolls_by_index()
        self.keys: tuple[list[int], ...] = ([],) + tuple(
            [counts_key(_counts(faces)) for faces in rolls[n]] for n in range(1, 7)
        )
        self.choice: dict[str, tuple[list, ...]] = {
            style: ([],) + tuple([by_key[k][style] for k in self.keys[n]] for n in range(1, 7)) for style in KEEP_STYLES
        }
        self.value = value  # counts key -> value when every die scores, else None
        self.farkle = table.farkle  # counts key -> True when the dice score nothing


def _counts(faces) -> tuple[int, ...]:
    c = [0] * 6
    for f in faces:
        c[f - 1] += 1
    return tuple(c)


@lru_cache(maxsize=16)
def dice_tables(rules: Ruleset) -> DiceTables:
    return DiceTables(rules)

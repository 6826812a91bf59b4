"""Score tables as dense integer arrays: what the kernel indexes instead of dict lookups.

`pipeline.rules.table.ScoreTable` answers by integer dice key (one decimal digit per face
count). Here every key is mapped once to a row number (0..922) through one dense array
shared by all rulesets, and each ruleset gets one row of `value`, `value_ok`, `best` and
`farkle` per key: the kernel's lookups become two array reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.replay.fast.kernel import RP_COLUMNS, RP_KNOBS, RP_USABLE
from pipeline.rules.play import rounds_knob, target_knob
from pipeline.rules import Ruleset
from pipeline.rules.play import FACE_WEIGHTS, MAX_KEY
from pipeline.rules.table import score_table

_FACE_WEIGHTS = np.array(FACE_WEIGHTS, np.int64)
VALUE_LIMIT = 2**31  # knob or table values beyond this: the reference replays (sums stay far from int64 overflow)


def _key_index() -> tuple[np.ndarray, list[int]]:
    keys = sorted(score_table(Ruleset.builtin("standard")).value)
    index = np.full(MAX_KEY + 1, -1, dtype=np.int32)
    index[np.array(keys)] = np.arange(len(keys), dtype=np.int32)
    return index, keys


KEY_INDEX, KEYS = _key_index()


def dice_keys(dice: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(dice key, number of dice) of each row of a list column of faces, 0 and 0 for a null:
    one cumulative sum of face weights over all the faces, differenced at the row ends."""
    ndice = pc.list_value_length(dice).fill_null(0).to_numpy().astype(np.int64)
    faces = pc.list_flatten(dice).to_numpy().astype(np.int64)
    weights = np.concatenate([[0], np.cumsum(_FACE_WEIGHTS[faces])])
    ends = np.cumsum(ndice)
    return weights[ends] - weights[ends - ndice], ndice


N_KEYS = len(KEYS)


@dataclass
class ScoreArrays:
    """All rulesets seen so far, one row each; `index(rules)` adds a ruleset on first use."""

    params: np.ndarray  # (rulesets, RP_COLUMNS) int64
    value: np.ndarray  # (rulesets, N_KEYS) int64: all dice must score (valid where value_ok)
    value_ok: np.ndarray  # (rulesets, N_KEYS) int8
    best: np.ndarray  # (rulesets, N_KEYS) int64: best keep of the dice taken as a roll
    farkle: np.ndarray  # (rulesets, N_KEYS) int8: the roll scores nothing
    rulesets: list[Ruleset]

    @classmethod
    def empty(cls) -> "ScoreArrays":
        return cls(
            np.zeros((0, RP_COLUMNS), np.int64),
            np.zeros((0, N_KEYS), np.int64),
            np.zeros((0, N_KEYS), np.int8),
            np.zeros((0, N_KEYS), np.int64),
            np.zeros((0, N_KEYS), np.int8),
            [],
        )

    def __post_init__(self) -> None:
        self._rows: dict[Ruleset, int] = {r: i for i, r in enumerate(self.rulesets)}

    def index(self, rules: Ruleset) -> int:
        row = self._rows.get(rules)
        if row is not None:
            return row
        params, value, value_ok, best, farkle = _ruleset_rows(rules)
        self.params = np.vstack([self.params, params[None, :]])
        self.value = np.vstack([self.value, value[None, :]])
        self.value_ok = np.vstack([self.value_ok, value_ok[None, :]])
        self.best = np.vstack([self.best, best[None, :]])
        self.farkle = np.vstack([self.farkle, farkle[None, :]])
        self.rulesets.append(rules)
        row = self._rows[rules] = len(self.rulesets) - 1
        return row


def _ruleset_rows(rules: Ruleset):
    table = score_table(rules)
    value = np.zeros(N_KEYS, np.int64)
    value_ok = np.zeros(N_KEYS, np.int8)
    best = np.zeros(N_KEYS, np.int64)
    farkle = np.zeros(N_KEYS, np.int8)
    usable = True
    for i, key in enumerate(KEYS):
        v = table.value[key]
        b = table.best[key]
        if abs(b) >= VALUE_LIMIT or (v is not None and abs(v) >= VALUE_LIMIT):
            usable = False
            continue
        if v is not None:
            value[i], value_ok[i] = v, 1
        best[i] = b
        farkle[i] = 1 if table.farkle[key] else 0
    params = np.zeros(RP_COLUMNS, np.int64)
    knobs = {column: _knob(rules, knob) for column, knob in RP_KNOBS.items()}
    if any(k is None or abs(k) >= VALUE_LIMIT for k in knobs.values()):
        usable = False  # the row stays zeros: the kernel never replays under it
    else:
        for column, k in knobs.items():
            params[column] = int(k)  # type: ignore[arg-type]  # not None here
    params[RP_USABLE] = 1 if usable else 0
    return params, value, value_ok, best, farkle


def _knob(rules: Ruleset, knob: str) -> int | None:
    """A knob of play as the kernel's column holds it (`target` and `rounds` as play.py
    takes them, never None)."""
    if knob == "target":
        return target_knob(rules.target)
    if knob == "rounds":
        return rounds_knob(rules.rounds)
    return getattr(rules, knob)

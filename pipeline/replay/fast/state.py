"""The fast path's state between batches: game slots, player names, seats, rulesets.

Strings never reach the kernel: game ids and player names become integer ids here (a
batch's distinct values are mapped through a dict, the rows by one numpy take), and a
game's first `game_start` configures its row (players as name ids, ruleset row, start
order) before the kernel meets it. Memory: one row of GAME_COLUMNS int64 per game and
one of PLAYER_COLUMNS per seat, plus the id dicts; nothing per event.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from pipeline.replay.fast.kernel import (
    G_CONFIGURED,
    G_NPL,
    G_ORDER,
    G_POFF,
    G_RULES,
    G_STATUS,
    GAME_COLUMNS,
    P_NAME,
    PLAYER_COLUMNS,
    STARTED,
)
from pipeline.replay.fast.scoring import ScoreArrays
from pipeline.rules import Ruleset


def _grow(array: np.ndarray, rows: int) -> np.ndarray:
    if rows <= array.shape[0]:
        return array
    bigger = np.zeros((max(rows, 2 * array.shape[0]), array.shape[1]), array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


class FastState:
    def __init__(self) -> None:
        self.gs = np.zeros((1024, GAME_COLUMNS), np.int64)
        self.ps = np.zeros((4096, PLAYER_COLUMNS), np.int64)
        self.n_seats = 0
        self.slot_of: dict[str, int] = {}
        self.game_ids: list[str] = []
        self.name_of: dict[str, int] = {}
        self.players: list[tuple[str, ...] | None] = []  # per slot, from its first game_start
        self.rules: list[Ruleset | None] = []
        self.scores = ScoreArrays.empty()
        self.last_slots = np.zeros(0, np.int64)

    # ---- ids -------------------------------------------------------------------------------
    def slots(self, game_ids: pa.Array) -> np.ndarray:
        """Slot of each game id (new ids get new slots, in order of first appearance)."""
        encoded = (
            pa.chunked_array([game_ids]).combine_chunks().dictionary_encode()
            if not isinstance(game_ids, pa.DictionaryArray)
            else game_ids
        )
        mapping = np.fromiter(map(self._slot, encoded.dictionary.to_pylist()), np.int64, len(encoded.dictionary))
        self.last_slots = mapping  # the distinct slots of this call's ids (audit records them per block)
        return mapping[encoded.indices.to_numpy(zero_copy_only=False)]

    def _slot(self, game_id: str) -> int:
        slot = self.slot_of.get(game_id)
        if slot is None:
            slot = self.slot_of[game_id] = len(self.game_ids)
            self.game_ids.append(game_id)
            self.players.append(None)
            self.rules.append(None)
            self.gs = _grow(self.gs, slot + 1)
        return slot

    def names(self, players: pa.Array) -> np.ndarray:
        """Name id of each player (nulls: -1, which matches no seat)."""
        encoded = pa.chunked_array([players]).combine_chunks().dictionary_encode()
        mapping = np.fromiter(map(self._name, encoded.dictionary.to_pylist()), np.int64, len(encoded.dictionary))
        indices = encoded.indices
        out = (
            mapping[indices.fill_null(0).to_numpy(zero_copy_only=False)]
            if len(mapping)
            else np.full(len(indices), -1, np.int64)
        )
        if indices.null_count:
            out[np.asarray(indices.is_null())] = -1
        return out

    def _name(self, name: str) -> int:
        found = self.name_of.get(name)
        if found is None:
            found = self.name_of[name] = len(self.name_of)
        return found

    # ---- games -------------------------------------------------------------------------------
    def configure(self, slot: int, players: Sequence[str], rules: Ruleset, position: int) -> None:
        """A game's first game_start (at input `position`): seats, ruleset, start order."""
        if self.gs[slot, G_CONFIGURED]:
            return
        players = tuple(players)
        self.players[slot] = players
        self.rules[slot] = rules
        self.ps = _grow(self.ps, self.n_seats + len(players))
        for seat, name in enumerate(players):
            self.ps[self.n_seats + seat, P_NAME] = self._name(name)
        row = self.gs[slot]
        row[G_CONFIGURED] = 1
        row[G_RULES] = self.scores.index(rules)
        row[G_POFF] = self.n_seats
        row[G_NPL] = len(players)
        row[G_ORDER] = position
        self.n_seats += len(players)

    @property
    def n_games(self) -> int:
        return len(self.game_ids)

    def started(self) -> np.ndarray:
        return self.gs[: self.n_games, G_STATUS] == STARTED

"""Drive the kernel over batches of integer columns; decide, per game, fast or reference.

A game is replayed here to the end only if the reference engine would give it no finding
at all: it started with a valid `game_start` at seq 1, every event was in order and
correct, it ended with a `game_end` whose scores and winner match, and no turn was left
open. Everything else is `suspect()` and belongs to the reference engine, whole. The
game_end's scores and winner names are compared here (the kernel holds no strings); the
game's result is built by the reference engine's own `game_result`, so the two paths cannot
disagree about how a result reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from pipeline.model import Code, GameResult
from pipeline.replay.engine import Replayer, normalise_winner, winners
from pipeline.replay.fast import compiled, kernel
from pipeline.replay.fast.kernel import (
    DECISION_COLUMNS,
    G_END_POS,
    G_CODE,
    G_ENDED,
    G_EVENTS,
    G_LAST_SEQ,
    G_NPL,
    G_ORDER,
    G_POFF,
    G_STATUS,
    P_CLAIMED,
    P_CORR,
    ROLL_COLUMNS,
    STARTED,
    SUSPECT,
    T_OPEN,
    TURN_COLUMNS,
)
from pipeline.replay.fast.state import FastState
from pipeline.replay.state import GameState
from pipeline.rules import Ruleset

CODES_BY_ID = {code.id: code for code in Code}


@dataclass
class EventColumns:
    """One batch of events as the kernel reads them, in input order (positions base + i)."""

    slot: np.ndarray  # int64 game slot
    code: np.ndarray  # int64 type code (kernel.TYPE_CODES)
    seq: np.ndarray  # int64
    name: np.ndarray  # int64 player name id, -1 for none
    key: np.ndarray  # int64 dice key (0: no dice)
    ndice: np.ndarray  # int64
    points: np.ndarray  # int64 (0 where absent)
    total: np.ndarray  # int64 (0 where absent)
    has_total: np.ndarray  # int64 0/1
    running: np.ndarray  # int64 0/1: a keep whose `points` is its turn_points (the running total)
    abandoned: np.ndarray  # int64 0/1: a game_end with reason "abandoned"
    base: int = 0
    # (position, slot, players, ruleset) of each game_start, in input order
    starts: list[tuple[int, int, tuple[str, ...], Ruleset]] = field(default_factory=list)
    # (position, slot, winner, scores, reason) of each game_end, in input order
    ends: list[tuple[int, int, Any, dict[str, int] | None, str | None]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.slot)

    def reorder(self, order: np.ndarray) -> None:
        """Every per-event column taken in `order` (the starts and ends are the caller's):
        found by type, so a column added to the batch cannot be left in the old order."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                setattr(self, f.name, value[order])


@dataclass
class RowBlocks:
    """Kernel output rows of one batch (int64 matrices, columns as in kernel.RO_/DE_/TU_)."""

    rolls: np.ndarray
    decisions: np.ndarray
    turns: np.ndarray


class FastReplay:
    def __init__(self, default_rules: Ruleset | None = None, *, records: bool = True, jit: bool = True):
        self.default_rules = default_rules or Ruleset.builtin("standard")
        self.records = records
        self.state = FastState()
        self._kernel = compiled.replay_events() if jit else kernel.replay_events
        # slot -> game_end winner, scores, reason
        self._ends: dict[int, tuple[Any, dict[str, int] | None, str | None]] = {}
        self._result_maker = Replayer(self.default_rules, records=False)

    def feed(self, cols: EventColumns) -> RowBlocks | None:
        st = self.state
        for pos, slot, players, rules in cols.starts:
            st.configure(slot, players, rules, pos)
        n = len(cols)
        rows = n if self.records else 0
        out = RowBlocks(
            np.zeros((rows, ROLL_COLUMNS), np.int64),
            np.zeros((rows, DECISION_COLUMNS), np.int64),
            np.zeros((rows, TURN_COLUMNS), np.int64),
        )
        counts = np.zeros(3, np.int64)
        s = st.scores
        from pipeline.replay.fast.scoring import KEY_INDEX

        self._kernel(
            cols.slot,
            cols.code,
            cols.seq,
            cols.name,
            cols.key,
            cols.ndice,
            cols.points,
            cols.total,
            cols.has_total,
            cols.running,
            cols.abandoned,
            cols.base,
            st.gs,
            st.ps,
            KEY_INDEX,
            s.params,
            s.value,
            s.value_ok,
            s.best,
            s.farkle,
            self.records,
            out.rolls,
            out.decisions,
            out.turns,
            counts,
        )
        for pos, slot, winner, scores, reason in cols.ends:
            self._check_end(pos, slot, winner, scores, reason)
        if not self.records:
            return None
        return RowBlocks(out.rolls[: counts[0]], out.decisions[: counts[1]], out.turns[: counts[2]])

    def _check_end(
        self, pos: int, slot: int, winner: Any, scores: dict[str, int] | None, reason: str | None = None
    ) -> None:
        """final_score_mismatch and the winner's names: the part of game_end the kernel cannot
        see. A game_end the kernel found early (wrong_winner) may still have a score that
        differs, which comes first in its row. An abandoned game may give no scores and name
        no winner."""
        gs = self.state.gs
        if gs[slot, G_END_POS] != pos:
            return
        early = gs[slot, G_STATUS] == SUSPECT and gs[slot, G_CODE] == kernel.C_WRONG_WINNER
        if gs[slot, G_STATUS] != STARTED and not early:
            return
        claimed = self._totals(slot, P_CLAIMED)
        abandoned = reason == "abandoned"
        players = self._seats(slot)
        if (scores is not None or not abandoned) and any((scores or {}).get(p) != claimed[p] for p in players):
            self._give_up(slot, Code.FINAL_SCORE_MISMATCH.id)
        elif (
            not early
            and (winner is not None or not abandoned)
            and normalise_winner(winner) != set(winners(claimed, players))
        ):
            self._give_up(slot, Code.WRONG_WINNER.id)
        elif not early:
            self._ends[slot] = (winner, scores, reason)

    def _give_up(self, slot: int, why: int) -> None:
        self.state.gs[slot, G_STATUS] = SUSPECT
        self.state.gs[slot, G_CODE] = why

    def suspect(self, slot: int) -> None:
        """The caller cannot let the kernel finish this game (it crosses a range, say)."""
        if self.state.gs[slot, G_STATUS] != SUSPECT:
            self._give_up(slot, kernel.BEYOND)

    def first_code(self, slot: int) -> Code | None:
        """At end of input: the finding the reference will give this game first, as far as
        the fast path can tell (a cross_roll_meld reads as scoring_error or bank_mismatch);
        None for a clean game or one the kernel only could not replay."""
        gs = self.state.gs
        if gs[slot, G_STATUS] == SUSPECT:
            why = int(gs[slot, G_CODE])
            return None if why == kernel.BEYOND else CODES_BY_ID[why]
        if gs[slot, G_STATUS] != STARTED:
            return Code.UNKNOWN_GAME  # events, but no game_start
        if gs[slot, T_OPEN] != 0:
            return Code.MISSING_TURN_END
        if gs[slot, G_ENDED] == 0:
            return Code.GAME_INCOMPLETE
        return None

    def clean(self) -> np.ndarray:
        """Per slot, at end of input: True where the fast path's replay is the game's whole story."""
        gs = self.state.gs[: self.state.n_games]
        return (gs[:, G_STATUS] == STARTED) & (gs[:, G_ENDED] == 1) & (gs[:, T_OPEN] == 0)

    def order(self, slot: int) -> int:
        """Position of the game's first game_start: the reference engine lists results in this order."""
        return int(self.state.gs[slot, G_ORDER])

    def _seats(self, slot: int) -> tuple[str, ...]:
        """The players of a game that has started (its game_start gave the slot them)."""
        players = self.state.players[slot]
        assert players is not None
        return players

    def _totals(self, slot: int, column: int) -> dict[str, int]:
        st = self.state
        poff = int(st.gs[slot, G_POFF])
        players = self._seats(slot)
        # one slice to a list: far cheaper than a numpy scalar read per seat
        return dict(zip(players, st.ps[poff : poff + len(players), column].tolist()))

    def result(self, slot: int, first_ts: Any = None, last_ts: Any = None) -> GameResult:
        """The GameResult of a clean game, built by the reference engine's own code."""
        st = self.state
        players = self._seats(slot)
        rules = st.rules[slot]
        assert rules is not None
        g = GameState(
            game_id=st.game_ids[slot],
            players=players,
            rules=rules,
            table=None,  # type: ignore[arg-type]
            order=self.order(slot),
            last_seq=int(st.gs[slot, G_LAST_SEQ]),
            last_event=None,
            first_ts=first_ts,
            last_ts=last_ts,
            events=int(st.gs[slot, G_EVENTS]),
        )
        assert int(st.gs[slot, G_NPL]) == len(players)
        g.claimed_total = self._totals(slot, P_CLAIMED)
        g.corrected_total = self._totals(slot, P_CORR)
        g.ended = True
        g.end_winner, scores, g.end_reason = self._ends[slot]
        g.end_scores = None if scores is None else dict(scores)
        return self._result_maker.game_result(g)

"""The replay engine: every event checked against the rules, in log order, no I/O.

One engine serves audit, ingest and the simulator's self-check. It follows
log-format.md to the letter: each event gets at most one finding (the first code of its
row that applies), and replay goes on from the claimed event, so a mistake is reported
once and later, independent mistakes are still found. Findings are collected, never
raised (python-chess's lesson): a bad game never stops the others.

Usage: `r = Replayer(default_rules); r.feed(item)` for each Event/BadLine in input order,
`r.finish()` at end of input, and `r.drain()` whenever the caller wants what has been
produced so far (findings, turns, rolls, decisions, and at finish the game results).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from pipeline.model import (
    BadLine,
    Code,
    as_code,
    DecisionRecord,
    Event,
    Finding,
    GameResult,
    RollRecord,
    TurnRecord,
)
from pipeline.replay.melds import KeptDice, bank_meld, keep_meld
from pipeline.replay.state import KEPT, NO_ROLL, ROLLED, GameSpill, GameState, StateCodec, TraceStep, TurnState
from pipeline.rules import Ruleset
from pipeline.rules.play import (
    BELOW_MINIMUM,
    BELOW_OPENING,
    NOBODY,
    bank_scores,
    bank_shortfall,
    counts_key,
    dice_key,
    dice_to_roll,
    farkle_cost,
    final_round_step,
    game_over,
    hot_dice,
    opened_after_bank,
    reveals_lost_end,
    rounds_knob,
    running_claim,
    target_knob,
    streak_after_bank,
    streak_after_farkle,
)
from pipeline.rules.scoring import best_keep_counts, best_split_counts, counts_to_dice
from pipeline.rules.table import score_table, sub_keys


def _show(dice: Iterable[int] | None) -> str:
    return "[" + ",".join(map(str, dice or ())) + "]"


def _plain(dice: Iterable[int]) -> str:
    return ",".join(map(str, dice))


_FACES = (1, 2, 3, 4, 5, 6)


def _counts(dice) -> tuple[int, int, int, int, int, int]:
    return tuple(map(dice.count, _FACES))


def _corrected(table, key: int) -> int:
    """corrected_keep_value of up to six dice, by table lookup."""
    value = table.value[key]
    return table.best[key] if value is None else value


def winner_names(winner: object) -> list[str] | None:
    """game_end's winner as a list of names ("ana" and ["ana"] are the same), in its order."""
    if winner is None:
        return None
    if isinstance(winner, str):
        return [winner]
    return list(winner)  # type: ignore[call-overload]


def winners(totals: dict[str, int], players: tuple[str, ...]) -> list[str]:
    if not totals:
        return []
    best = max(totals.values())
    return [p for p in players if totals.get(p) == best]


def normalise_winner(winner: object) -> set[str]:
    if isinstance(winner, str):
        return {winner}
    if isinstance(winner, (list, tuple)):
        return set(winner)
    return set()


@dataclass
class ReplayOutput:
    findings: list[Finding] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    rolls: list[RollRecord] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)
    games: list[GameResult] = field(default_factory=list)
    timelines: dict[str, list[list[TraceStep]]] = field(default_factory=dict)


class _Verdict:
    """The first applicable code of an event's row; later candidates are ignored."""

    __slots__ = ("code", "message", "claimed", "expected", "player")

    def __init__(self) -> None:
        self.code: Code | None = None

    def flag(self, code: Code, message: str, claimed=None, expected=None, player=None) -> None:
        if self.code is None:
            self.code, self.message, self.claimed, self.expected, self.player = (
                code,
                message,
                claimed,
                expected,
                player,
            )


class Replayer:
    """`spill`: where games go once more than `max_games` are held (the audit passes one on
    disk, so a log of millions of games replays in bounded memory): games that ended first,
    then those started longest ago, half of them at a time; a game is read back when a line
    of it comes. Without a spill every game stays in memory."""

    def __init__(
        self,
        default_rules: Ruleset | None = None,
        *,
        trace: bool = False,
        records: bool = True,
        spill: GameSpill | None = None,
        max_games: int = 50_000,
    ):
        self.default_rules = default_rules or Ruleset.builtin("standard")
        self.trace = trace  # keep a timeline of turns with findings (audit's text output)
        self.records = records  # produce turn/roll/decision records (ingest's tables)
        self.games: dict[str, GameState] = {}  # the games held in memory (all of them without a spill)
        # game_id -> (file, line, reason) of a rejected game_start of a game not started yet,
        # told in that game's first unknown_game message; then the seq of that message
        self._rejected_starts: dict[str, tuple[str, int, str] | int] = {}
        self.out = ReplayOutput()
        self._finished = False
        self._handlers = {"roll": self._roll, "keep": self._keep, "bank": self._bank, "farkle": self._farkle}
        self._started = 0  # games started: the next one's order
        self._spill = spill
        self._spilled = 0  # games in the spill
        self._max_games = max_games
        self._codec = StateCodec() if spill is not None else None

    # ------------------------------------------------------------------ public API
    def feed(self, item: Event | BadLine) -> None:
        if isinstance(item, BadLine):
            self._bad_line(item)
        else:
            self._event(item)

    def feed_all(self, items: Iterable[Event | BadLine]) -> "Replayer":
        for item in items:
            self.feed(item)
        return self

    def drain(self) -> ReplayOutput:
        out, self.out = self.out, ReplayOutput()
        return out

    def finish(self) -> None:
        """End of input: open turns, games without game_end, and every game's result."""
        for _ in self.finish_steps():
            pass

    def finish_steps(self, every: int = 1_000) -> Iterator[None]:
        """`finish`, pausing after every `every` games, so that the caller can `drain` what
        they gave (a log of millions of games gives millions of results)."""
        if self._finished:
            return
        self._finished = True
        held = sorted(self.games.values(), key=lambda g: g.order)
        games = self._merged_with_spill(held) if self._spilled else held
        for n, g in enumerate(games, start=1):
            self._finish_game(g)
            if not n % every:
                yield

    def _merged_with_spill(self, held: list[GameState]) -> Iterator[GameState]:
        """The games held and the spilled ones (read back one at a time), in order."""
        assert self._spill is not None and self._codec is not None
        loads = self._codec.loads
        pairs: Iterator[tuple[int, GameState | bytes]] = heapq.merge(
            ((g.order, g) for g in held), self._spill.take_in_order(), key=lambda pair: pair[0]
        )
        for _, g in pairs:
            yield loads(g) if isinstance(g, bytes) else g
        self._spilled = 0

    def _finish_game(self, g: GameState) -> None:
        """One game at the end of input: its open turn, a missing game_end, its result."""
        last = g.last_event
        seq, file, line = last.seq, last.file, last.line
        t = g.turn
        if t is not None:
            self._finding(
                g,
                seq,
                file,
                line,
                t.player,
                Code.MISSING_TURN_END,
                f"seq {seq}: the log ends inside {t.player}'s turn {t.turn} (from seq "
                f"{t.start_seq}): no bank or farkle ended it",
                ts=last.ts,
            )
            t.flagged = True
            self._close_turn(g, t, outcome="open", end_seq=None)
        if not g.ended:
            self._finding(
                g,
                seq,
                file,
                line,
                None,
                Code.GAME_INCOMPLETE,
                f"seq {seq}: the log of game {g.game_id} ends here, without a game_end",
                ts=last.ts,
            )
        self.out.games.append(self.game_result(g))
        if self.trace and g.timeline:
            self.out.timelines[g.game_id] = g.timeline

    # ------------------------------------------------------------------ games out of memory
    def _game(self, game_id: str) -> GameState | None:
        """The game's state, read back from the spill if it went there."""
        g = self.games.get(game_id)
        if g is None and self._spilled:
            data = self._spill.take(game_id)  # type: ignore[union-attr]
            if data is not None:
                self._spilled -= 1
                g = self.games[game_id] = self._codec.loads(data)  # type: ignore[union-attr]
                self._make_room(game_id)
        return g

    def _make_room(self, using: str) -> None:
        """Past max_games in memory, spill half of them: ended games first, then by age;
        never the game `using` (the line being replayed is its)."""
        if self._spill is None or len(self.games) <= self._max_games:
            return
        keep = self._max_games // 2
        others = (g for g in self.games.values() if g.game_id != using)
        leaving = sorted(others, key=lambda g: (not g.ended, g.order))[: len(self.games) - keep]
        dumps = self._codec.dumps  # type: ignore[union-attr]
        for g in leaving:
            self._spill.put(g.game_id, g.order, dumps(g))
            del self.games[g.game_id]
        self._spilled += len(leaving)

    # ------------------------------------------------------------------ findings
    def _finding(
        self, g: GameState | None, seq, file, line, player, code: Code, message, claimed=None, expected=None, ts=None
    ):
        if g is not None:
            g.findings += 1
        self.out.findings.append(
            Finding(
                game_id=g.game_id if g is not None else None,
                seq=seq,
                file=file,
                line=line,
                player=player,
                code=code.value,
                severity=code.severity,
                message=message,
                claimed=claimed,
                expected=expected,
                ts=ts,
            )
        )

    def _bad_line(self, bad: BadLine) -> None:
        code = as_code(bad.code)
        self.out.findings.append(
            Finding(
                game_id=bad.game_id,
                seq=bad.seq,
                file=bad.file,
                line=bad.line,
                player=bad.player,
                code=code.value,
                severity=code.severity,
                message=f"line {bad.line}: {bad.reason}",
            )
        )
        g = self._game(bad.game_id) if bad.game_id is not None else None
        if g is not None:
            g.findings += 1
        elif bad.type == "game_start" and bad.game_id is not None and bad.game_id not in self._rejected_starts:
            self._rejected_starts[bad.game_id] = (bad.file, bad.line, bad.reason)

    def note_rejected_start(self, game_id: str, file: str, line: int, reason: str) -> None:
        """A game_start of `game_id` was rejected (a bad line the caller does not feed):
        its game's first unknown_game message says so."""
        if game_id not in self.games and game_id not in self._rejected_starts:
            self._rejected_starts[game_id] = (file, line, reason)

    def _unknown_game_message(self, ev: Event) -> str:
        head = f"seq {ev.seq}: this {ev.type} belongs to game {ev.game_id}"
        if ev.game_id not in self._rejected_starts:
            return f"{head}, which has no game_start before it"
        rejected = self._rejected_starts[ev.game_id]
        if isinstance(rejected, int):  # said in the game's first unknown_game
            return f"{head}, whose game_start was rejected (see seq {rejected})"
        self._rejected_starts[ev.game_id] = ev.seq
        file, line, reason = rejected
        return f"{head}, whose game_start at {file}:{line} was rejected: {reason}"

    # ------------------------------------------------------------------ events
    def _event(self, ev: Event) -> None:
        g = self.games.get(ev.game_id)
        if g is None and self._spilled:
            g = self._game(ev.game_id)
        if g is None:
            if ev.type == "game_start":
                self._start(ev)
            else:
                self.out.findings.append(
                    Finding(
                        ev.game_id,
                        ev.seq,
                        ev.file,
                        ev.line,
                        ev.player,
                        Code.UNKNOWN_GAME.value,
                        Code.UNKNOWN_GAME.severity,
                        self._unknown_game_message(ev),
                        ts=ev.ts,
                    )
                )
            return
        g.last_event = ev
        g.events += 1
        if ev.ts is not None:
            g.first_ts = g.first_ts or ev.ts
            g.last_ts = ev.ts
        v = _Verdict()
        expected_seq = g.last_seq + 1
        if ev.seq < expected_seq:
            what = (
                "repeats the seq of the event before it"
                if ev.seq == g.last_seq
                else (f"goes back from seq {g.last_seq}")
            )
            self._emit(
                g, ev, Code.SEQ_ERROR, f"seq {ev.seq} {what}: this {ev.type} is not replayed", ev.seq, expected_seq
            )
            return
        if ev.seq > expected_seq:
            v.flag(Code.SEQ_ERROR, _gap_message(ev.seq, expected_seq), ev.seq, expected_seq)
        if ev.type == "game_start":  # like a bad line, it uses up no seq
            v.flag(
                Code.SEQ_ERROR,
                f"seq {ev.seq}: game {g.game_id} has already started; this second game_start is not "
                f"replayed and uses up no seq (the next event is due at seq {expected_seq})",
                ev.seq,
                expected_seq,
            )
            self._emit_verdict(g, ev, v)
            return
        g.last_seq = ev.seq
        if g.ended or (g.over and ev.type != "game_end"):
            why = "after the game_end" if g.ended else "after the final round was played out"
            v.flag(Code.PLAY_AFTER_GAME_OVER, f"seq {ev.seq}: a {ev.type} {why}; it is not replayed")
            self._emit_verdict(g, ev, v)
            return
        if ev.type == "game_end":
            self._game_end(g, ev, v)
        else:
            self._turn_event(g, ev, v)

    def _emit(self, g, ev, code, message, claimed=None, expected=None, player=None):
        self._finding(
            g,
            ev.seq,
            ev.file,
            ev.line,
            player if player is not None else ev.player,
            code,
            message,
            claimed,
            expected,
            ev.ts,
        )

    def _emit_verdict(self, g: GameState, ev: Event, v: _Verdict) -> None:
        if v.code is not None:
            self._emit(g, ev, v.code, v.message, v.claimed, v.expected, v.player)
            if g.turn is not None:
                g.turn.flagged = True
                if self.trace and g.turn.trace:
                    g.turn.trace[-1].code = v.code.value

    def _start(self, ev: Event) -> None:
        rules = ev.rules if ev.rules is not None else self.default_rules
        players = tuple(ev.players or ())
        g = GameState(
            game_id=ev.game_id,
            players=players,
            rules=rules,
            table=score_table(rules),
            order=self._started,
            last_seq=ev.seq,
            last_event=ev,
            first_ts=ev.ts,
            last_ts=ev.ts,
            events=1,
            final_owed=[0] * len(players),
            target=target_knob(rules.target),
            rounds=rounds_knob(rules.rounds),
        )
        for p in players:
            g.turns_played[p] = 0
            g.claimed_total[p] = 0
            g.corrected_total[p] = 0
            g.opened[p] = False
            g.opened_corrected[p] = False
            g.streak[p] = 0
            g.streak_corrected[p] = 0
        self.games[ev.game_id] = g
        self._rejected_starts.pop(ev.game_id, None)
        self._started += 1
        self._make_room(ev.game_id)
        if ev.seq != 1:
            self._emit(
                g,
                ev,
                Code.SEQ_ERROR,
                f"seq {ev.seq}: the game_start has seq {ev.seq}, but a game starts at seq 1",
                ev.seq,
                1,
            )

    # ------------------------------------------------------------------ turns
    def _open_turn(self, g: GameState, player: str, ev: Event) -> TurnState:
        g.turns_played[player] = g.turns_played.get(player, 0) + 1
        t = TurnState(
            player=player,
            turn=g.turns_played[player],
            start_seq=ev.seq,
            ts=ev.ts,
            banked_before=g.claimed_total.get(player, 0),
            opened_before=g.opened.get(player, False),
            start_total=g.corrected_total.get(player, 0),
            other_start_total=_other_total(g, player),
        )
        g.turn = t
        return t

    def _turn_event(self, g: GameState, ev: Event, v: _Verdict) -> None:
        named = ev.player
        t = g.turn
        lost: TurnState | None = None
        if t is not None and named != t.player and _reveals_lost_end(g, t, ev):
            lost, t = t, None
            self._supply_lost_end(g, lost, ev)
            if g.over:  # the implied end finished the final round: this roll comes after it
                v.flag(
                    Code.PLAY_AFTER_GAME_OVER,
                    f"seq {ev.seq}: {named} rolls after the final round was "
                    f"played out (the end of {lost.player}'s turn, lost from the log, was its last "
                    "turn); it is not replayed",
                )
                self._emit_verdict(g, ev, v)
                return
        if t is None:
            due = g.players[g.next_player] if g.players else named
            if named not in g.claimed_total:
                v.flag(
                    Code.WRONG_PLAYER,
                    f"seq {ev.seq}: {named!r} is not a player of this game "
                    f"(players: {', '.join(g.players)}); the {ev.type} is taken as {due}'s, "
                    "whose turn it is",
                )
                owner = due
            elif named != due:
                v.flag(Code.WRONG_PLAYER, f"seq {ev.seq}: {named} {ev.type}s but it is {due}'s turn")
                owner = named if ev.type == "roll" else due
            else:
                owner = named
            if lost is not None:
                v.flag(Code.MISSING_TURN_END, _lost_end_message(ev, lost), player=lost.player)
            assert owner is not None  # the reader requires a player on every turn event
            t = self._open_turn(g, owner, ev)
        elif named != t.player:
            if named not in g.claimed_total:
                who = f"{named!r}, not a player of this game (players: {', '.join(g.players)}),"
            else:
                who = named
            v.flag(
                Code.WRONG_PLAYER,
                f"seq {ev.seq}: {who} logged a {ev.type} inside {t.player}'s open turn "
                f"(from seq {t.start_seq}); it is taken as {t.player}'s {ev.type}",
            )
        self._handlers[ev.type](g, t, ev, v)

    def _supply_lost_end(self, g: GameState, t: TurnState, ev: Event) -> None:
        """End the open turn as the log implies (log-format.md, "a lost turn end"), with no
        finding of its own: after a keep, a bank of the turn's claimed keeps; after a roll
        that scored nothing, a farkle. The revealing roll carries the finding."""
        t.flagged = True  # the audit timeline shows the turn whose end was lost
        if t.phase == KEPT:
            claimed = t.claimed_sum
            total = g.claimed_total[t.player] + claimed
            corrected = self._apply_bank(g, t, total)
            if self.trace:
                t.trace.append(TraceStep(ev.seq, t.player, "bank (implied)", None, claimed, corrected, total))
            self._close_turn(g, t, outcome="bank", end_seq=ev.seq, claimed=claimed, corrected=corrected, implied=True)
        else:
            penalty = farkle_cost(g.streak[t.player], g.rules.farkle_penalty, g.rules.penalty_after)
            self._apply_farkle(g, t, g.claimed_total[t.player] - penalty)
            if self.trace:
                t.trace.append(TraceStep(ev.seq, t.player, "farkle (implied)", None, 0, 0, g.claimed_total[t.player]))
            self._close_turn(g, t, outcome="farkle", end_seq=ev.seq, claimed=0, corrected=0, implied=True)

    def _missed_farkle(self, t: TurnState, ev: Event, v: _Verdict) -> None:
        """Only the first event after a roll that scored nothing gets missed_farkle."""
        if t.awaiting_after_bust:
            t.awaiting_after_bust = False
            t.went_past_bust = True
            v.flag(
                Code.MISSED_FARKLE,
                f"seq {ev.seq}: the roll {_show(t.last_roll)} at seq {t.last_roll_seq} "
                f"scored nothing, so the turn ended there in a farkle, but it went on with a {ev.type}",
            )

    def _trace(self, t: TurnState, ev: Event, claimed=None, worth=None, total=None) -> None:
        t.trace.append(TraceStep(ev.seq, t.player, ev.type, ev.dice, claimed, worth, total))

    def _roll(self, g: GameState, t: TurnState, ev: Event, v: _Verdict) -> None:
        dice = ev.dice or ()
        if t.awaiting_after_bust:
            self._missed_farkle(t, ev, v)
        phase = t.phase
        if phase == ROLLED:
            v.flag(
                Code.MISSING_KEEP,
                f"seq {ev.seq}: {t.player} rolled again without keeping any dice from the "
                f"roll {_show(t.last_roll)} at seq {t.last_roll_seq}",
            )
        expected = dice_to_roll(len(t.last_roll or ()), t.kept_from_roll)
        if len(dice) != expected:
            v.flag(
                Code.WRONG_DICE_COUNT,
                f"seq {ev.seq}: {t.player} rolled {len(dice)} "
                f"{'die' if len(dice) == 1 else 'dice'} {_show(dice)}, but {expected} "
                f"{'was' if expected == 1 else 'were'} left to roll",
                len(dice),
                expected,
            )
        # apply
        key = dice_key(dice)
        table = g.table
        scored = not table.farkle[key]
        if t.decision_pending is not None:
            d = t.decision_pending
            d.choice, d.farkled = "roll", not scored
            _link_keep(d, t.roll_pending)
            self.out.decisions.append(d)
            t.decision_pending = None
        if t.roll_pending is not None:
            self.out.rolls.append(t.roll_pending)
            t.roll_pending = None
        t.rolls += 1
        t.phase = ROLLED
        t.last_roll, t.last_roll_key, t.last_roll_seq = dice, key, ev.seq
        t.last_roll_scored = scored
        t.kept_from_roll = 0
        t.really_kept = ()
        t.awaiting_after_bust = not scored
        if self.records:
            t.roll_pending = RollRecord(
                g.game_id,
                ev.seq,
                t.player,
                t.turn,
                t.rolls,
                dice,
                len(dice),
                scored,
                table.best[key],
                ts=ev.ts,
                points_before=t.corrected_sum,
                opened=t.opened_before,
                start_total=t.start_total,
                other_start_total=t.other_start_total,
                roll_key=key,
            )
        if self.trace:
            self._trace(t, ev, worth=table.best[key])
        if v.code is not None:
            self._emit_verdict(g, ev, v)

    def _keep(self, g: GameState, t: TurnState, ev: Event, v: _Verdict) -> None:
        dice = ev.dice or ()
        if ev.turn_points is not None:
            claimed = running_claim(ev.turn_points, t.claimed_sum)
        else:
            claimed = ev.points if ev.points is not None else 0
        table = g.table
        key = dice_key(dice)
        if t.awaiting_after_bust:
            self._missed_farkle(t, ev, v)
        phase = t.phase
        # built on first use: a fast audit of a clean log never gets here
        all_rolled = phase == ROLLED and key in sub_keys()[t.last_roll_key]
        if phase != ROLLED:
            if phase == NO_ROLL:
                v.flag(Code.KEPT_NOT_ROLLED, f"seq {ev.seq}: kept {_plain(dice)}, but nothing was rolled this turn")
            else:
                v.flag(
                    Code.KEPT_NOT_ROLLED,
                    f"seq {ev.seq}: kept {_plain(dice)}, but nothing was rolled since the "
                    f"keep at seq {t.keeps[-1].seq if t.keeps else '?'}",
                )
        elif not all_rolled:
            v.flag(
                Code.KEPT_NOT_ROLLED,
                f"seq {ev.seq}: kept {_plain(dice)} from the roll {_show(t.last_roll)}: "
                f"{_shortfall(_counts(dice), _counts(t.last_roll))}",
            )
        value = table.value[key]
        if value is None:
            v.flag(
                Code.NON_SCORING_KEPT,
                f"seq {ev.seq}: kept {_plain(dice)} and claimed {claimed}, but {_idle_dice(g, dice)}",
                claimed,
                None,
            )
        elif claimed != value and v.code is None:
            counts = _counts(dice)
            meld = keep_meld(counts, value, claimed, t.keeps, g.rules)
            if meld is not None:
                v.flag(Code.CROSS_ROLL_MELD, _keep_meld_message(ev, t, dice, claimed, value, meld), claimed, value)
            else:
                v.flag(
                    Code.SCORING_ERROR,
                    f"seq {ev.seq}: kept {_plain(dice)} from the roll {_show(t.last_roll)} "
                    f"and claimed {claimed}, but that keep is worth {value} ({_breakdown(g, counts)})",
                    claimed,
                    value,
                )
        # apply: the corrected value counts only dice really in the roll, not kept before
        if all_rolled:  # the common case: the first keep from the roll, every die in it
            worth = table.value[key]
            if worth is None:
                worth = table.best[key]
            t.really_kept = dice
        elif phase != NO_ROLL and t.last_roll is not None:
            roll_counts = _counts(t.last_roll)
            already = _counts(t.really_kept)
            counts = _counts(dice)
            really = [max(0, min(counts[i], roll_counts[i] - already[i])) for i in range(6)]
            t.really_kept = tuple(t.really_kept) + counts_to_dice(really)
            worth = _corrected(table, counts_key(really)) if any(really) else 0
        else:
            worth = 0
        meld_value = value if value is not None else _corrected(table, key)
        t.keeps.append(KeptDice(ev.seq, dice, key, claimed, meld_value, t.rolls))
        t.claimed_sum += claimed
        t.corrected_sum += worth
        if phase == ROLLED and t.roll_pending is not None:
            r = t.roll_pending
            r.kept, r.kept_claimed, r.kept_value, r.kept_key = dice, claimed, worth, key
            r.kept_turn_points = ev.turn_points
        t.kept_from_roll += len(dice)
        rolled = len(t.last_roll or ())
        left = dice_to_roll(rolled, t.kept_from_roll)
        if phase == ROLLED and hot_dice(rolled, t.kept_from_roll):
            t.hot_dice += 1
        t.phase = KEPT
        if self.records:
            opp = 0
            for p, tot in g.claimed_total.items():
                if p != t.player and tot > opp:
                    opp = tot
            t.decision_pending = DecisionRecord(
                g.game_id,
                ev.seq,
                t.player,
                t.turn,
                left,
                t.claimed_sum,
                t.banked_before,
                opp,
                t.opened_before,
                "",
                ts=ev.ts,
                turn_points_corrected=t.corrected_sum,
                start_total=t.start_total,
                other_start_total=t.other_start_total,
            )
        if self.trace:
            self._trace(t, ev, claimed=claimed, worth=worth)
        if v.code is not None:
            self._emit_verdict(g, ev, v)

    def _bank(self, g: GameState, t: TurnState, ev: Event, v: _Verdict) -> None:
        rules = g.rules
        claimed = ev.points if ev.points is not None else 0
        if t.awaiting_after_bust:
            self._missed_farkle(t, ev, v)
        if t.phase != KEPT:
            if t.phase == NO_ROLL:
                v.flag(
                    Code.MISSING_KEEP,
                    f"seq {ev.seq}: {t.player} banked {claimed} with nothing rolled or kept this turn",
                )
            else:
                v.flag(
                    Code.MISSING_KEEP,
                    f"seq {ev.seq}: {t.player} banked {claimed} without keeping any dice "
                    f"from the roll {_show(t.last_roll)} at seq {t.last_roll_seq}",
                )
        if claimed != t.claimed_sum:
            meld = bank_meld(claimed, t.keeps, rules)
            if meld is not None:
                parts = " and ".join(f"{_plain(k.dice)} (kept at seq {k.seq})" for k in meld.keeps)
                v.flag(
                    Code.CROSS_ROLL_MELD,
                    f"seq {ev.seq}: banked {claimed} by counting {parts}, dice of "
                    f"different rolls, as one combination ({meld.breakdown}); the keeps claimed "
                    f"{t.claimed_sum}",
                    claimed,
                    t.claimed_sum,
                )
            else:
                v.flag(
                    Code.BANK_MISMATCH,
                    f"seq {ev.seq}: banked {claimed}, but the keeps of this turn claimed {t.claimed_sum} in all",
                    claimed,
                    t.claimed_sum,
                )
        shortfall = bank_shortfall(claimed, rules.opening, rules.min_bank, g.opened[t.player])
        if shortfall == BELOW_OPENING:
            v.flag(
                Code.BANK_BELOW_OPENING,
                f"seq {ev.seq}: {t.player} banked {claimed} before opening, but a "
                f"first bank needs at least {rules.opening}",
                claimed,
                rules.opening,
            )
        elif shortfall == BELOW_MINIMUM:
            v.flag(
                Code.BANK_BELOW_MINIMUM,
                f"seq {ev.seq}: {t.player} banked {claimed}, below the minimum bank of {rules.min_bank}",
                claimed,
                rules.min_bank,
            )
        before = g.claimed_total[t.player]
        total = ev.total if ev.total is not None else before + claimed
        if total != before + claimed:
            v.flag(
                Code.TOTAL_MISMATCH,
                f"seq {ev.seq}: {t.player} banked {claimed} on a total of {before}, "
                f"which makes {before + claimed}, but the total given is {total}",
                total,
                before + claimed,
            )
        corrected = self._apply_bank(g, t, total)
        if self.trace:
            self._trace(t, ev, claimed=claimed, worth=corrected, total=total)
        if v.code is not None:
            self._emit_verdict(g, ev, v)
        self._close_turn(g, t, outcome="bank", end_seq=ev.seq, claimed=claimed, corrected=corrected)

    def _apply_bank(self, g: GameState, t: TurnState, total: int) -> int:
        """Both ledgers after a bank (logged or implied); returns its corrected points."""
        rules = g.rules
        g.claimed_total[t.player] = total
        g.opened[t.player] = True
        g.streak[t.player] = streak_after_bank(g.streak[t.player])
        if t.decision_pending is not None:
            t.decision_pending.choice = "bank"
            _link_keep(t.decision_pending, t.roll_pending)
            self.out.decisions.append(t.decision_pending)
            t.decision_pending = None
        opened = g.opened_corrected[t.player]
        points = 0 if t.went_past_bust or t.awaiting_after_bust else t.corrected_sum
        corrected = bank_scores(points, rules.opening, rules.min_bank, opened)
        g.opened_corrected[t.player] = opened_after_bank(points, rules.opening, rules.min_bank, opened)
        if t.went_past_bust or t.awaiting_after_bust:
            self._corrected_farkle(g, t.player)
        else:
            g.streak_corrected[t.player] = streak_after_bank(g.streak_corrected[t.player])
            g.corrected_total[t.player] += corrected
        return corrected

    def _apply_farkle(self, g: GameState, t: TurnState, total: int) -> None:
        """Both ledgers after a farkle (logged or implied)."""
        rules = g.rules
        t.awaiting_after_bust = False
        g.claimed_total[t.player] = total
        g.streak[t.player] = streak_after_farkle(g.streak[t.player], rules.farkle_penalty, rules.penalty_after)
        t.decision_pending = None  # a farkle right after a keep: no bank-or-roll choice was logged
        self._corrected_farkle(g, t.player)

    def _farkle(self, g: GameState, t: TurnState, ev: Event, v: _Verdict) -> None:
        rules = g.rules
        if t.phase == ROLLED and t.last_roll_scored:
            best = g.table.best[t.last_roll_key]
            v.flag(
                Code.FALSE_FARKLE,
                f"seq {ev.seq}: a farkle was declared, but the roll {_show(t.last_roll)} at "
                f"seq {t.last_roll_seq} scores (its best keep is worth {best})",
                0,
                best,
            )
        elif t.phase == KEPT:
            v.flag(
                Code.FALSE_FARKLE,
                f"seq {ev.seq}: a farkle was declared right after the keep at seq "
                f"{t.keeps[-1].seq if t.keeps else '?'}, with no roll in between",
            )
        elif t.phase == NO_ROLL:
            v.flag(Code.FALSE_FARKLE, f"seq {ev.seq}: a farkle was declared with nothing rolled this turn")
        before = g.claimed_total[t.player]
        streak = g.streak[t.player] + 1  # this farkle's place in the streak, for the message
        penalty = farkle_cost(g.streak[t.player], rules.farkle_penalty, rules.penalty_after)
        expected_total = before - penalty
        if ev.total is not None and ev.total != expected_total:
            if penalty:
                why = (
                    f"this is {t.player}'s {_ordinal(streak)} farkle in a row, which costs {penalty}: "
                    f"{before} - {penalty} = {expected_total}"
                )
            elif rules.farkle_penalty:
                why = (
                    f"this is {t.player}'s {_ordinal(streak)} farkle in a row and the penalty comes only "
                    f"with the {_ordinal(rules.penalty_after)}, so the total stays {before}"
                )
            else:
                why = f"this game has no farkle penalty, so the total stays {before}"
            v.flag(
                Code.PENALTY_ERROR,
                f"seq {ev.seq}: the farkle gives {t.player} a total of {ev.total}, but {why}",
                ev.total,
                expected_total,
            )
        self._apply_farkle(g, t, ev.total if ev.total is not None else expected_total)
        if self.trace:
            self._trace(t, ev, claimed=0, worth=0, total=g.claimed_total[t.player])
        if v.code is not None:
            self._emit_verdict(g, ev, v)
        self._close_turn(g, t, outcome="farkle", end_seq=ev.seq, claimed=0, corrected=0)

    def _corrected_farkle(self, g: GameState, player: str) -> None:
        rules = g.rules
        streak = g.streak_corrected[player]
        g.corrected_total[player] -= farkle_cost(streak, rules.farkle_penalty, rules.penalty_after)
        g.streak_corrected[player] = streak_after_farkle(streak, rules.farkle_penalty, rules.penalty_after)

    def _close_turn(
        self,
        g: GameState,
        t: TurnState,
        outcome: str,
        end_seq: int | None,
        claimed: int = 0,
        corrected: int = 0,
        implied: bool = False,
    ) -> None:
        if t.roll_pending is not None:
            self.out.rolls.append(t.roll_pending)
            t.roll_pending = None
        if t.decision_pending is not None:
            t.decision_pending = None
        if self.records:
            if t.phase == KEPT:
                dice_left = dice_to_roll(len(t.last_roll or ()), t.kept_from_roll)
            elif t.phase == ROLLED:
                dice_left = len(t.last_roll or ())
            else:
                dice_left = None
            self.out.turns.append(
                TurnRecord(
                    game_id=g.game_id,
                    player=t.player,
                    turn=t.turn,
                    start_seq=t.start_seq,
                    end_seq=end_seq,
                    rolls=t.rolls,
                    hot_dice=t.hot_dice,
                    outcome=outcome,
                    claimed_points=claimed,
                    corrected_points=corrected if outcome == "bank" else 0,
                    dice_left=dice_left,
                    claimed_total=g.claimed_total.get(t.player) if outcome != "open" else None,
                    corrected_total=g.corrected_total.get(t.player, 0),
                    ts=t.ts,
                    end_implied=implied,
                )
            )
        if self.trace and t.flagged and t.trace:
            g.timeline.append(t.trace)
        g.turn = None
        if outcome == "open":
            return
        seat = g.players.index(t.player)
        g.next_player = (seat + 1) % len(g.players)
        g.reached, g.final_left = final_round_step(
            seat, g.claimed_total[t.player], g.target, g.reached, g.final_owed, g.final_left
        )
        g.over = game_over(g.reached, g.final_left, min(g.turns_played.values()), g.rounds)

    # ------------------------------------------------------------------ game end
    def _game_end(self, g: GameState, ev: Event, v: _Verdict) -> None:
        abandoned = ev.reason == "abandoned"
        if abandoned and g.turn is not None:
            # log-format.md, "Abandoned games": the open turn is forfeited, no finding
            self._close_turn(g, g.turn, outcome="open", end_seq=None)
        scores = ev.scores
        if scores is not None or not abandoned:  # an abandoned game may give no scores
            scores = scores or {}
            for p in g.players:
                if scores.get(p) != g.claimed_total[p]:
                    v.flag(
                        Code.FINAL_SCORE_MISMATCH,
                        f"seq {ev.seq}: game_end gives {p} {scores.get(p)}, but "
                        f"{p}'s last claimed total is {g.claimed_total[p]}",
                        scores.get(p),
                        g.claimed_total[p],
                        player=p,
                    )
                    break
        named = normalise_winner(ev.winner)
        if abandoned:
            if ev.winner is not None:
                self._check_winner(g, ev, v, named, "(abandoned) ")
        elif not g.over:
            v.flag(Code.WRONG_WINNER, f"seq {ev.seq}: game_end comes before {self._still_to_play(g)}")
        else:
            self._check_winner(g, ev, v, named, "")
        g.ended = True
        g.end_reason = ev.reason or "finished"
        g.end_winner = ev.winner
        g.end_scores = dict(scores) if scores is not None else None
        if v.code is not None:
            self._emit_verdict(g, ev, v)

    def _check_winner(self, g: GameState, ev: Event, v: _Verdict, named: set[str], how: str) -> None:
        best = set(winners(g.claimed_total, g.players))
        if named != best:
            v.flag(
                Code.WRONG_WINNER,
                f"seq {ev.seq}: game_end {how}names {_names(named)} as the winner, but the "
                f"highest claimed total is {_names(best)}'s ({max(g.claimed_total.values())})",
            )

    @staticmethod
    def _still_to_play(g: GameState) -> str:
        """Why the game is not over yet, for wrong_winner: the final round, else what is left."""
        if g.reached != NOBODY:
            left = ", ".join(p for p, owed in zip(g.players, g.final_owed) if owed)
            return (
                f"the final round was played out ({left} still to play after {g.players[g.reached]} reached {g.target})"
            )
        target = f"anyone reached the target of {g.target}" if g.target else ""
        if not g.rounds:
            return target
        open_turn = g.turn.player if g.turn is not None else None
        short = [p for p in g.players if g.turns_played[p] - (p == open_turn) < g.rounds]
        rounds = f"round {g.rounds} was played out ({', '.join(short)} still to play)"
        return f"{target} or {rounds}" if target else rounds

    def game_result(self, g: GameState) -> GameResult:
        """The game's one claimed result is its first game_end (a later one is not replayed):
        no game_end, no claimed winner, however far ahead someone's claimed total is; an
        abandoned one, no corrected winner."""
        scores = g.end_scores or {}
        claimed = {p: scores.get(p, g.claimed_total[p]) for p in g.players}
        ended = (g.end_reason or "finished") if g.ended else None
        return GameResult(
            game_id=g.game_id,
            players=g.players,
            ruleset=g.rules,
            claimed=claimed,
            corrected=dict(g.corrected_total),
            winner_claimed=winner_names(g.end_winner) if g.ended else None,
            # an abandoned game has no winner by the dice (log-format.md)
            winner_corrected=None if ended == "abandoned" else (winners(g.corrected_total, g.players) or None),
            complete=g.ended,
            first_ts=g.first_ts,
            last_ts=g.last_ts,
            events=g.events,
            ended=ended,
        )


def _other_total(g: GameState, player: str) -> int | None:
    """In a game of two players, the other's corrected banked total (the winning-chance
    state's second total, as a turn of `player` opens); None in any other game, or for a
    name that is not one of the two."""
    if len(g.players) != 2 or player not in g.players:
        return None
    other = g.players[1] if g.players[0] == player else g.players[0]
    return g.corrected_total.get(other, 0)


def _link_keep(d: DecisionRecord, roll: RollRecord | None) -> None:
    """The roll a bank-or-roll's keep came from, as its row will read (the turn's latest
    roll, not yet written: rolls wait for their keep), so that the single-turn judgement
    needs no join of choices to rolls (int_choice_values; int_choice_links derives the same
    from the rows)."""
    if roll is not None:
        d.from_roll_key, d.from_kept_key, d.from_points_before = roll.roll_key, roll.kept_key, roll.points_before


def _reveals_lost_end(g: GameState, t: TurnState, ev: Event) -> bool:
    """log-format.md, "a lost turn end": a roll of 6 dice by another player of the game,
    inside an open turn whose latest event is a keep or a roll that scored nothing."""
    return (
        ev.type == "roll"
        and ev.player in g.claimed_total
        and reveals_lost_end(len(ev.dice or ()), t.phase == KEPT, t.phase == ROLLED and not t.last_roll_scored)
    )


def _lost_end_message(ev: Event, lost: TurnState) -> str:
    if lost.phase == KEPT:
        last = lost.keeps[-1].seq if lost.keeps else lost.start_seq
        after = f"the keep at seq {last}"
        taken = (
            f"taken as a bank of the {lost.claimed_sum} points its keeps claimed" if lost.keeps else "taken as a bank"
        )
    else:
        after = f"the roll {_show(lost.last_roll)} at seq {lost.last_roll_seq}, which scored nothing"
        taken = "taken as a farkle"
    return (
        f"seq {ev.seq}: {ev.player} rolled six dice while {lost.player}'s turn {lost.turn} (from seq "
        f"{lost.start_seq}) was still open after {after}: the line that ended {lost.player}'s turn is "
        f"missing, so that turn is {taken}"
    )


def _names(names: set[str]) -> str:
    return " and ".join(sorted(names)) if names else "nobody"


def _breakdown(g: GameState, counts) -> str:
    found = best_split_counts(tuple(counts), g.rules)
    from pipeline.rules.scoring import format_breakdown

    return format_breakdown(found[1]) if found else "no split scores"


def _keep_meld_message(ev: Event, t: TurnState, dice, claimed: int, value: int, meld) -> str:
    earlier = " and ".join(f"the {_plain(k.dice)} kept at seq {k.seq}" for k in meld.keeps)
    return (
        f"seq {ev.seq}: kept {_plain(dice)} from the roll {_show(t.last_roll)} and counted it with {earlier} "
        f"as one combination ({meld.breakdown}), but dice of different rolls never combine: claimed "
        f"{claimed}, worth {value}"
    )


_NUMBER_WORDS = ("none", "one", "two", "three", "four", "five", "six")


def _count_of(n: int, face: int) -> str:
    """'three 1s', 'a 5', 'none': a count of one face as a referee says it."""
    if n == 0:
        return "none"
    if n == 1:
        return f"a {face}"
    word = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return f"{word} {face}s"


def _shortfall(kept, rolled) -> str:
    """Which kept faces the roll did not have enough of: 'kept three 1s, the roll had two'."""
    parts = []
    for face, (k, r) in enumerate(zip(kept, rolled), start=1):
        if k > r:
            had = _NUMBER_WORDS[r] if r < len(_NUMBER_WORDS) else str(r)
            parts.append(f"kept {_count_of(k, face)}, the roll had {had}")
    return "; ".join(parts)


def _idle_dice(g: GameState, dice) -> str:
    """Why a keep is not legal, in words: 'a 2 and a 4 score nothing', or, when the dice
    that do score cannot all be used together, 'only 1,1 of them can score (200)'."""
    counts = _counts(dice)
    best = best_keep_counts(counts, g.rules)
    if best is None:
        return "none of the kept dice scores"
    idle = [c - b for c, b in zip(counts, best[0])]
    if any(i and b for i, b in zip(idle, best[0])):
        return f"only {_plain(counts_to_dice(best[0]))} of them can score together ({best[1]})"
    parts = [_count_of(n, face) for face, n in enumerate(idle, start=1) if n]
    verb = "scores" if sum(idle) == 1 else "score"
    return f"{' and '.join(parts)} {verb} nothing"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _gap_message(seq: int, expected: int) -> str:
    missing = seq - expected
    if missing == 1:
        return f"seq {seq} comes after seq {expected - 1}: seq {expected} is missing"
    return f"seq {seq} comes after seq {expected - 1}: seqs {expected} to {seq - 1} are missing ({missing} events)"


def audit_items(
    items: Iterable[Event | BadLine], default_rules: Ruleset | None = None, *, trace: bool = False, records: bool = True
) -> ReplayOutput:
    """Replay a whole input in one call: findings, records and results together."""
    r = Replayer(default_rules, trace=trace, records=records)
    r.feed_all(items)
    r.finish()
    return r.drain()

"""The replay loop over integer columns, for clean games only: its pure-Python source.

This is the turn-state machine of `pipeline.replay.engine.Replayer` cut down to the path
a game with no finding takes. Wherever the reference engine would report a finding, this
loop marks the game SUSPECT, records the code (G_CODE) and stops replaying it; the caller
drops whatever rows the game produced and hands the whole game to the reference. So the
loop needs no messages, no meld search, no traces, no corrected-value repair of wrong
keeps: only the arithmetic of a correct game, whose rules are `pipeline.rules.play`'s,
kept in arrays so numba can compile it (`compiled.py`) and so it can resume across
batches of input.

Written in the subset of Python that numba compiles (ints, arrays, loops). Run as plain
Python it is the reference the compiled function is tested against.

State layout (int64 matrices, one row per game / per seat, columns named below):
the caller configures a game's row at its first `game_start` (G_CONFIGURED, rules row,
player slots, start order); the loop does the rest.
"""

from __future__ import annotations

from pipeline.model import Code
from pipeline.rules.play import (
    BANK_OK,
    BELOW_OPENING,
    NOBODY,
    bank_scores,
    bank_shortfall,
    dice_to_roll,
    farkle_cost,
    final_round_step,
    game_over,
    hot_dice,
    key_within,
    opened_after_bank,
    reveals_lost_end,
    running_claim,
    streak_after_bank,
    streak_after_farkle,
)

# event type codes
GAME_START, ROLL, KEEP, BANK, FARKLE, GAME_END = 0, 1, 2, 3, 4, 5
TYPE_CODES = {
    "game_start": GAME_START,
    "roll": ROLL,
    "keep": KEEP,
    "bank": BANK,
    "farkle": FARKLE,
    "game_end": GAME_END,
}

# game status
UNSEEN, STARTED, SUSPECT = 0, 1, 2
# why a game is SUSPECT (G_CODE): the registry's number of the finding the reference will
# give first (pipeline.model.Code.id; FastReplay.first_code reads it back), or BEYOND: no
# finding, the game is only outside what the kernel replays (a ruleset's values too large)
BEYOND = -1
C_UNKNOWN_GAME = Code.UNKNOWN_GAME.id
C_SEQ_ERROR = Code.SEQ_ERROR.id
C_PLAY_AFTER_GAME_OVER = Code.PLAY_AFTER_GAME_OVER.id
C_WRONG_PLAYER = Code.WRONG_PLAYER.id
C_MISSING_TURN_END = Code.MISSING_TURN_END.id
C_MISSED_FARKLE = Code.MISSED_FARKLE.id
C_MISSING_KEEP = Code.MISSING_KEEP.id
C_WRONG_DICE_COUNT = Code.WRONG_DICE_COUNT.id
C_KEPT_NOT_ROLLED = Code.KEPT_NOT_ROLLED.id
C_NON_SCORING_KEPT = Code.NON_SCORING_KEPT.id
C_SCORING_ERROR = Code.SCORING_ERROR.id  # or cross_roll_meld: the kernel does not search melds
C_BANK_MISMATCH = Code.BANK_MISMATCH.id  # or cross_roll_meld
C_BANK_BELOW_OPENING = Code.BANK_BELOW_OPENING.id
C_BANK_BELOW_MINIMUM = Code.BANK_BELOW_MINIMUM.id
C_TOTAL_MISMATCH = Code.TOTAL_MISMATCH.id
C_FALSE_FARKLE = Code.FALSE_FARKLE.id
C_PENALTY_ERROR = Code.PENALTY_ERROR.id
C_WRONG_WINNER = Code.WRONG_WINNER.id
# turn phase
NO_ROLL, ROLLED, KEPT = 0, 1, 2

# ---- per-game state columns --------------------------------------------------------------
(
    G_STATUS,
    G_CONFIGURED,
    G_RULES,
    G_POFF,
    G_NPL,
    G_ORDER,
    G_LAST_SEQ,
    G_EVENTS,
    G_NEXT,
    G_REACHED,
    G_FINAL_LEFT,
    G_OVER,
    G_ENDED,
    G_END_POS,
    G_LAST_POS,
    G_CODE,
    # the open turn
    T_OPEN,
    T_SEAT,
    T_TURN,
    T_START_POS,
    T_PHASE,
    T_ROLLS,
    T_HOT,
    T_LAST_KEY,
    T_LAST_N,
    T_LAST_SCORED,
    T_KEPT_FROM,
    T_AWAIT,
    T_CLAIMED_SUM,
    T_CORR_SUM,
    T_BANKED_BEFORE,
    T_OPENED_BEFORE,
    T_START_TOTAL,  # the player's corrected total as the turn opens
    T_OTHER_TOTAL,  # two players: the other's (NO_TOTAL otherwise)
    # the roll record waiting for its keep
    R_PENDING,
    R_POS,
    R_ROLLNO,
    R_SCORED,
    R_BEST,
    R_KEEP_POS,
    R_KEPT_CLAIMED,
    R_KEPT_VALUE,
    R_POINTS_BEFORE,
    # the bank-or-roll decision waiting for its choice
    D_PENDING,
    D_POS,
    D_LEFT,
    D_TURN_POINTS,
    D_OPP,
    D_CORR,
    GAME_COLUMNS,
) = range(50)

# ---- per-seat state columns (a game's seats are rows G_POFF .. G_POFF + G_NPL - 1) -------
(P_NAME, P_TURNS, P_CLAIMED, P_CORR, P_OPENED, P_OPENED_C, P_STREAK, P_STREAK_C, P_FINAL, PLAYER_COLUMNS) = range(10)

# ---- output rows ---------------------------------------------------------------------------
# rolls: the roll event's position gives game_id, seq, player, dice, ts; the keep's, kept
(
    RO_GAME,
    RO_EMIT,
    RO_POS,
    RO_TURN,
    RO_ROLLNO,
    RO_SCORED,
    RO_BEST,
    RO_KEEP_POS,
    RO_KEPT_CLAIMED,
    RO_KEPT_VALUE,
    RO_POINTS_BEFORE,
    RO_OPENED,
    RO_START_TOTAL,
    RO_OTHER_TOTAL,
    ROLL_COLUMNS,
) = range(15)
# decisions: the keep event's position gives game_id, seq, player, ts
(
    DE_GAME,
    DE_EMIT,
    DE_POS,
    DE_TURN,
    DE_LEFT,
    DE_TURN_POINTS,
    DE_BANKED,
    DE_OPP,
    DE_OPENED,
    DE_CHOICE,
    DE_FARKLED,
    DE_CORR,
    DE_START_TOTAL,
    DE_OTHER_TOTAL,
    # the roll the keep came from (the pending roll record): its event, its keep's, its points
    DE_FROM_POS,
    DE_FROM_KEEP_POS,
    DE_FROM_POINTS,
    DECISION_COLUMNS,
) = range(18)
CHOICE_BANK, CHOICE_ROLL = 0, 1
NO_TOTAL = -(1 << 62)  # T_OTHER_TOTAL of a game not of two players: null in the tables
# turns: the start event's position gives game_id, player, start_seq, ts; the end's, end_seq
(
    TU_GAME,
    TU_EMIT,
    TU_SEAT,
    TU_TURN,
    TU_START_POS,
    TU_END_POS,
    TU_ROLLS,
    TU_HOT,
    TU_OUTCOME,
    TU_CLAIMED,
    TU_CORRECTED,
    TU_DICE_LEFT,
    TU_CLAIMED_TOTAL,
    TU_CORRECTED_TOTAL,
    TURN_COLUMNS,
) = range(15)
OUTCOME_BANK, OUTCOME_FARKLE, OUTCOME_OPEN = 0, 1, 2  # open: forfeited at an abandoned game_end

# ruleset parameter columns (one row per ruleset, built by pipeline.replay.fast.scoring):
# RP_USABLE is 0 when the kernel cannot replay under the ruleset, the rest are its knobs
# (`target` and `rounds` as play.py takes them: NO_TARGET / NO_ROUND_LIMIT for null)
RP_USABLE, RP_OPENING, RP_MIN_BANK, RP_PENALTY, RP_PENALTY_AFTER, RP_TARGET, RP_ROUNDS, RP_COLUMNS = range(8)
RP_KNOBS = {
    RP_OPENING: "opening",
    RP_MIN_BANK: "min_bank",
    RP_PENALTY: "farkle_penalty",
    RP_PENALTY_AFTER: "penalty_after",
    RP_TARGET: "target",
    RP_ROUNDS: "rounds",
}


def replay_events(
    slot,
    code,
    seq,
    name,
    key,
    ndice,
    points,
    total,
    has_total,
    running,
    abandoned,
    base,
    gs,
    ps,
    key_index,
    params,
    value,
    value_ok,
    best,
    farkle,
    records,
    rolls_out,
    dec_out,
    turns_out,
    n_out,
):
    """Replay events i = 0..len(slot)-1 (global positions base + i) into the state arrays.

    `running[i]` is 1 for a keep whose `points[i]` is the turn's claimed running total
    (`turn_points`), `abandoned[i]` 1 for a game_end that says the game was abandoned.

    A game marked SUSPECT is skipped from then on; rows it produced stay in the outputs
    and are dropped by the caller (they carry the game's slot). With `records` false no
    rows are written (audit needs the verdicts and the final state only).
    """
    n_rolls = n_out[0]
    n_dec = n_out[1]
    n_turns = n_out[2]
    for i in range(slot.shape[0]):
        g = slot[i]
        status = gs[g, G_STATUS]
        if status == SUSPECT:
            continue
        pos = base + i
        c = code[i]
        if status == UNSEEN:
            if c != GAME_START or gs[g, G_CONFIGURED] == 0:
                _give_up(gs, g, C_UNKNOWN_GAME)  # no game_start yet
                continue
            if seq[i] != 1:
                _give_up(gs, g, C_SEQ_ERROR)
                continue
            if params[gs[g, G_RULES], RP_USABLE] == 0:
                _give_up(gs, g, BEYOND)
                continue
            gs[g, G_STATUS] = STARTED
            gs[g, G_LAST_SEQ] = seq[i]
            gs[g, G_EVENTS] = 1
            gs[g, G_LAST_POS] = pos
            gs[g, G_NEXT] = 0
            gs[g, G_REACHED] = NOBODY
            gs[g, G_END_POS] = -1
            continue
        gs[g, G_EVENTS] += 1
        gs[g, G_LAST_POS] = pos
        if seq[i] != gs[g, G_LAST_SEQ] + 1 or c == GAME_START:
            _give_up(gs, g, C_SEQ_ERROR)  # a gap, a repeat, a step back, a second game_start
            continue
        if gs[g, G_ENDED] != 0 or (gs[g, G_OVER] != 0 and c != GAME_END):
            _give_up(gs, g, C_PLAY_AFTER_GAME_OVER)
            continue
        gs[g, G_LAST_SEQ] = seq[i]
        r = gs[g, G_RULES]
        if c == GAME_END:
            # wrong_winner unless the final round was played out; scores and the winner's
            # names are compared by the caller, which holds them (a score that differs comes
            # first: the caller then says final_score_mismatch)
            gs[g, G_END_POS] = pos
            if abandoned[i] != 0:
                # no game over needed; a turn still open is forfeited (no finding, no points)
                if gs[g, T_OPEN] != 0:
                    if records:
                        if gs[g, R_PENDING] != 0:
                            _roll_row(rolls_out, n_rolls, g, pos, gs)
                            n_rolls += 1
                        p = gs[g, G_POFF] + gs[g, T_SEAT]
                        _turn_row(turns_out, n_turns, g, pos, gs, ps, p, OUTCOME_OPEN, 0, 0)
                        n_turns += 1
                    gs[g, T_OPEN] = 0
                    gs[g, R_PENDING] = 0
                    gs[g, D_PENDING] = 0
                gs[g, G_ENDED] = 1
                continue
            if gs[g, G_OVER] == 0:
                _give_up(gs, g, C_WRONG_WINNER)
                continue
            gs[g, G_ENDED] = 1
            continue
        # a turn event: whose is it?
        poff = gs[g, G_POFF]
        npl = gs[g, G_NPL]
        seat = -1
        for s in range(npl):
            if ps[poff + s, P_NAME] == name[i]:
                seat = s
                break
        if seat < 0:
            _give_up(gs, g, C_WRONG_PLAYER)  # not a player of this game
            continue
        if gs[g, T_OPEN] == 0:
            if seat != gs[g, G_NEXT]:
                _give_up(gs, g, C_WRONG_PLAYER)  # not their turn
                continue
            p = poff + seat
            ps[p, P_TURNS] += 1
            gs[g, T_OPEN] = 1
            gs[g, T_SEAT] = seat
            gs[g, T_TURN] = ps[p, P_TURNS]
            gs[g, T_START_POS] = pos
            gs[g, T_PHASE] = NO_ROLL
            gs[g, T_ROLLS] = 0
            gs[g, T_HOT] = 0
            gs[g, T_LAST_KEY] = 0
            gs[g, T_LAST_N] = 0
            gs[g, T_LAST_SCORED] = 1
            gs[g, T_KEPT_FROM] = 0
            gs[g, T_AWAIT] = 0
            gs[g, T_CLAIMED_SUM] = 0
            gs[g, T_CORR_SUM] = 0
            gs[g, T_BANKED_BEFORE] = ps[p, P_CLAIMED]
            gs[g, T_OPENED_BEFORE] = ps[p, P_OPENED]
            gs[g, T_START_TOTAL] = ps[p, P_CORR]
            gs[g, T_OTHER_TOTAL] = ps[poff + 1 - seat, P_CORR] if npl == 2 else NO_TOTAL
            gs[g, R_PENDING] = 0
            gs[g, D_PENDING] = 0
        elif seat != gs[g, T_SEAT]:
            _give_up(gs, g, _other_seat(c, ndice[i], seat, gs[g, T_SEAT], npl, gs[g, T_PHASE], gs[g, T_LAST_SCORED]))
            continue
        p = poff + seat
        if gs[g, T_AWAIT] != 0 and c != FARKLE:
            _give_up(gs, g, C_MISSED_FARKLE)
            continue
        phase = gs[g, T_PHASE]
        if c == ROLL:
            if phase == ROLLED:
                _give_up(gs, g, C_MISSING_KEEP)
                continue
            if ndice[i] != dice_to_roll(gs[g, T_LAST_N], gs[g, T_KEPT_FROM]):
                _give_up(gs, g, C_WRONG_DICE_COUNT)
                continue
            k = key_index[key[i]]
            scored = 1 - farkle[r, k]
            if records:
                if gs[g, D_PENDING] != 0:
                    _decision_row(dec_out, n_dec, g, pos, gs, CHOICE_ROLL, 1 - scored)
                    n_dec += 1
                if gs[g, R_PENDING] != 0:
                    _roll_row(rolls_out, n_rolls, g, pos, gs)
                    n_rolls += 1
            gs[g, D_PENDING] = 0
            gs[g, T_ROLLS] += 1
            gs[g, T_PHASE] = ROLLED
            gs[g, T_LAST_KEY] = key[i]
            gs[g, T_LAST_N] = ndice[i]
            gs[g, T_LAST_SCORED] = scored
            gs[g, T_KEPT_FROM] = 0
            gs[g, T_AWAIT] = 1 - scored
            gs[g, R_PENDING] = 1
            gs[g, R_POS] = pos
            gs[g, R_ROLLNO] = gs[g, T_ROLLS]
            gs[g, R_SCORED] = scored
            gs[g, R_BEST] = best[r, k]
            gs[g, R_KEEP_POS] = -1
            gs[g, R_POINTS_BEFORE] = gs[g, T_CORR_SUM]
        elif c == KEEP:
            if phase != ROLLED or not key_within(key[i], gs[g, T_LAST_KEY]):
                _give_up(gs, g, C_KEPT_NOT_ROLLED)
                continue
            k = key_index[key[i]]
            if value_ok[r, k] == 0:
                _give_up(gs, g, C_NON_SCORING_KEPT)
                continue
            claim = points[i]
            if running[i] != 0:
                claim = running_claim(points[i], gs[g, T_CLAIMED_SUM])
            if claim != value[r, k]:
                _give_up(gs, g, C_SCORING_ERROR)
                continue
            worth = value[r, k]
            gs[g, T_CLAIMED_SUM] += claim
            gs[g, T_CORR_SUM] += worth
            if gs[g, R_PENDING] != 0:
                gs[g, R_KEEP_POS] = pos
                gs[g, R_KEPT_CLAIMED] = claim
                gs[g, R_KEPT_VALUE] = worth
            gs[g, T_KEPT_FROM] += ndice[i]
            left = dice_to_roll(gs[g, T_LAST_N], gs[g, T_KEPT_FROM])
            if hot_dice(gs[g, T_LAST_N], gs[g, T_KEPT_FROM]):
                gs[g, T_HOT] += 1
            gs[g, T_PHASE] = KEPT
            opp = 0
            for s in range(npl):
                if s != seat and ps[poff + s, P_CLAIMED] > opp:
                    opp = ps[poff + s, P_CLAIMED]
            gs[g, D_PENDING] = 1
            gs[g, D_POS] = pos
            gs[g, D_LEFT] = left
            gs[g, D_TURN_POINTS] = gs[g, T_CLAIMED_SUM]
            gs[g, D_OPP] = opp
            gs[g, D_CORR] = gs[g, T_CORR_SUM]
        elif c == BANK:
            claimed = points[i]
            before = ps[p, P_CLAIMED]
            opening = params[r, RP_OPENING]
            min_bank = params[r, RP_MIN_BANK]
            if phase != KEPT:
                _give_up(gs, g, C_MISSING_KEEP)
                continue
            if claimed != gs[g, T_CLAIMED_SUM]:
                _give_up(gs, g, C_BANK_MISMATCH)
                continue
            shortfall = bank_shortfall(claimed, opening, min_bank, ps[p, P_OPENED] != 0)
            if shortfall != BANK_OK:
                _give_up(gs, g, C_BANK_BELOW_OPENING if shortfall == BELOW_OPENING else C_BANK_BELOW_MINIMUM)
                continue
            if has_total[i] != 0 and total[i] != before + claimed:
                _give_up(gs, g, C_TOTAL_MISMATCH)
                continue
            ps[p, P_CLAIMED] = before + claimed
            ps[p, P_OPENED] = 1
            ps[p, P_STREAK] = streak_after_bank(ps[p, P_STREAK])
            if records and gs[g, D_PENDING] != 0:
                _decision_row(dec_out, n_dec, g, pos, gs, CHOICE_BANK, -1)
                n_dec += 1
            gs[g, D_PENDING] = 0
            points_c = gs[g, T_CORR_SUM]
            opened_c = ps[p, P_OPENED_C] != 0
            corrected = bank_scores(points_c, opening, min_bank, opened_c)
            ps[p, P_OPENED_C] = 1 if opened_after_bank(points_c, opening, min_bank, opened_c) else 0
            ps[p, P_STREAK_C] = streak_after_bank(ps[p, P_STREAK_C])
            ps[p, P_CORR] += corrected
            if records:
                if gs[g, R_PENDING] != 0:
                    _roll_row(rolls_out, n_rolls, g, pos, gs)
                    n_rolls += 1
                _turn_row(turns_out, n_turns, g, pos, gs, ps, p, OUTCOME_BANK, claimed, corrected)
                n_turns += 1
            _end_turn(g, seat, gs, ps, params[r, RP_TARGET], params[r, RP_ROUNDS])
        elif c == FARKLE:
            if phase != ROLLED or gs[g, T_LAST_SCORED] != 0:
                _give_up(gs, g, C_FALSE_FARKLE)
                continue
            gs[g, T_AWAIT] = 0
            fp = params[r, RP_PENALTY]
            after = params[r, RP_PENALTY_AFTER]
            expected_total = ps[p, P_CLAIMED] - farkle_cost(ps[p, P_STREAK], fp, after)
            if has_total[i] != 0 and total[i] != expected_total:
                _give_up(gs, g, C_PENALTY_ERROR)
                continue
            ps[p, P_CLAIMED] = expected_total
            ps[p, P_STREAK] = streak_after_farkle(ps[p, P_STREAK], fp, after)
            gs[g, D_PENDING] = 0
            ps[p, P_CORR] -= farkle_cost(ps[p, P_STREAK_C], fp, after)
            ps[p, P_STREAK_C] = streak_after_farkle(ps[p, P_STREAK_C], fp, after)
            if records:
                if gs[g, R_PENDING] != 0:
                    _roll_row(rolls_out, n_rolls, g, pos, gs)
                    n_rolls += 1
                _turn_row(turns_out, n_turns, g, pos, gs, ps, p, OUTCOME_FARKLE, 0, 0)
                n_turns += 1
            _end_turn(g, seat, gs, ps, params[r, RP_TARGET], params[r, RP_ROUNDS])
        else:
            _give_up(gs, g, BEYOND)  # not a type the loop knows
            continue
    n_out[0] = n_rolls
    n_out[1] = n_dec
    n_out[2] = n_turns


def _give_up(gs, g, why):
    """Hand the game to the reference: SUSPECT from here on, and why (G_CODE)."""
    gs[g, G_STATUS] = SUSPECT
    gs[g, G_CODE] = why


def _other_seat(c, ndice, seat, open_seat, npl, phase, last_scored):
    """The code of an event by another player inside an open turn: missing_turn_end for a
    roll that reveals a lost turn end by the player due after the open turn's, else
    wrong_player. (When the implied end closed the final round the reference says
    play_after_game_over instead: the kernel does not replay implied ends.)"""
    if c == ROLL and reveals_lost_end(ndice, phase == KEPT, phase == ROLLED and last_scored == 0):
        if seat == (open_seat + 1) % npl:
            return C_MISSING_TURN_END
    return C_WRONG_PLAYER


def _decision_row(out, n, g, pos, gs, choice, farkled):
    out[n, DE_GAME] = g
    out[n, DE_EMIT] = pos
    out[n, DE_POS] = gs[g, D_POS]
    out[n, DE_TURN] = gs[g, T_TURN]
    out[n, DE_LEFT] = gs[g, D_LEFT]
    out[n, DE_TURN_POINTS] = gs[g, D_TURN_POINTS]
    out[n, DE_BANKED] = gs[g, T_BANKED_BEFORE]
    out[n, DE_OPP] = gs[g, D_OPP]
    out[n, DE_OPENED] = gs[g, T_OPENED_BEFORE]
    out[n, DE_CHOICE] = choice
    out[n, DE_FARKLED] = farkled  # -1: null (a bank)
    out[n, DE_CORR] = gs[g, D_CORR]
    out[n, DE_START_TOTAL] = gs[g, T_START_TOTAL]
    out[n, DE_OTHER_TOTAL] = gs[g, T_OTHER_TOTAL]
    # a keep needs a roll before it here, so the roll record is pending (-1 all the same if not)
    pending = gs[g, R_PENDING] != 0
    out[n, DE_FROM_POS] = gs[g, R_POS] if pending else -1
    out[n, DE_FROM_KEEP_POS] = gs[g, R_KEEP_POS] if pending else -1
    out[n, DE_FROM_POINTS] = gs[g, R_POINTS_BEFORE]


def _roll_row(out, n, g, pos, gs):
    out[n, RO_GAME] = g
    out[n, RO_EMIT] = pos
    out[n, RO_POS] = gs[g, R_POS]
    out[n, RO_TURN] = gs[g, T_TURN]
    out[n, RO_ROLLNO] = gs[g, R_ROLLNO]
    out[n, RO_SCORED] = gs[g, R_SCORED]
    out[n, RO_BEST] = gs[g, R_BEST]
    out[n, RO_KEEP_POS] = gs[g, R_KEEP_POS]
    out[n, RO_KEPT_CLAIMED] = gs[g, R_KEPT_CLAIMED]
    out[n, RO_KEPT_VALUE] = gs[g, R_KEPT_VALUE]
    out[n, RO_POINTS_BEFORE] = gs[g, R_POINTS_BEFORE]
    out[n, RO_OPENED] = gs[g, T_OPENED_BEFORE]
    out[n, RO_START_TOTAL] = gs[g, T_START_TOTAL]
    out[n, RO_OTHER_TOTAL] = gs[g, T_OTHER_TOTAL]
    gs[g, R_PENDING] = 0


def _turn_row(out, n, g, pos, gs, ps, p, outcome, claimed, corrected):
    out[n, TU_GAME] = g
    out[n, TU_EMIT] = pos
    out[n, TU_SEAT] = gs[g, T_SEAT]
    out[n, TU_TURN] = gs[g, T_TURN]
    out[n, TU_START_POS] = gs[g, T_START_POS]
    out[n, TU_END_POS] = -1 if outcome == OUTCOME_OPEN else pos
    out[n, TU_ROLLS] = gs[g, T_ROLLS]
    out[n, TU_HOT] = gs[g, T_HOT]
    out[n, TU_OUTCOME] = outcome
    out[n, TU_CLAIMED] = claimed
    out[n, TU_CORRECTED] = corrected
    phase = gs[g, T_PHASE]
    if phase == KEPT:
        out[n, TU_DICE_LEFT] = dice_to_roll(gs[g, T_LAST_N], gs[g, T_KEPT_FROM])
    elif phase == ROLLED:
        out[n, TU_DICE_LEFT] = gs[g, T_LAST_N]
    else:
        out[n, TU_DICE_LEFT] = -1
    out[n, TU_CLAIMED_TOTAL] = ps[p, P_CLAIMED]
    out[n, TU_CORRECTED_TOTAL] = ps[p, P_CORR]


def _end_turn(g, seat, gs, ps, target, rounds):
    """Close the turn: the next seat is due, the final round moves on, the round limit nears."""
    gs[g, T_OPEN] = 0
    gs[g, R_PENDING] = 0
    gs[g, D_PENDING] = 0
    poff = gs[g, G_POFF]
    npl = gs[g, G_NPL]
    gs[g, G_NEXT] = (seat + 1) % npl
    reached, left = final_round_step(
        seat, ps[poff + seat, P_CLAIMED], target, gs[g, G_REACHED], ps[poff : poff + npl, P_FINAL], gs[g, G_FINAL_LEFT]
    )
    gs[g, G_REACHED] = reached
    gs[g, G_FINAL_LEFT] = left
    fewest = ps[poff, P_TURNS]
    for s in range(1, npl):
        if ps[poff + s, P_TURNS] < fewest:
            fewest = ps[poff + s, P_TURNS]
    gs[g, G_OVER] = 1 if game_over(reached, left, fewest, rounds) else 0

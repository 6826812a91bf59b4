"""The scalar steps of play: each arithmetic rule of rules.md and log-format.md, once.

The dice key, the dice left to roll, the bank floor, the farkle streak and its penalty,
the final round, the round limit and the end of the game, a running total's claim. The reference engine, the compiled replay kernel,
the simulator and the injector all call these functions, so a rule cannot read one way in
one of them and another way in the next; a new knob of play is added here and passed in.

Written in the subset of Python that numba compiles (ints and bools in and out, at most
an int sequence, no objects), `dice_key` aside: `pipeline.replay.fast.compiled` compiles
them together with the kernel; everyone else calls them as they are.
`pipeline.simulate.check`, the tests' independent reading of the same rules, deliberately
does not use them.
"""

from __future__ import annotations

# ---- the dice key ------------------------------------------------------------------------
#: Weight of each face in the dice key, indexed by the face (index 0 pads): one decimal
#: digit per face count, 1s first, so [1, 1, 5] -> 200010. Building it needs no sort and it
#: joins fast in SQL; sql/macros.sql's `dice_key` uses the same weights (a test holds them equal).
FACE_WEIGHTS = (0, 100000, 10000, 1000, 100, 10, 1)
#: The largest key: six 1s.
MAX_KEY = 6 * FACE_WEIGHTS[1]


def dice_key(dice) -> int:
    """The key of valid dice (faces 1..6; `pipeline.rules.dice_key` checks them first).
    Not for the kernel, which is given keys computed for whole columns at once
    (`pipeline.replay.fast.scoring.dice_keys`): written for the interpreter, the replay's
    most frequent call."""
    return sum(map(_FACE_WEIGHT, dice))


_FACE_WEIGHT = FACE_WEIGHTS.__getitem__


def counts_key(counts) -> int:
    """The key of face counts c1..c6 (11155 as counts (3, 0, 0, 0, 2, 0) -> 300020)."""
    key = 0
    for face in range(1, 7):
        key += counts[face - 1] * FACE_WEIGHTS[face]
    return key


def face_count(key: int, face: int) -> int:
    """How many dice of `face` the key holds."""
    return (key // FACE_WEIGHTS[face]) % 10


def key_counts(key: int) -> tuple[int, int, int, int, int, int]:
    """The face counts c1..c6 of a key: `counts_key` undone."""
    return (
        face_count(key, 1),
        face_count(key, 2),
        face_count(key, 3),
        face_count(key, 4),
        face_count(key, 5),
        face_count(key, 6),
    )


def key_within(key: int, outer: int) -> bool:
    """Are the dice of `key` (at least one) all among those of `outer`? Face by face."""
    if key <= 0:
        return False
    for face in range(1, 7):
        if face_count(key, face) > face_count(outer, face):
            return False
    return True


# ---- dice left to roll -------------------------------------------------------------------
#: Dice of a turn's first roll, and of the roll after hot dice.
ALL_DICE = 6


def dice_to_roll(rolled: int, kept: int) -> int:
    """Dice the next roll of the turn has: those of the latest roll (`rolled`, 0 before
    the turn's first) not kept from it, or all six when every one was kept (hot dice)."""
    left = rolled - kept
    return ALL_DICE if left <= 0 else left


def hot_dice(rolled: int, kept: int) -> bool:
    """Every die of the roll was kept: the next roll is of all six again."""
    return rolled - kept <= 0


def reveals_lost_end(dice: int, after_keep: bool, after_nothing_scored: bool) -> bool:
    """A roll of `dice` by another player of the game inside an open turn shows that the
    line ending that turn was lost when it is of six dice and the turn's latest event is a
    keep or a roll that scored nothing (log-format.md, "a lost turn end")."""
    return dice == ALL_DICE and (after_keep or after_nothing_scored)


# ---- the bank floor ----------------------------------------------------------------------
BANK_OK, BELOW_OPENING, BELOW_MINIMUM = 0, 1, 2


def bank_shortfall(points: int, opening: int, min_bank: int, opened) -> int:
    """Which floor a bank of `points` falls below, opening first: `opening` while the
    player has not opened, `min_bank` always. A knob of 0 is no floor at all (so even a
    negative claim is below nothing)."""
    if not opened and opening != 0 and points < opening:
        return BELOW_OPENING
    if min_bank != 0 and points < min_bank:
        return BELOW_MINIMUM
    return BANK_OK


def bank_floor(opening: int, min_bank: int, opened) -> int:
    """The fewest points a bank may score: what `bank_shortfall` lets through (points >= 0)."""
    if opened:
        return min_bank
    return opening if opening > min_bank else min_bank


def bank_scores(points: int, opening: int, min_bank: int, opened) -> int:
    """What a bank adds to the total: its points, or 0 below the floor (it is still a bank)."""
    return points if bank_shortfall(points, opening, min_bank, opened) == BANK_OK else 0


def opened_after_bank(points: int, opening: int, min_bank: int, opened) -> bool:
    """Has the player opened after a bank of `points` (corrected): once a bank reached
    the opening threshold, not before."""
    if opened:
        return True
    return bank_shortfall(points, opening, min_bank, opened) == BANK_OK and points >= opening


# ---- the farkle streak -------------------------------------------------------------------
def farkle_cost(streak: int, farkle_penalty: int, penalty_after: int) -> int:
    """What a farkle takes off the total, `streak` being the player's farkles in a row
    before it: `farkle_penalty` on the `penalty_after`-th, else nothing."""
    if farkle_penalty != 0 and streak + 1 >= penalty_after:
        return farkle_penalty
    return 0


def streak_after_farkle(streak: int, farkle_penalty: int, penalty_after: int) -> int:
    """Farkles in a row after this one: the count starts again once a penalty was paid."""
    if farkle_cost(streak, farkle_penalty, penalty_after) != 0:
        return 0
    return streak + 1


def streak_after_bank(streak: int) -> int:
    """A bank ends a streak (also a bank below the floor, worth nothing)."""
    return 0


# ---- a keep's claim -----------------------------------------------------------------------
def running_claim(turn_points: int, claimed_before: int) -> int:
    """The points a keep logged with `turn_points` (the turn's claimed running total after
    it) claims: the difference from the turn's running total claimed before it, the sum of
    the turn's earlier claimed keeps (0 at its first keep; hot dice do not reset it). It is
    negative when the running total went down (log-format.md, "Running totals")."""
    return turn_points - claimed_before


# ---- the final round and game over -------------------------------------------------------
#: `reached` before anyone's claimed total reached the target.
NOBODY = -1
#: The `target` of a ruleset with none (`target: null`): no total starts a final round.
NO_TARGET = 0
#: The `rounds` of a ruleset with no round limit (`rounds: null`).
NO_ROUND_LIMIT = 0


def target_knob(target) -> int:
    """A ruleset's `target` as the int the steps below take: NO_TARGET for null."""
    return NO_TARGET if target is None else target


def rounds_knob(rounds) -> int:
    """A ruleset's `rounds` as the int the steps below take: NO_ROUND_LIMIT for null."""
    return NO_ROUND_LIMIT if rounds is None else rounds


def final_round_step(seat: int, total: int, target: int, reached: int, owed, left: int) -> tuple[int, int]:
    """After a turn of `seat` ending on claimed `total`: (reached, left), the seat that
    first reached `target` (NOBODY yet) and how many final turns are still owed. Reaching
    it starts the final round, in which every other player owes exactly one more turn;
    `owed` holds one flag per seat and is updated in place. With NO_TARGET nobody reaches it."""
    if reached == NOBODY:
        if target != NO_TARGET and total >= target:
            left = 0
            for s in range(len(owed)):
                owed[s] = 0 if s == seat else 1
                left += owed[s]
            return seat, left
        return reached, left
    if owed[seat] != 0:
        owed[seat] = 0
        left -= 1
    return reached, left


def rounds_played_out(fewest_turns: int, rounds: int) -> bool:
    """Has every player played `rounds` turns (`fewest_turns`: the fewest turns any player
    has ended)? Never under NO_ROUND_LIMIT."""
    return rounds != NO_ROUND_LIMIT and fewest_turns >= rounds


def game_over(reached: int, left: int, fewest_turns: int, rounds: int) -> bool:
    """The game is over once the final round that reaching the target started is played
    out, or once every player has played `rounds` turns, whichever comes first; no turn
    is replayed after it."""
    return (reached != NOBODY and left == 0) or rounds_played_out(fewest_turns, rounds)

"""The scalar steps of play (`pipeline.rules.play`): each rule once, everywhere the same.

Expected values come from rules.md and log-format.md ("penalty", "game over", "dice
count"); the last tests hold the other engines to this one module: the compiled kernel runs
the very same functions, SQL's dice key agrees, and no other module retypes the key.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import duckdb
import pytest

from pipeline.rules import play
from pipeline.rules.play import (
    NO_ROUND_LIMIT,
    NO_TARGET,
    BANK_OK,
    BELOW_MINIMUM,
    BELOW_OPENING,
    NOBODY,
    bank_floor,
    bank_scores,
    bank_shortfall,
    counts_key,
    dice_key,
    dice_to_roll,
    farkle_cost,
    final_round_step,
    game_over,
    hot_dice,
    key_counts,
    key_within,
    opened_after_bank,
    rounds_knob,
    running_claim,
    streak_after_bank,
    streak_after_farkle,
    target_knob,
)

ROOT = Path(__file__).resolve().parent.parent
ALL_COUNTS = [c for c in itertools.product(range(7), repeat=6) if 1 <= sum(c) <= 6]


def test_there_are_923_multisets_of_one_to_six_dice():
    assert len(ALL_COUNTS) == 923


def test_dice_key_is_one_digit_per_face_count():
    assert dice_key([1, 1, 5]) == 200010
    assert dice_key([5, 1, 1]) == 200010  # no sort needed
    assert dice_key([1, 1, 1, 1, 1, 1]) == play.MAX_KEY == 600000
    assert dice_key([6]) == 1
    for counts in ALL_COUNTS:
        dice = [face for face in range(1, 7) for _ in range(counts[face - 1])]
        assert dice_key(dice) == counts_key(counts)
        assert key_counts(counts_key(counts)) == counts


def test_key_within_is_the_sub_multiset_test():
    keys = {counts: counts_key(counts) for counts in ALL_COUNTS[::7]}
    for (a, ka), (b, kb) in itertools.product(keys.items(), repeat=2):
        assert key_within(ka, kb) == all(x <= y for x, y in zip(a, b)), (a, b)
    assert key_within(0, 600000) is False  # keeping nothing is never "all in the roll"


def test_sql_dice_key_equals_the_python_one():
    """sql/macros.sql cannot import Python: its dice_key and dice_text are held to play's."""
    con = duckdb.connect()
    con.execute((ROOT / "sql" / "macros.sql").read_text())
    rolls = []
    for counts in ALL_COUNTS:
        dice = [face for face in range(1, 7) for _ in range(counts[face - 1])]
        rolls.append(dice)
        rolls.append(dice[::-1])
    got = con.execute("select d, dice_key(d), dice_text(dice_key(d)) from unnest(?) t(d)", [rolls]).fetchall()
    assert len(got) == len(rolls)
    for dice, key, text in got:
        assert key == dice_key(dice), dice
        assert text == " ".join(map(str, sorted(dice)))


def test_dice_to_roll():
    """log-format.md, dice count: 6 at the turn's first roll and after hot dice, else rolled - kept."""
    assert dice_to_roll(0, 0) == 6  # the turn's first roll
    assert dice_to_roll(6, 2) == 4
    assert dice_to_roll(3, 0) == 3  # rolled again without a keep: the same dice
    assert dice_to_roll(4, 4) == 6 and hot_dice(4, 4)
    assert dice_to_roll(2, 3) == 6 and hot_dice(2, 3)  # kept more than rolled (a bad keep): still six
    assert not hot_dice(6, 5)


def test_bank_floor():
    """rules.md: `opening` until the first bank, `min_bank` always; 0 turns a knob off."""
    assert bank_shortfall(400, 500, 0, False) == BELOW_OPENING
    assert bank_shortfall(400, 500, 0, True) == BANK_OK
    assert bank_shortfall(200, 500, 300, False) == BELOW_OPENING  # opening is named first
    assert bank_shortfall(200, 500, 300, True) == BELOW_MINIMUM
    assert bank_shortfall(-50, 0, 0, False) == BANK_OK  # no floor at all: even a negative claim
    assert bank_scores(400, 500, 0, False) == 0 and bank_scores(400, 500, 0, True) == 400
    assert bank_floor(500, 300, False) == 500 and bank_floor(350, 400, False) == 400
    assert bank_floor(500, 300, True) == 300


def test_bank_floor_is_what_bank_shortfall_lets_through():
    for opening, min_bank, opened in itertools.product((0, 350, 500, 1000), (0, 300, 400), (False, True)):
        floor = bank_floor(opening, min_bank, opened)
        for points in range(0, 1300, 50):
            assert (bank_shortfall(points, opening, min_bank, opened) == BANK_OK) == (points >= floor)


def test_opening_needs_a_bank_worth_the_threshold():
    assert not opened_after_bank(450, 500, 0, False)
    assert opened_after_bank(500, 500, 0, False)
    assert not opened_after_bank(600, 500, 700, False)  # below min_bank: worth nothing, not an opening
    assert opened_after_bank(0, 500, 0, True)  # once opened, opened
    assert opened_after_bank(0, 0, 0, False)  # no threshold


def test_farkle_penalty_on_the_third_and_sixth_not_the_fourth():
    """log-format.md, penalty: the penalty_after-th farkle in a row costs farkle_penalty and
    the streak starts again; a bank ends a streak."""
    streak, costs = 0, []
    for _ in range(7):
        costs.append(farkle_cost(streak, 500, 3))
        streak = streak_after_farkle(streak, 500, 3)
    assert costs == [0, 0, 500, 0, 0, 500, 0]
    assert streak_after_bank(2) == 0
    assert [farkle_cost(s, 0, 3) for s in range(6)] == [0] * 6  # no penalty knob
    assert streak_after_farkle(5, 0, 3) == 6  # without a penalty the count just goes on
    assert farkle_cost(0, 100, 1) == 100 and streak_after_farkle(0, 100, 1) == 0  # every farkle


def test_final_round_gives_every_other_player_one_more_turn():
    """log-format.md, game over: once the first to reach target has been followed by one turn
    of every other player. Three seats; seat 1 reaches it."""
    owed = [0, 0, 0]
    reached, left = final_round_step(0, 9000, 10000, NOBODY, owed, 0)
    assert (reached, left, game_over(reached, left, 0, NO_ROUND_LIMIT)) == (NOBODY, 0, False)
    reached, left = final_round_step(1, 10050, 10000, reached, owed, left)
    assert (reached, left, owed) == (1, 2, [1, 0, 1])
    reached, left = final_round_step(2, 12000, 10000, reached, owed, left)  # a higher total changes nothing
    assert (reached, left, owed, game_over(reached, left, 0, NO_ROUND_LIMIT)) == (1, 1, [1, 0, 0], False)
    reached, left = final_round_step(2, 12000, 10000, reached, owed, left)  # out of turn again: owed no more
    assert (reached, left) == (1, 1)
    reached, left = final_round_step(0, 9000, 10000, reached, owed, left)
    assert (reached, left, game_over(reached, left, 0, NO_ROUND_LIMIT)) == (1, 0, True)


def test_the_round_limit_ends_the_game_whichever_comes_first():
    """rules.md, `rounds`: over once every player has played `rounds` turns, or at the end
    of the final round that reaching the target starts, whichever comes first."""
    assert not game_over(NOBODY, 0, 9, NO_ROUND_LIMIT)
    assert not game_over(NOBODY, 0, 9, 10) and game_over(NOBODY, 0, 10, 10)
    assert game_over(0, 0, 3, 10)  # the final round came first
    assert not game_over(0, 1, 9, 10) and game_over(0, 1, 10, 10)  # the round limit came first
    owed = [0, 0]
    assert final_round_step(0, 10**9, NO_TARGET, NOBODY, owed, 0) == (NOBODY, 0)  # no target: never reached
    assert target_knob(None) == NO_TARGET and target_knob(500) == 500
    assert rounds_knob(None) == NO_ROUND_LIMIT and rounds_knob(7) == 7
    assert running_claim(750, 150) == 600 and running_claim(50, 150) == -100


def test_a_lone_player_is_over_on_reaching_the_target():
    owed = [0]
    reached, left = final_round_step(0, 10000, 10000, NOBODY, owed, 0)
    assert game_over(reached, left, 0, NO_ROUND_LIMIT)


def test_the_compiled_functions_are_the_same_functions():
    """The kernel calls these compiled by numba: compiled, they answer as in Python."""
    pytest.importorskip("numba")
    import numba
    import numpy as np

    from pipeline.replay.fast import compiled

    jitted = compiled.rebuild(vars(play), compiled.play_functions(), numba.njit(cache=False))
    for points, opening, min_bank, opened in itertools.product((-50, 0, 300, 500), (0, 500), (0, 300), (0, 1)):
        args = (points, opening, min_bank, opened)
        for name in ("bank_shortfall", "bank_scores", "opened_after_bank"):
            assert jitted[name](*args) == getattr(play, name)(*args), (name, args)
    for args in itertools.product(range(7), (0, 500), (1, 3)):
        for name in ("farkle_cost", "streak_after_farkle"):
            assert jitted[name](*args) == getattr(play, name)(*args), (name, args)
    for rolled, kept in itertools.product(range(7), range(7)):
        assert jitted["dice_to_roll"](rolled, kept) == dice_to_roll(rolled, kept)
    assert jitted["key_within"](200010, 300011) and not jitted["key_within"](200010, 100011)
    owed = np.zeros(3, np.int64)
    assert jitted["final_round_step"](1, 10050, 10000, NOBODY, owed, 0) == (1, 2)
    assert owed.tolist() == [1, 0, 1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_test_oracle_does_not_use_the_rules_of_play():
    """pipeline/simulate/check.py is the independent reading of log-format.md that the
    simulator proves its output with and the tests compare the engine against: it must write
    the rules out again itself, or agreement between it and the engine would mean nothing."""
    imported = _imports(ROOT / "pipeline" / "simulate" / "check.py")
    assert not any(name == "pipeline.rules.play" or name.startswith("pipeline.rules.play.") for name in imported)
    assert not any(name.startswith("pipeline.replay") for name in imported)


def test_the_compiled_kernel_is_recompiled_when_a_module_it_uses_changes():
    """numba's cache sees edits of kernel.py only; every other module the kernel imports
    must be in compiled.DEPENDENCIES, whose digest names the kernel's cache files."""
    from pipeline.replay.fast import compiled

    kernel_imports = {
        node.module
        for node in ast.walk(ast.parse((ROOT / "pipeline" / "replay" / "fast" / "kernel.py").read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline")
    }
    assert kernel_imports <= {m.__name__ for m in compiled.DEPENDENCIES}
    assert compiled.digest() is not None and len(compiled.digest()) == 16


def test_the_dice_key_weights_are_written_once():
    """play.FACE_WEIGHTS is the key's one definition in Python (sql/macros.sql holds the
    only other copy, tested above)."""
    found = []
    for path in (ROOT / "pipeline").rglob("*.py"):
        text = path.read_text()
        if "100000, 10000" in text or "100_000, 10_000" in text:
            found.append(path.relative_to(ROOT).as_posix())
    assert found == ["pipeline/rules/play.py"]

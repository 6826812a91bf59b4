"""`farkle-logs advise`: the winning chance of every choice at one moment of a two-player game."""

from __future__ import annotations

import json
from typing import Optional

import typer

from pipeline.cli.common import RULES_HELP, TextOrJson, rules_or_exit, stdout, usage_error
from pipeline.cli.main import app


def parse_scores(text: str) -> tuple[int, int]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
        usage_error(f"--scores must be two banked totals, the mover's first: A,B (e.g. 3500,6000), got {text!r}")
    a, b = int(parts[0]), int(parts[1])
    if a < 0 or b < 0:
        usage_error(f"--scores must be totals >= 0 (a farkle penalty is not modelled), got {text!r}")
    return a, b


def parse_roll(text: str) -> tuple[int, ...]:
    digits = [c for c in text if not c.isspace() and c != ","]
    if not digits or not all(c in "123456" for c in digits) or len(digits) > 6:
        usage_error(f"--roll must be 1 to 6 dice, faces 1..6 (e.g. 115234 or 1,1,5,2,3,4), got {text!r}")
    return tuple(int(c) for c in digits)


@app.command(short_help="Winning chance of every choice at one moment of a two-player game.")
def advise(
    scores: str = typer.Option(
        ..., "--scores", metavar="A,B", help="Banked totals: the player to move, then the other."
    ),
    rules: Optional[str] = typer.Option(None, "--rules", "-r", metavar="RULES", help=RULES_HELP),
    turn_points: int = typer.Option(
        0, "--turn-points", metavar="P", help="Points already in this turn (default 0: a turn start)."
    ),
    dice: Optional[int] = typer.Option(
        None, "--dice", metavar="N", help="Dice left to roll (default 6, or the roll's)."
    ),
    roll: Optional[str] = typer.Option(
        None, "--roll", metavar="DICE", help="The dice just rolled, e.g. 115234: judge every legal keep."
    ),
    format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", metavar="FORMAT", help="text or json."),
) -> None:
    """The player to move has banked A, the other B. Prints the mover's winning chance
    (win + half a tie, best play by both, two players), every choice with its chance and
    the best one; beside it, the single-turn view (expected points of this turn) when it
    would choose otherwise. With B at or past the target this is the final turn."""
    from pipeline.solved.tables import race
    from pipeline.strategy import solve
    from pipeline.strategy.advice import advise as advise_at
    from pipeline.strategy.solver import SolverBudgetError

    a, b = parse_scores(scores)
    dice_rolled = parse_roll(roll) if roll is not None else None
    n = dice if dice is not None else (len(dice_rolled) if dice_rolled else 6)
    ruleset = rules_or_exit(rules)
    solved = race(ruleset)  # RaceUnsolved: a user error, exit 2
    try:
        policy = solve(ruleset)
    except SolverBudgetError:
        policy = None
    advice = advise_at(solved, policy, a, b, turn_points, n, dice_rolled)  # AdviceError: exit 2
    if format is TextOrJson.json:
        stdout.print_json(json.dumps(advice_json(advice)))
        return
    for line in advice_lines(advice):
        stdout.line(line)


def advice_json(advice) -> dict:
    return {
        "rules": advice.rules_name,
        "scores": list(advice.scores),
        "turn_points": advice.turn_points,
        "dice": advice.dice,
        "roll": list(advice.roll) if advice.roll else None,
        "final_turn": advice.final_turn,
        "farkle": advice.farkle,
        "win_probability": advice.chance,
        "choices": [
            {
                "choice": c.kind,
                "dice": list(c.dice) if c.dice is not None else None,
                "turn_points_after": c.points_after,
                "dice_after": c.dice_after,
                "win_probability": c.chance,
                "best": c.best,
                "expected_turn_points": c.expected_points,
            }
            for c in advice.choices
        ],
        "best": advice.best.label() if advice.best else None,
        "single_turn_best": advice.single_turn_best,
        "model": advice.note,
    }


def advice_lines(advice) -> list[str]:
    a, b = advice.scores
    where = f"{a:,} against {b:,}" + (" (final turn: beat the leader's total)" if advice.final_turn else "")
    turn = f", {advice.turn_points:,} in the turn, {advice.dice} {'die' if advice.dice == 1 else 'dice'} to roll"
    lines = [
        f"[{advice.rules_name}] {where}{turn}" + (f", rolled {' '.join(map(str, advice.roll))}" if advice.roll else "")
    ]
    if advice.farkle:
        lines.append(f"farkle: nothing scores; winning chance after it {advice.chance:.3%}")
        return lines
    lines.append(f"winning chance {advice.chance:.3%} (best play by both, two players)")
    best = advice.best
    for c in advice.choices:
        loss = (best.chance - c.chance) * 100 if best else 0.0
        extra = "" if c.kind != "keep" else f" -> {c.points_after:,} in the turn, {c.dice_after} to roll"
        points = "" if c.expected_points is None else f"   single-turn {c.expected_points:,.1f} pts"
        mark = "best" if c.best else f"-{loss:.3f} pp"
        lines.append(f"  {c.label():<18} {c.chance:8.3%}  {mark:>11}{extra}{points}")
    if advice.differs():
        lines.append(
            f"the single-turn view (most expected points this turn) would {advice.single_turn_best}; "
            f"for the game, {best.label() if best else '-'} is better"
        )
    return lines

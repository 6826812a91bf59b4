"""`farkle-logs score`: what a keep is worth, and why."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from pipeline.cli.common import (
    EXIT_DATA,
    RULES_HELP,
    TextOrJson,
    rules_or_exit,
    stdout,
    usage_error,
)
from pipeline.cli.main import app


@app.command(short_help="What a keep is worth, and its best split.")
def score(
    dice: List[int] = typer.Argument(
        ..., metavar="DIE...", help="The kept dice, e.g. 1 1 1 5 (more than six to score a union)."
    ),
    rules: Optional[str] = typer.Option(None, "--rules", "-r", metavar="RULES", help=RULES_HELP),
    format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", metavar="FORMAT", help="text or json."),
) -> None:
    """Score a keep with the best split. Exit 1 when not every die can score."""
    from pipeline.rules import best_keep, keep_of
    from pipeline.rules.scoring import MAX_SCORED_DICE

    bad = [d for d in dice if not 1 <= d <= 6]
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        usage_error(f"dice must be 1..6, got {shown}")
    if len(dice) > MAX_SCORED_DICE:
        usage_error(
            f"{len(dice)} dice: at most {MAX_SCORED_DICE} can be scored at once "
            "(the most a cross-roll union of twelve keeps holds)"
        )
    ruleset = rules_or_exit(rules)
    keep = keep_of(dice, ruleset)
    best = None if keep else best_keep(dice, ruleset)
    non_scoring = _non_scoring(dice, ruleset) if keep is None else []
    if format is TextOrJson.json:
        stdout.print_json(
            json.dumps(
                {
                    "dice": sorted(dice),
                    "rules": ruleset.name,
                    "points": keep.points if keep else None,
                    "breakdown": keep.breakdown if keep else None,
                    "all_score": keep is not None,
                    "non_scoring": non_scoring,
                    "best_keep": (
                        {"dice": list(best.dice), "points": best.points, "breakdown": best.breakdown} if best else None
                    ),
                }
            )
        )
    else:
        shown = " ".join(map(str, sorted(dice)))
        if keep is not None:
            stdout.print(f"{shown}: {keep.points} = {keep.breakdown}  [{ruleset.name}]")
        else:
            why = (
                f"{' '.join(map(str, non_scoring))} score nothing"
                if non_scoring
                else "these dice cannot all score together"
            )
            advice = (
                f"best legal keep: {' '.join(map(str, best.dice))} = {best.points} ({best.breakdown})"
                if best
                else "no die scores: as a roll this is a farkle"
            )
            stdout.print(f"{shown}: not a legal keep, {why}  [{ruleset.name}]")
            stdout.line(advice, indent="  ")
    if keep is None:
        raise typer.Exit(EXIT_DATA)


def _non_scoring(dice: list[int], ruleset) -> list[int]:
    from pipeline.rules import scoring_dice

    usable = list(scoring_dice(dice, ruleset))
    rest = []
    for die in sorted(dice):
        if die in usable:
            usable.remove(die)
        else:
            rest.append(die)
    return rest

"""`farkle-logs rules`: list the built-in rulesets and show any ruleset in full."""

from __future__ import annotations

import json
from typing import Optional

import typer

from pipeline.cli.common import RULES_HELP, TextOrJson, note, rules_or_exit, stdout
from pipeline.cli.main import app, make_app
from pipeline.cli.text import plain_table, printable

rules_app = make_app(help="Rulesets: built-ins, knobs, scoring tables and exact farkle odds.")
app.add_typer(rules_app, name="rules", short_help="Rulesets: built-ins, knobs, scoring tables, odds.")


@rules_app.command("list")
def list_rules(
    format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", metavar="FORMAT", help="text or json."),
) -> None:
    """The built-in rulesets."""
    from pipeline.rules import BUILTIN_RULESETS
    from pipeline.rules.ruleset import BUILTIN_DESCRIPTIONS

    if format is TextOrJson.json:
        stdout.print_json(json.dumps([{"name": n, "description": BUILTIN_DESCRIPTIONS[n]} for n in BUILTIN_RULESETS]))
        return
    table = plain_table(("name", False), ("description", False), title="Built-in rulesets")
    for name in BUILTIN_RULESETS:
        table.add_row(name, BUILTIN_DESCRIPTIONS[name])
    stdout.print(table)
    stdout.print('Custom: {"base": "standard", "knob": value, ...} inline, or in a .json/.toml file.')


@rules_app.command("show", short_help="Knobs, scoring table, exact odds and solved turn.")
def show_rules(
    ruleset: Optional[str] = typer.Argument(None, metavar="RULES", help=RULES_HELP + " Default: standard."),
    format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", metavar="FORMAT", help="text or json."),
) -> None:
    """Every knob, the scoring table, the exact farkle odds for 1-6 dice and the solved turn
    (expected turn value, bank thresholds; a single-turn model)."""
    from pipeline.rules.describe import odds_rows, scoring_rows
    from pipeline.strategy import solve
    from pipeline.strategy.solver import SolverBudgetError

    rules = rules_or_exit(ruleset)
    odds = odds_rows(rules)
    try:
        strategy = solve(rules).headline()
    except SolverBudgetError as exc:  # everything else is still shown
        strategy = None
        note(str(exc))
    if format is TextOrJson.json:
        stdout.print_json(
            json.dumps(
                {
                    "name": rules.name,
                    "rules": rules.to_dict(),
                    "scoring": [{"combination": c, "points": p} for c, p in scoring_rows(rules)],
                    "farkle_odds": [
                        {
                            "dice": n,
                            "fraction": f"{p.numerator}/{p.denominator}",
                            "probability": float(p),
                        }
                        for n, p in odds
                    ],
                    "strategy": strategy,
                }
            )
        )
        return
    knobs = plain_table(("knob", False), ("value", False), title=f"Ruleset: {rules.name}")
    for name, value in rules.to_dict().items():
        knobs.add_row(printable(name), knob_text(value))
    scoring = plain_table(("combination (one roll)", False), ("points", True), title="Scoring")
    for combo, points in scoring_rows(rules):
        if points is None:
            shown = "two triples added up" if combo == "two triplets" else "not a combination"
        else:
            shown = f"{points:,}"
        scoring.add_row(combo, shown)
    odds_table = plain_table(
        ("dice", True), ("farkle probability", True), ("percent", True), ("1 in", True), title="Exact farkle odds"
    )
    for n, p in odds:
        odds_table.add_row(
            str(n), f"{p.numerator}/{p.denominator}", f"{float(p):.2%}", f"{1 / float(p):.1f}" if p else "never"
        )
    for table in (knobs, scoring, odds_table) + ((strategy_table(strategy),) if strategy else ()):
        stdout.print(table)
        stdout.print("")
    if strategy:
        stdout.print(f"Turn strategy figures: {strategy['model']}.")


def strategy_table(strategy: dict):
    """Expected turn value and bank thresholds, opened and not, of `Policy.headline()`."""
    table = plain_table(("", False), ("not opened", True), ("opened", True), title="Solved turn (single-turn model)")
    ev = strategy["expected_turn_value"]
    table.add_row("expected turn value (6 dice)", f"{ev['not_opened']:,.1f}", f"{ev['opened']:,.1f}")
    thresholds = strategy["bank_threshold"]
    for n in range(1, 7):
        cells = [thresholds[state][str(n)] for state in ("not_opened", "opened")]
        label = f"bank from, {n} {'die' if n == 1 else 'dice'} left" + (" (hot dice)" if n == 6 else "")
        table.add_row(label, *("never" if c is None else f"{c:,}" for c in cells))
    return table


def knob_text(value) -> str:
    """A knob's value as the other commands print values: names unquoted, none as '-'
    (a knob left to its rule), a table of runs as '12345 500, 23456 750'."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        value = list(value.items())
    if isinstance(value, (list, tuple)):
        parts = (
            " ".join(map(printable, item)) if isinstance(item, (list, tuple)) else printable(item) for item in value
        )
        return ", ".join(parts) or "-"
    return printable(value)

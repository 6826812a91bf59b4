"""`farkle-logs rules`: list the built-in rulesets and show any ruleset in full."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from pipeline.cli.common import RULES_HELP, TextOrJson, note, progress_bar, rules_or_exit, stdout, usage_error
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
    from pipeline.rules.describe import game_end_text, scoring_rows

    rules = rules_or_exit(ruleset)
    strategy, odds = turn_figures(rules)
    win = win_probability(rules)
    if format is TextOrJson.json:
        stdout.print_json(
            json.dumps(
                {
                    "name": rules.name,
                    "rules": rules.to_dict(),
                    "game_over": game_end_text(rules),
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
                    "win_probability": win,
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
    stdout.print(knobs)
    stdout.print(printable(f"The game is over {game_end_text(rules)}."), markup=False)
    for table in (scoring, odds_table) + ((strategy_table(strategy),) if strategy else ()):
        stdout.print(table)
        stdout.print("")
    if strategy:
        stdout.print(f"Turn strategy figures: {strategy['model']}.")
    if win:
        stdout.print(f"Two players: first player wins {win['first_player']:.3%} under best play by both, two players.")


def turn_figures(rules) -> tuple[dict | None, list]:
    """The solved turn's headline (None, with a note, past the solver's budget) and the exact
    farkle odds: a built-in's from the file shipped beside its table (the same figures, a test
    holds them equal), any other's worked out (solving the turn: about a second)."""
    from pipeline.solved.headline import shipped_turn

    shipped = shipped_turn(rules)
    if shipped is not None:
        return shipped
    from pipeline.rules.describe import odds_rows
    from pipeline.strategy import solve
    from pipeline.strategy.solver import SolverBudgetError

    odds = odds_rows(rules)
    try:
        return solve(rules).headline(), odds
    except SolverBudgetError as exc:  # everything else is still shown
        note(str(exc))
        return None, odds


def win_probability(rules) -> dict | None:
    """The first-player advantage (`Race.headline`): a built-in's from the file shipped beside
    its table (no numpy, no table read), any other's from its table, solving the ruleset on
    first use with a progress bar; None, with a note, when the two-player solver refuses it."""
    from pipeline.solved.headline import shipped_headline

    shipped = shipped_headline(rules)
    if shipped is not None:
        return shipped
    from pipeline.solved import tables as race_tables
    from pipeline.strategy.race import RaceUnsolved, refusal

    reason = refusal(rules)
    if reason is not None:
        note(reason)
        return None
    try:
        table = race_tables.load(rules)
        if table is None:
            with progress_bar("solving the two-player game") as advance:
                table = race_tables.load_or_solve(rules, _progress(advance))
    except RaceUnsolved as exc:  # pragma: no cover - refusal() said yes above
        note(str(exc))
        return None
    from pipeline.strategy.race import headline

    return headline(table)


def _progress(advance):
    state = {"done": 0}

    def report(done: int, total: int) -> None:
        advance(done - state["done"], total=total)
        state["done"] = done

    return report


@rules_app.command("solve", short_help="Solve the two-player game of a ruleset and store its table.")
def solve_rules(
    ruleset: str = typer.Argument(..., metavar="RULES", help=RULES_HELP),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        metavar="PATH",
        help="Write the table here: a regular file or a new name in an existing folder (default: the package "
        "data for a built-in, else the cache).",
    ),
) -> None:
    """Solve both players' winning chances at every turn start of RULES (a progress bar on a
    terminal) and write the table: a built-in's into the package (the file shipped with
    farkle-logs), any other ruleset into the user's cache, or to --out."""
    import time

    from pipeline.solved import tables as race_tables
    from pipeline.solved.headline import sidecar, sidecar_path
    from pipeline.stats.cache import write_atomically
    from pipeline.strategy import race

    rules = rules_or_exit(ruleset)
    race.check(rules)  # RaceUnsolved: a user error, exit 2
    if out is not None:
        from pipeline.files import check_output_path

        check_output_path(out)  # before the work: a device, a link, a missing folder (exit 2)
        check_output_path(sidecar_path(out))  # the headline written beside it
    started = time.perf_counter()
    with progress_bar("solving the two-player game") as advance:
        table = race.solve_table(rules, _progress(advance))
    elapsed = time.perf_counter() - started
    name = race_tables.shipped_name(rules)
    path = out or (race_tables.shipped_path(name) if name else race_tables.cache_path(rules))
    if path is None:
        usage_error("the cache is off (FARKLE_LOGS_CACHE_DIR=off): say where to write the table with --out")
    # the table, and beside it its headline (what `rules show` reads of a built-in)
    head = sidecar_path(path)
    written = [(path, race_tables.encode(table)), (head, sidecar(rules, race.headline(table)))]
    for target, data in written:
        write_atomically(target, data)
        try:
            target.chmod(0o644)  # readable by everyone, as the rest of the package
        except OSError:
            pass
        if not target.exists() or target.read_bytes() != data:
            usage_error(f"{target}: could not write it")
    stdout.line(
        f"{rules.name}: first player wins {table.w[0, 0]:.3%} under best play by both, two players "
        f"({table.w.shape[0]:,} x {table.w.shape[0]:,} turn starts, fixed-point bound {table.bound:.1e}, "
        f"{elapsed:.1f} s); wrote {path} and {head.name}"
    )


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

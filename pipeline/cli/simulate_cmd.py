"""`farkle-logs simulate`: bots play complete games; optionally plant errors with a manifest."""

from __future__ import annotations

import os
import time
from typing import List, Optional

import typer

from pipeline.cli.common import RULES_HELP, progress_bar, rules_or_exit, stderr, usage_error
from pipeline.cli.main import app


# The bots' names, written out so that --help needs no import of the simulator;
# tests/test_cli_conventions.py checks they are pipeline.simulate.BOT_NAMES.
BOTS_HELP = "threshold, cautious, greedy, keep_all, keep_min, optimal, winprob"


@app.command("simulate", short_help="Bots play complete games, written as a JSONL log.")
def simulate_cmd(
    games: Optional[int] = typer.Option(None, "--games", "-n", metavar="N", help="Number of games to play."),
    players: str = typer.Option(
        "2-4",
        "--players",
        "-p",
        metavar="N|LO-HI",
        help="Players per game: a number or a range such as 2-6 (drawn per game).",
    ),
    rules: Optional[List[str]] = typer.Option(
        None, "--rules", "-r", metavar="RULES", help=RULES_HELP + " Repeat to mix rulesets across games."
    ),
    seed: Optional[int] = typer.Option(
        None,
        "--seed",
        "-s",
        metavar="N",
        help="Seed (>= 0): same seed, same bytes. Default: a random seed, printed on stderr.",
    ),
    out: str = typer.Option(
        "-",
        "--out",
        "-o",
        metavar="FILE",
        help="Output file (.gz: gzip; a regular file or a new name in an existing folder) or - for stdout.",
    ),
    tables: int = typer.Option(
        1,
        "--tables",
        metavar="N",
        help="Games in play at once (at most 1,000); their lines interleave by time (1: one game after another).",
    ),
    inject: float = typer.Option(
        0.0, "--inject", metavar="SHARE", help="Share of games (0..1) that get one planted error."
    ),
    inject_codes: Optional[str] = typer.Option(
        None,
        "--inject-codes",
        metavar="CODE,...",
        help="Comma-separated finding codes to plant (default: all injectable).",
    ),
    manifest: Optional[str] = typer.Option(
        None,
        "--manifest",
        metavar="FILE",
        help="Write the planted errors' ground truth here (JSONL; CSV if it ends in .csv).",
    ),
    bots: Optional[str] = typer.Option(
        None,
        "--bots",
        metavar="BOT,...",
        help=f"Comma-separated bot strategies to draw from: {BOTS_HELP} (default: all but optimal and winprob).",
    ),
    running_totals: float = typer.Option(
        0.0,
        "--running-totals",
        metavar="SHARE",
        help="Share of games (0..1) whose keeps give the turn's running total (turn_points), as many apps print it.",
    ),
    abandon: float = typer.Option(
        0.0,
        "--abandon",
        metavar="SHARE",
        help='Share of games (0..1) stopped early, ending with a game_end of "reason": "abandoned".',
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
    samples: Optional[str] = typer.Option(
        None,
        "--samples",
        metavar="DIR",
        help="Instead of --games: write the curated sample logs into DIR (the repository's sample_logs/, "
        "byte for byte, the disputed game's scoresheet included).",
    ),
) -> None:
    """Play complete games with bots and write them as a JSONL log (see docs/simulate.md)."""
    from pipeline.model import FINDING_CODES
    from pipeline.simulate import BOT_NAMES, DEFAULT_BOTS, INJECTABLE, NOT_INJECTABLE, parse_players, simulate

    if samples is not None:
        _write_samples(samples, games, quiet)
        return
    if games is None:
        usage_error("--games N is needed (or --samples DIR for the curated sample logs)")
    if games < 0:
        usage_error("--games must be >= 0")
    from pipeline.simulate.run import MAX_TABLES

    if not 1 <= tables <= MAX_TABLES:
        usage_error(f"--tables must be 1 to {MAX_TABLES:,} (each game in play is held in memory), got {tables:,}")
    span = parse_players(players)
    rulesets = [rules_or_exit(r) for r in rules] if rules else [rules_or_exit(None)]
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "big")
        stderr.print(f"seed: {seed} (pass --seed {seed} to repeat this run)")
    elif seed < 0:
        usage_error("--seed must be >= 0")
    if not 0.0 <= inject <= 1.0:
        usage_error(f"--inject is a share of games between 0 and 1, got {inject}")
    if not 0.0 <= running_totals <= 1.0:
        usage_error(f"--running-totals is a share of games between 0 and 1, got {running_totals}")
    if not 0.0 <= abandon <= 1.0:
        usage_error(f"--abandon is a share of games between 0 and 1, got {abandon}")
    codes = list(INJECTABLE)
    if inject_codes is not None:
        codes = [c.strip() for c in inject_codes.split(",") if c.strip()]
        for code in codes:
            if code in NOT_INJECTABLE:
                usage_error(f"{code} cannot be injected: {NOT_INJECTABLE[code]}")
            if code not in INJECTABLE:
                hint = "finding codes are " + ", ".join(c for c in FINDING_CODES if c in INJECTABLE)
                usage_error(f"unknown finding code {code!r}: {hint}")
    if manifest is not None and inject == 0:
        usage_error("--manifest needs --inject RATE > 0 (nothing would be planted)")
    if (inject_codes is not None) and inject == 0:
        usage_error("--inject-codes needs --inject RATE > 0")
    names = list(DEFAULT_BOTS)
    if bots is not None:
        names = [b.strip() for b in bots.split(",") if b.strip()]
        unknown = [b for b in names if b not in BOT_NAMES]
        if unknown or not names:
            usage_error(f"unknown bot {', '.join(unknown) or '(none)'}: bots are {', '.join(BOT_NAMES)}")
    if out != "-" and os.path.isdir(out) and not os.path.islink(out):
        usage_error(f"--out {out} is a directory: give a file name such as {out.rstrip('/')}/games.jsonl")
    from pipeline.files import check_output_path

    for path in ([out] if out != "-" else []) + ([manifest] if manifest is not None else []):
        check_output_path(path)  # before the work: a device, a link, a missing folder (exit 2)

    started = time.perf_counter()
    try:
        with progress_bar("simulating", total=games, unit="games") as advance:
            summary = simulate(
                out,
                games,
                seed,
                rules=rulesets,
                players=span,
                inject_rate=inject,
                inject_codes=codes,
                manifest=manifest,
                bots=names,
                on_game=lambda _i: advance(),
                tables=tables,
                running_totals=running_totals,
                abandon=abandon,
            )
    except BrokenPipeError:  # `simulate ... | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        raise typer.Exit(0) from None
    except OSError as exc:
        usage_error(f"cannot write {exc.filename or out}: {exc.strerror or exc}")
    elapsed = time.perf_counter() - started
    if inject_codes is not None:  # asked for by name: say why it is missing from the manifest
        for code, why in summary.unavailable.items():
            stderr.print(f"warning: {code} not injected: {why}")
    if quiet:
        return
    from pipeline.cli.text import plural, rate

    speed = rate(summary.events, elapsed)
    stderr.print(
        f"{plural(summary.games, 'game')}, {plural(summary.events, 'event')} in {elapsed:.2f} s"
        + (f" ({speed[2:]})" if speed else "")
        + (f" ({plural(summary.abandoned, 'game')} abandoned)" if abandon > 0 else "")
        + (f" → {out}" if out != "-" else ""),
        markup=False,
    )
    if inject > 0:
        planted = sum(summary.injected.values())
        stderr.print(
            f"planted {plural(planted, 'finding')}: "
            + ", ".join(f"{c} {n}" for c, n in sorted(summary.injected.items()))
            + (f" → {manifest}" if manifest else " (no --manifest: ground truth not written)"),
            markup=False,
        )


def _write_samples(directory: str, games: int | None, quiet: bool) -> None:
    """The sample logs into `directory` (created if missing)."""
    from pathlib import Path

    from pipeline.simulate.samples import build

    if games is not None:
        usage_error("--samples writes the curated logs: it takes no --games")
    path = Path(directory)
    if path.exists() and not path.is_dir():
        usage_error(f"--samples {directory} is a file: give a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        build(path)
    except OSError as exc:
        usage_error(f"cannot write {exc.filename or directory}: {exc.strerror or exc}")
    if not quiet:
        names = sorted(p.name for p in path.iterdir() if p.is_file())
        stderr.print(f"{len(names)} sample files in {directory}: {', '.join(names)}")

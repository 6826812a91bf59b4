"""`farkle-logs warm`: compile the fast paths now, at a moment the user expects to wait."""

from __future__ import annotations

import typer

from pipeline.cli.common import EXIT_OK, stderr, stdout
from pipeline.cli.main import app


@app.command(short_help="Compile the fast scanner, replay kernel and judge now (once per install).")
def warm() -> None:
    """Compile with numba now, instead of during the first large ingest or audit or the
    first judging of two-player games: the fast scanner, the replay kernel and the
    two-player judge. Inputs under a few MiB never need the first two; `make install` and
    `make demo` run this. Compiled code is kept in numba's cache (next to the sources, or
    under NUMBA_CACHE_DIR), so this compiles once per install and then only loads it.

    Exit 0.
    """
    from pipeline.engines import NO_JIT, Routing
    from pipeline.ingest import warm as warming

    if not Routing.from_environment().jit:
        stdout.line(f"{NO_JIT} is set: the fast paths run as plain Python, nothing to compile")
        raise typer.Exit(EXIT_OK)
    say = "compiling the fast scanner, replay kernel and two-player judge (once per install), one moment ..."
    with warming.first_compile(lambda: stderr.print(say)) as compiled:
        warming.warm()
        _warm_two_player_judge()
    stdout.line(
        "compiled the fast scanner, replay kernel and two-player judge: later runs load them"
        if compiled
        else "the fast scanner, replay kernel and two-player judge were compiled already (loaded from numba's cache)"
    )
    raise typer.Exit(EXIT_OK)


def _warm_two_player_judge() -> None:
    """What judges two-player games, run for real on one simulated game in a scratch folder
    (numba compiles per argument type: the real calls compile what later runs call): the
    bulk judge of `stats --section decisions-quality` and the report, and one turn's
    winning chances as `audit --coach` and `advise` read them."""
    import tempfile
    from pathlib import Path

    from pipeline.ingest import ingest
    from pipeline.rules import Ruleset
    from pipeline.simulate import simulate
    from pipeline.solved import tables as race_tables
    from pipeline.stats import compute
    from pipeline.strategy.race import refusal

    rules = Ruleset.builtin("standard")
    if refusal(rules) is not None or race_tables.load(rules) is None:  # pragma: no cover - shipped
        return
    with tempfile.TemporaryDirectory(prefix="farkle-logs-warm-") as tmp:
        log = Path(tmp) / "warm.jsonl"
        simulate(log, 1, 1, players=(2, 2))
        ingest([str(log)], Path(tmp) / "dataset", workers=1)
        compute(Path(tmp) / "dataset", sections=["decisions-quality"])
    view = race_tables.race(rules).turn(0, 0)
    view.roll(0, 6)

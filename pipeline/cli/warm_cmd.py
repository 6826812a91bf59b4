"""`farkle-logs warm`: compile the fast paths now, at a moment the user expects to wait."""

from __future__ import annotations

import typer

from pipeline.cli.common import EXIT_OK, stderr, stdout
from pipeline.cli.main import app


@app.command(short_help="Compile the fast scanner and replay kernel now (once per install).")
def warm() -> None:
    """Compile the fast scanner and the replay kernel with numba now, instead of during the
    first large ingest or audit. Inputs under a few MiB never need them; `make install` and
    `make demo` run this. Compiled code is kept in numba's cache (next to the sources, or
    under NUMBA_CACHE_DIR), so this compiles once per install and then only loads it.

    Exit 0.
    """
    from pipeline.engines import NO_JIT, Routing
    from pipeline.ingest import warm as warming

    if not Routing.from_environment().jit:
        stdout.line(f"{NO_JIT} is set: the fast paths run as plain Python, nothing to compile")
        raise typer.Exit(EXIT_OK)
    compiled = warming.ready(on_compile=lambda: stderr.print(f"{warming.WHAT}, one moment ..."))
    stdout.line(
        "compiled the fast scanner and replay kernel: later ingests and audits load them"
        if compiled
        else "the fast scanner and replay kernel were compiled already (loaded from numba's cache)"
    )
    raise typer.Exit(EXIT_OK)

"""The console script's entry point: run the command, then turn whatever escaped it into one
message and an exit code. No input or dataset state may end in a bare Python traceback
(docs/reliability.md, "Exit codes"):

- a known error (damaged or foreign dataset, unusable output path, bad ruleset or input)
  that a command did not catch: `error: ...`, exit 2;
- a full disk, a read-only or forbidden path: `error: PATH: cause`, exit 2;
- standard output that cannot be written (`> /dev/full`): `error: cannot write output:
  No space left on device`, exit 2; a reader that closed the pipe early (`| head`): quiet,
  exit 141, what a shell reports for a process stopped by SIGPIPE;
- Ctrl-C: exit 130; SIGTERM (`timeout`, `kill`, systemd, docker stop) is handled the same
  way (what a command removes or closes on Ctrl-C, it removes on SIGTERM), exit 143;
- anything else is a bug: a one-line header asking for a report, then the traceback,
  exit 70 (EX_SOFTWARE of sysexits.h).

Commands are tested through Typer's CliRunner, which bypasses this module; tests of this
module run the console script in a subprocess.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import traceback
from typing import Any

EXIT_USAGE = 2
EXIT_BUG = 70
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a shell reports for a process it stopped
EXIT_PIPE_CLOSED = 141
BUG_HEADER = "farkle-logs hit a bug; please report it with the command you ran"

# Errors of the machine, not of farkle-logs: the path and the cause say all there is to say.
ENVIRONMENT_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EIO,
        errno.EFBIG,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOMEM,
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.ENXIO,
        errno.ESTALE,
    }
)


class OutputError(Exception):
    """Standard output could not be written. Not an OSError on purpose: a command's own
    `except OSError` (about its input or output files) must not swallow it."""

    def __init__(self, cause: OSError):
        super().__init__(os.strerror(cause.errno) if cause.errno else str(cause))
        self.cause = cause

    @property
    def pipe_closed(self) -> bool:
        return isinstance(self.cause, BrokenPipeError) or self.cause.errno == errno.EPIPE


class _Guarded:
    """A stream whose write errors become OutputError; everything else is the stream's."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, data: Any) -> Any:
        try:
            return self._stream.write(data)
        except OSError as exc:
            raise OutputError(exc) from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputError(exc) from None

    @property
    def buffer(self) -> "_Guarded":
        return _Guarded(self._stream.buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, like Ctrl-C's KeyboardInterrupt: every `finally`
    and `except BaseException` that cleans up after Ctrl-C (an ingest's staging files and
    worker processes) cleans up after it too."""


_terminated = False  # SIGTERM arrived (Typer turns the KeyboardInterrupt into exit 130)


def _on_sigterm(signum: int, frame: Any) -> None:
    global _terminated
    _terminated = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one must not cut the cleanup short
    raise Terminated


AS_PROGRAM = False  # True when main() runs: this process is the farkle-logs program, nothing else


def main() -> None:
    """`farkle-logs ...` (pyproject's console script) and `python -m pipeline.cli`."""
    global AS_PROGRAM, _skip_teardown
    AS_PROGRAM = True
    _skip_teardown = False  # only a command of this very call may ask (not one run earlier in-process)
    signal.signal(signal.SIGTERM, _on_sigterm)
    real_stdout = sys.stdout
    if real_stdout is not None:
        sys.stdout = _Guarded(real_stdout)
    code = _run()
    sys.stdout = real_stdout
    if _skip_teardown and code in (0, 1):  # anything else ends the usual way
        _end_now(code)
    sys.exit(code)


_skip_teardown = False


def skip_teardown() -> None:
    """A command whose output is written and whose files are closed (audit, ingest, stats) asks main() to
    end the process without the interpreter's teardown: freeing every object one by one
    (an audit's games, numba's compiled code, Arrow's pools) costs wall time after the
    last byte is out. The atexit functions still run (multiprocessing's children,
    weakref finalizers such as temporary directories, logging)."""
    global _skip_teardown
    _skip_teardown = True


def _end_now(code: int) -> None:
    import atexit

    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # pragma: no cover - _run flushed stdout already
        sys.exit(code)
    os._exit(code)


def _run() -> int:
    try:
        try:
            from pipeline.cli.main import app

            app(prog_name="farkle-logs")
            code = 0
        except SystemExit as exit_:
            code = _exit_code(exit_)
        if _terminated and code == EXIT_INTERRUPTED:
            code = EXIT_TERMINATED
        sys.stdout.flush()  # output still buffered must reach its file, or say why not
        return code
    except OutputError as exc:
        _silence_stdout()
        if exc.pipe_closed:
            return EXIT_PIPE_CLOSED
        _error(f"cannot write output: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        _silence_stdout()
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except Exception as exc:  # the last line of defence: see the module docstring
        _silence_stdout()
        message = _known_error(exc)
        if message is not None:
            _error(message)
            return EXIT_USAGE
        _error(BUG_HEADER)
        _error(traceback.format_exc().rstrip("\n"), prefix="")
        return EXIT_BUG


def _exit_code(exit_: SystemExit) -> int:
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code
    _error(str(exit_.code), prefix="")
    return 1


def _known_error(exc: BaseException) -> str | None:
    """The one-line message of an error that is not a bug, or None."""
    from pipeline.dataset.store import describe_os_error
    from pipeline.errors import UserError

    if isinstance(exc, UserError):  # a command's are caught by cli.common.user_errors: this is outside one
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
        return describe_os_error(exc, "(a file)")
    if type(exc).__module__.startswith("duckdb") and "No space left on device" in str(exc):
        return "DuckDB's temporary files: No space left on device"
    return None


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's last flush of what is
    still buffered cannot fail again (and print "Exception ignored ...")."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.close(fd)
    except OSError:
        pass


def _error(message: str, prefix: str = "error: ") -> None:
    try:
        sys.stderr.write(f"{prefix}{message}\n")
        sys.stderr.flush()
    except OSError:
        pass  # stderr is gone too: the exit code is all that is left

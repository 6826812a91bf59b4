"""Writing files without following a planted symlink or replacing what a path is.

Two kinds of write, each with one rule:

- A file a command is asked to write (`report -o`, `simulate --out`, `--manifest`) may be a
  regular file, which is replaced, or a new name in a folder that exists. A symlink, a
  device (`/dev/full`), a FIFO, a directory or a missing folder is an `OutputPathError`
  (exit 2, one line) before anything is written: renaming a page over `/dev/full` as root
  turns the device into a file, and over a symlink replaces the link; creating missing
  folders hides a typo.
- A file the program writes in a folder of its own (the dataset's pointer and manifests)
  goes to a temporary file created exclusively in that folder (`O_CREAT | O_EXCL |
  O_NOFOLLOW`, under a random name), then renamed over its target: a symlink planted at a
  predictable temporary name (`_current.json.tmp` -> `~/.bashrc`) is never opened.

No imports of ours: every stage may use it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from pipeline.errors import UserError


class OutputPathError(UserError):
    """A path a command was asked to write that is not a regular file or a new name in an
    existing folder."""


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """`path` if a command may write it (see the module docstring), else OutputPathError
    naming the path and what it is."""
    target = Path(path)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise OutputPathError(f"cannot write {target}: {exc.strerror or exc}") from None
    if info is not None:
        kind = _kind(info.st_mode)
        if kind is not None:
            raise OutputPathError(f"cannot write {target}: it is {kind}; give a regular file or a new name")
        return target
    parent = target.parent
    try:
        parent_info = os.stat(parent)
    except FileNotFoundError:
        raise OutputPathError(f"cannot write {target}: the folder {parent} does not exist; create it first") from None
    except OSError as exc:
        raise OutputPathError(f"cannot write {target}: {parent}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(parent_info.st_mode):
        raise OutputPathError(f"cannot write {target}: {parent} is not a folder")
    return target


def _kind(mode: int) -> str | None:
    """What a path that must not be written is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link (name the file it points to, if that is what you mean)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_output(path: str | os.PathLike[str]) -> IO[bytes]:
    """A checked output path opened for writing (truncated), for output written as it is
    made. Opened without following a symlink, and refused after opening if it is not a
    regular file (a path swapped between the check and the open)."""
    target = check_output_path(path)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags, 0o666)
    except OSError as exc:
        raise OutputPathError(f"cannot write {target}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OutputPathError(f"cannot write {target}: it is {_kind(info.st_mode)}; give a regular file or a new name")
    os.set_blocking(fd, True)
    os.ftruncate(fd, 0)
    return os.fdopen(fd, "wb")


@contextmanager
def replacing(path: str | os.PathLike[str], *, mode: int = 0o644, sync: bool = False) -> Iterator[IO[bytes]]:
    """A new file written whole, then renamed over `path`; removed if the block fails.

    The temporary file is created exclusively next to `path` (never a name that exists, never
    through a symlink). `sync`: fsync before the rename (a commit point). The caller checks
    `path` itself when it comes from a user (`check_output_path`)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            if sync:
                os.fsync(out.fileno())
        os.chmod(tmp, mode)  # mkstemp makes it 0600
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

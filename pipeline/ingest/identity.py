"""Which source each input of a run is, and the name its rows carry (docs/dataset.md, "Which
file is which"; the dataset's side, what its manifest records, is pipeline.dataset.sources).

A regular file is known by its resolved absolute path: the same file named from another
folder, through a symlink or as `/dev/fd/3` is the same source; another file that happens
to have the same name (the log of another day in another folder, typed the same way) is
another. A stream (stdin, a pipe, a FIFO, `<(zcat ...)`) has no path that names the same
bytes twice: each reading is a source of its own, unless `--name NAME` names it; then it is
the source NAME, and the next reading under that name is that source read again, as for a
file.

Rows carry the name the user typed when the source first came, or its resolved path when
the dataset holds another source under that name already. A source read again keeps the
name it was first stored under, so its stored lines are found and compared with the new
reading (duplicates, superseded lines: pipeline.ingest.incremental).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pipeline.dataset.sources import FILE, STREAM, UNNAMED, Catalog, describe_key, is_stream_name, reading_key
from pipeline.errors import UserError
from pipeline.reader.inputs import InputSource

__all__ = ["FILE", "STREAM", "Catalog", "Identity", "StreamNameError", "check_stream_name", "identify"]


class StreamNameError(UserError):
    """`--name` cannot name the stream as asked."""


@dataclass
class Identity:
    """What this run knows one input as."""

    key: str
    name: str  # the name its rows carry
    names: tuple[str, ...]  # every name the dataset holds its rows under (a source read again)
    kind: str
    resolved: str | None = None
    stream_name: str | None = None

    @property
    def reread(self) -> bool:
        return bool(self.names)

    def manifest_keys(self) -> dict[str, Any]:
        keys: dict[str, Any] = {"kind": self.kind}
        if self.kind == FILE:
            keys["resolved"] = self.resolved
        else:
            keys["stream_name"] = self.stream_name
        return keys


def check_stream_name(sources: list[InputSource], stream_name: str | None) -> None:
    """StreamNameError unless `--name` can name the one stream among the inputs."""
    if stream_name is None:
        return
    streams = [s.name for s in sources if s.is_stream]
    if len(streams) != 1:
        found = f"there are {len(streams)}: {', '.join(streams)}" if streams else "there is none"
        raise StreamNameError(
            f"--name {stream_name}: names the one stream among the inputs (- for stdin, or a pipe), and {found}"
        )
    if not stream_name.strip() or is_stream_name(stream_name) or "\0" in stream_name:
        raise StreamNameError(f"--name {stream_name!r}: give a name of your own for the stream, such as nightly.jsonl")


def identify(
    sources: list[InputSource], catalog: Catalog, ingest_id: str, stream_name: str | None = None
) -> tuple[list[Identity], list[str]]:
    """Each input's identity and the name its rows carry, and notes for the user (a file
    stored under its resolved path because its name is taken). Raises StreamNameError when
    `--name` names a name another source holds."""
    check_stream_name(sources, stream_name)
    taken = dict(catalog.holder)
    out: list[Identity] = []
    notes: list[str] = []
    for source in sources:
        typed = source.name
        if source.is_stream and stream_name is not None:
            key = f"stream:{stream_name}"
            holder = taken.get(stream_name)
            if holder is not None and holder != key:
                raise StreamNameError(
                    f"--name {stream_name}: the dataset holds another source under this name "
                    f"({describe_key(holder)}); choose another name"
                )
            identity = Identity(key, stream_name, tuple(catalog.names.get(key, ())), STREAM, stream_name=stream_name)
        elif source.is_stream:
            name = typed if taken.get(typed, UNNAMED) == UNNAMED else f"{typed} (stream {ingest_id})"
            identity = Identity(reading_key(name, ingest_id), name, (), STREAM)
        else:
            resolved = source.resolved or os.path.abspath(typed)
            key = f"file:{resolved}"
            stored = tuple(catalog.names.get(key, ()))
            if stored:
                name = stored[0]
            else:
                name = _free_name(typed, resolved, taken)
                if name != typed:
                    why = (
                        f"the dataset holds another source under this name ({describe_key(taken[typed])})"
                        if typed in taken
                        else "a stream's name"
                    )
                    notes.append(f"{typed}: {why}; this file's rows are stored under {name}")
            identity = Identity(key, name, stored, FILE, resolved=resolved)
        taken[identity.name] = UNNAMED if identity.key.startswith("reading:") else identity.key
        out.append(identity)
    return out, notes


def _free_name(typed: str, resolved: str, taken: dict[str, str]) -> str:
    """The name a new file's rows carry: as typed, else its resolved path, else that
    numbered (a name another source holds never serves two)."""
    if typed not in taken and not is_stream_name(typed):
        return typed
    if resolved not in taken:
        return resolved
    n = 2
    while f"{resolved} ({n})" in taken:
        n += 1
    return f"{resolved} ({n})"

"""The sources a dataset's rows come from, as its manifest records them (docs/dataset.md,
"Which file is which"; pipeline.ingest.identity gives each input of a run its identity).

A source is a regular file, known by its resolved absolute path, or a stream: a reading of
one (stdin, a pipe) is a source of its own unless `--name` named it. A manifest's `files`
entry is one reading of a source: `kind` (file or stream), `resolved` (a file's path) or
`stream_name`, and `path`, the name the source's rows carry (`events.source_file`,
`rejects.file`, `findings.file`), one name per source. Entries written before sources had
identities (no `kind`) are read this way: `<stdin>`, `/dev/stdin` and `/dev/fd/N` are stream
readings; any other path is the file it names from the folder the command runs in now,
unless a later entry recorded which file that name is.

Each reading also records the size and sha256 of its bytes as stored and of its
decompressed content (`content_bytes`, `content_sha256`), so an input whose content a
source holds already can be told apart from a new one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from pipeline.reader.inputs import STDIN_NAME

FILE, STREAM = "file", "stream"
UNNAMED = "\0unnamed stream"  # what holds the name of every unnamed stream reading
_FD_PATH = re.compile(r"^/(dev|proc/[^/]+)/fd/")


def is_stream_name(name: str) -> bool:
    """A name only a stream has: stdin, or a descriptor's path (process substitution)."""
    return name in (STDIN_NAME, "/dev/stdin") or bool(_FD_PATH.match(name))


def reading_key(name: str, ingest_id: str) -> str:
    """The key of an unnamed stream's reading: each is a source of its own."""
    return f"reading:{name}\0{ingest_id}"


def entry_key(entry: dict[str, Any], recorded: dict[str, str] | None = None) -> str:
    """The source a manifest entry is a reading of (see the module docstring)."""
    path = str(entry.get("path"))
    kind = entry.get("kind")
    if kind == FILE and isinstance(entry.get("resolved"), str):
        return f"file:{entry['resolved']}"
    if kind == STREAM:
        name = entry.get("stream_name")
        return f"stream:{name}" if isinstance(name, str) else reading_key(path, str(entry.get("ingest_id")))
    if recorded and path in recorded:  # written before identities: a later entry says which
        return recorded[path]
    if is_stream_name(path):
        return reading_key(path, str(entry.get("ingest_id")))
    return f"file:{os.path.realpath(path)}"


def describe_key(key: str) -> str:
    """A source's key as words."""
    if key.startswith("file:"):
        return key[len("file:") :]
    if key.startswith("stream:"):
        return f"the stream named {key[len('stream:') :]}"
    return "a stream read before"


def digests(entry: dict[str, Any]) -> list[tuple[int, str]]:
    """(size, sha256) of a reading's stored bytes and of its content, those recorded."""
    found = []
    for size, sha in (
        (entry.get("size"), entry.get("sha256")),
        (entry.get("content_bytes"), entry.get("content_sha256")),
    ):
        if isinstance(size, int) and isinstance(sha, str):
            found.append((size, sha))
    return found


@dataclass
class Catalog:
    """The sources a dataset holds, from its manifest's `files` entries."""

    names: dict[str, list[str]] = field(default_factory=dict)  # source key -> its names, first first
    holder: dict[str, str] = field(default_factory=dict)  # name -> the source key holding it
    unnamed: set[str] = field(default_factory=set)  # names of unnamed stream readings
    contents: dict[tuple[int, str], tuple[str, str]] = field(default_factory=dict)  # digest -> (key, name)

    @classmethod
    def of(cls, files: Iterable[dict[str, Any]]) -> "Catalog":
        files = list(files)
        recorded: dict[str, str] = {}
        for entry in files:
            if entry.get("kind") in (FILE, STREAM):
                recorded.setdefault(str(entry["path"]), entry_key(entry))
        catalog = cls()
        latest: dict[str, dict[str, Any]] = {}
        for entry in files:
            key = entry_key(entry, recorded)
            name = str(entry["path"])
            names = catalog.names.setdefault(key, [])
            if name not in names:
                names.append(name)
            if key.startswith("reading:"):
                catalog.unnamed.add(name)
                catalog.holder.setdefault(name, UNNAMED)
            else:
                catalog.holder.setdefault(name, key)
            latest[key] = entry  # an earlier reading of a source that changed was superseded
        for key, entry in latest.items():
            for digest in digests(entry):
                catalog.contents.setdefault(digest, (key, str(entry["path"])))
        return catalog


def source_key_sql(unnamed: str = "unnamed") -> str:
    """SQL of a row's source, for an events row `e` (the table `unnamed` lists the names of
    unnamed stream readings): its name, and for a stream reading its ingest too."""
    return (
        f"case when e.source_file in (select name from {unnamed}) "
        "then e.source_file || chr(0) || e.ingest_id else e.source_file end"
    )


def source_key(name: str, ingest_id: str, unnamed: Iterable[str] = (STDIN_NAME,)) -> str:
    """Which source a row belongs to, from the name it carries: one name, one source, but
    each reading of an unnamed stream (its name in `unnamed`) is a source of its own, known
    by its ingest too. (The same in SQL: `source_key_sql`.)"""
    return f"{name}\0{ingest_id}" if name in unnamed else name


def replay_order(files: Iterable[dict[str, Any]], unnamed: Iterable[str]) -> dict[str, int]:
    """The position of each source (`source_key`) in replay order: by first appearance in the
    manifest's `files`."""
    unnamed = set(unnamed)
    order: dict[str, int] = {}
    for entry in files:
        order.setdefault(source_key(str(entry["path"]), str(entry["ingest_id"]), unnamed), len(order))
    return order

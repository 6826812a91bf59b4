"""Which bytes to read: turn command-line specs into an ordered list of input sources.

A spec is a file, a directory, a glob or `-` (stdin). Order matters because a game spread
over several files is replayed in the order they are read, so the order is always the one
the user wrote, with a directory's files and a glob's matches in name order.

A bad spec must not hide the good ones: `resolve` collects every problem and still returns
what it could resolve, so a command can report all of them, process the rest and exit 2.

Decisions where log-format.md is silent:
- A directory is read one level deep: its log files, in name order (plain code point
  order: `g10` before `g2`). Log files are those named `.jsonl`, `.ndjson` or `.json`,
  each possibly followed by `.gz` (any case); the other files (a README, the scoresheet
  kept next to the logs) are named in one notice and not read. Subdirectories, hidden files
  (`.name`) and special files are not read, with one notice for each kind; a glob such as
  `logs/**/*.jsonl` reaches deeper. A file named on the command line or matched by a glob
  is read whatever its name.
- Every regular file is sniffed first (pipeline/reader/sniff.py, its first 64 KiB): one that is
  not JSON Lines at all (a CSV, HTML, Parquet, a README) is not read, with one notice
  saying what it looks like, instead of one bad_json finding per line. A file that starts
  like JSON Lines is read even if bad lines follow: those are findings as always. An empty
  file, or one of blank lines only, gets the notice "no events" and is still read.
  When every file named was skipped, that is a problem (exit 2): nothing is left to read.
- Compression is decided when reading, by the gzip magic bytes, never by the name.
- The same file named twice (say `a.jsonl logs/*.jsonl`) is read once, at its first place,
  with a notice: reading it twice would turn every event into a seq_error.
- `-` may appear once; stdin cannot be read twice.
- A file name that is not valid UTF-8 (bytes the OS allows in a name) is read like any
  other; what records carry as its `file` is the name with each undecodable byte written
  `\\xNN` (`display_name`), since every output (Parquet, JSON, CSV) holds UTF-8 text.
- Nothing is opened while resolving (opening a named pipe such as `<(zcat x.gz)` and closing
  it again would lose it); a file that cannot be read is a problem now if the OS says so,
  and a FileProblem when it is read otherwise.
"""

from __future__ import annotations

import glob
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable, cast

from pipeline.model import FileProblem
from pipeline.reader.sniff import sniff_file
from pipeline.storage import is_url
from pipeline.errors import UserError

STDIN_SPEC = "-"
STDIN_NAME = "<stdin>"
_GLOB_CHARS = frozenset("*?[")
LOG_SUFFIXES = (".jsonl", ".ndjson", ".json")  # each also with .gz
_SHOWN_SKIPPED = 5  # names listed in a directory's "not read" notice


def display_name(name: str) -> str:
    """`name` as records carry it: itself if it is UTF-8, else with each byte that is not
    (Python keeps them as lone surrogates) written as `\\xNN`: `g\\xff.jsonl`."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def is_log_name(name: str) -> bool:
    """A name a directory's log files have: .jsonl, .ndjson, .json, or any of them + .gz."""
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    return lower.endswith(LOG_SUFFIXES)


class InputError(UserError):
    """A spec that names nothing readable; `spec` is what the user wrote."""

    def __init__(self, spec: str, reason: str):
        super().__init__(f"{spec}: {reason}")
        self.spec = spec
        self.reason = reason


@dataclass(eq=False)
class InputSource:
    """One file (or stdin) to read. The counters are filled in by the reader as it goes.

    `name` is what every record read from it carries as `file`: the path as the user
    wrote it (or as the directory listing or glob spelled it), `<stdin>` for stdin (ingest
    may give it the name a dataset already knows the file by). `sha256` and `raw_bytes`
    cover the bytes as stored (compressed for gzip), so ingest's manifest identifies the
    very file; `content_sha256` and `content_bytes` cover the decompressed bytes (the same
    as the stored ones for a plain file), so the same log gzipped is known to be the same;
    `data_bytes` counts the decompressed text without a BOM. `regular`: a regular file,
    which can be read again (not stdin, a pipe, a FIFO or a device: a stream).
    """

    name: str
    path: Path | None = None
    stream: BinaryIO | None = field(default=None, repr=False)
    url: str | None = None  # a log at a URL (an object store), read through pipeline.storage
    regular: bool | None = None  # None: decided from `path` (or `url`) when made
    lines: int = 0
    blank_lines: int = 0
    raw_bytes: int = 0
    data_bytes: int = 0
    sha256: str | None = None  # set once the whole input has been read
    content_sha256: str | None = None  # set once the whole input has been read without a problem
    content_bytes: int | None = None
    gzip: bool | None = None  # decided from the first bytes when reading starts
    problem: FileProblem | None = None
    _opened: bool = field(default=False, repr=False)
    _content: Any = field(default=None, repr=False)  # a gzip input's hasher of its decompressed bytes

    def __post_init__(self) -> None:
        if self.regular is None:  # an object at a URL can be read again, as a regular file can
            self.regular = self.url is not None or (self.path is not None and os.path.isfile(self.path))

    @property
    def is_stdin(self) -> bool:
        return self.path is None and self.url is None

    @property
    def location(self) -> Path | str | None:
        """Where the bytes are: the local path, the URL, or None for stdin."""
        return self.path if self.path is not None else self.url

    def fresh(self) -> "InputSource":
        """The same file with its counters at zero, to read it again (never stdin)."""
        return InputSource(self.name, path=self.path, url=self.url, regular=self.regular)

    @property
    def is_stream(self) -> bool:
        """Bytes that can be read once only (stdin, a pipe, a FIFO, process substitution)."""
        return not self.regular

    @property
    def resolved(self) -> str | None:
        """A regular file's absolute path, symlinks and `..` resolved: what names it
        whatever the directory it was named from; a URL as it is."""
        if self.url is not None:
            return self.url
        return os.path.realpath(self.path) if self.regular and self.path is not None else None

    def open(self) -> BinaryIO:
        """The raw byte stream; stdin can be opened once only, since its bytes are gone."""
        if self._opened and self.is_stdin:
            raise InputError(self.name, "stdin can be read only once")
        self._opened = True
        if self.url is not None:
            from pipeline.storage import open_binary

            return cast(BinaryIO, open_binary(self.url))
        if self.path is None:
            return self.stream if self.stream is not None else sys.stdin.buffer
        return open(self.path, "rb", buffering=0)


@dataclass
class Resolution:
    """What the specs named: sources to read, problems (exit 2), notices (just say them)."""

    sources: list[InputSource] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files not read: not logs by name or content


def resolve(specs: Iterable[str], *, stdin: BinaryIO | None = None) -> Resolution:
    """Every spec in order; `stdin` replaces sys.stdin.buffer for `-` (tests, embedding)."""
    result = Resolution()
    seen: dict[tuple[int, int], str] = {}
    stdin_taken = False
    for spec in specs:
        if spec == STDIN_SPEC:
            if stdin_taken:
                result.problems.append(InputError(spec, "stdin ('-') can be read only once"))
            else:
                stdin_taken = True
                result.sources.append(InputSource(STDIN_NAME, stream=stdin))
            continue
        if is_url(spec):
            for url in _expand_url(spec, result):
                _add_url(url, result)
            continue
        for name in _expand(spec, result):
            _add_file(name, seen, result)
    if not result.sources and result.skipped and not result.problems:
        result.problems.append(
            InputError(
                ", ".join(result.skipped[:_SHOWN_SKIPPED]) + (" ..." if len(result.skipped) > _SHOWN_SKIPPED else ""),
                "no log to read: every file named was skipped (see the notes above)",
            )
        )
    return result


def resolve_inputs(specs: Iterable[str], *, stdin: BinaryIO | None = None) -> list[InputSource]:
    """The sources, or InputError for the first spec that names nothing readable."""
    result = resolve(specs, stdin=stdin)
    if result.problems:
        raise result.problems[0]
    return result.sources


def _expand(spec: str, result: Resolution) -> list[str]:
    """File names a spec stands for, in reading order; problems and notices on the side."""
    if not spec:
        result.problems.append(InputError(repr(spec), "an empty path names no file"))
        return []
    if os.path.lexists(spec) or not _GLOB_CHARS.intersection(spec):
        return _expand_path(spec, result)
    matches = sorted(glob.glob(spec, recursive=True))
    if not matches:
        result.problems.append(InputError(spec, "no file matches this pattern"))
        return []
    names: list[str] = []
    for match in matches:
        if os.path.isdir(match):
            names.extend(_directory_files(match, result))
        else:
            names.append(match)
    return names


def _expand_url(spec: str, result: Resolution) -> list[str]:
    """A URL spec's objects, by the rules of local paths: a glob's matches, a prefix's log
    files one level deep (named like logs, not hidden), or the object itself."""
    from pipeline import storage

    try:
        if _GLOB_CHARS.intersection(spec.split("://", 1)[1]):
            matches = [m for m in storage.glob(spec) if not storage.is_dir(m)]
            if not matches:
                result.problems.append(InputError(spec, "no file matches this pattern"))
            return matches
        found = storage.info(spec)
        if found is None:
            result.problems.append(InputError(spec, "no such file or directory"))
            return []
        if found.get("type") != "directory":
            return [spec]
        if any(storage.exists(storage.join(spec, name)) for name in ("_current.json",)):
            result.problems.append(
                InputError(
                    spec,
                    f"this is a dataset written by `farkle-logs ingest`, not logs: read it with `farkle-logs stats {spec}`",
                )
            )
            return []
        names: list[str] = []
        other: list[str] = []
        for entry in sorted(storage.listing(spec), key=lambda e: e["name"]):
            base = storage.name(entry["name"])
            if entry.get("type") == "directory" or base.startswith("."):
                continue
            (names if is_log_name(base) else other).append(entry["name"])
    except storage.StorageUnavailable as exc:
        result.problems.append(InputError(spec, str(exc)))
        return []
    except OSError as exc:
        result.problems.append(InputError(spec, f"cannot be read: {exc.strerror or exc}"))
        return []
    if other:
        result.notices.append(f"{spec}: {_count(other, 'file')} not read, not named like logs: {_listed(other)}")
        result.skipped.extend(other)
    if not names:
        result.problems.append(
            InputError(spec, "has no log files to read (names ending in .jsonl, .ndjson or .json, or those + .gz)")
        )
    return names


def _add_url(url: str, result: Resolution) -> None:
    if any(s.url == url for s in result.sources):
        result.notices.append(f"{url}: named twice, read once")
        return
    sniffed = sniff_file(url)
    if not sniffed.is_log:
        result.notices.append(f"{url}: not read: {sniffed.describe()}")
        result.skipped.append(url)
        return
    if sniffed.kind != "jsonl":
        result.notices.append(f"{url}: {sniffed.describe()}")
    result.sources.append(InputSource(url, url=url))


def _expand_path(spec: str, result: Resolution) -> list[str]:
    try:
        info = os.stat(spec)
    except FileNotFoundError:
        result.problems.append(InputError(spec, "no such file or directory"))
        return []
    except OSError as exc:
        result.problems.append(InputError(spec, f"cannot be read: {exc.strerror or exc}"))
        return []
    if stat.S_ISDIR(info.st_mode):
        if is_dataset_directory(spec):  # one sentence, not a notice per table directory
            result.problems.append(
                InputError(
                    spec,
                    "this is a dataset written by `farkle-logs ingest`, not a directory of logs: "
                    f"read it with `farkle-logs stats {spec}` or `farkle-logs report {spec}`, "
                    "or audit the logs it was ingested from",
                )
            )
            return []
        names = _directory_files(spec, result)
        if not names:
            result.problems.append(
                InputError(
                    spec,
                    "directory has no log files to read (names ending in .jsonl, .ndjson or .json, or those + .gz)",
                )
            )
        return names
    return [spec]


def is_dataset_directory(directory: str) -> bool:
    """Whether `directory` is a dataset `ingest --out` wrote (any format version: its
    commit pointer, or a manifest naming the farkle-logs format). Read a few bytes at most."""
    if any(os.path.lexists(os.path.join(directory, name)) for name in ("_current.json", ".current")):
        return True
    try:
        with open(os.path.join(directory, "manifest.json"), "rb") as f:
            return b'"farkle-logs"' in f.read(64 * 1024)
    except OSError:
        return False


def _directory_files(directory: str, result: Resolution) -> list[str]:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as exc:
        result.problems.append(InputError(directory, f"cannot list directory: {exc.strerror or exc}"))
        return []
    names = []
    hidden: list[str] = []
    subdirectories: list[str] = []
    special: list[str] = []
    other: list[str] = []
    for entry in entries:
        path = os.path.join(directory, entry.name)
        if entry.name.startswith("."):
            hidden.append(entry.name)
        elif entry.is_dir():
            subdirectories.append(entry.name)
        elif not entry.is_file():
            special.append(entry.name)
        elif not is_log_name(entry.name):
            other.append(entry.name)
        else:
            names.append(path)
    # one notice per kind of entry left out, however many there are (a directory of
    # monthly subdirectories must not print a line for each)
    if other:
        result.notices.append(
            f"{directory}: {_count(other, 'file')} not read, not named like logs "
            f"(.jsonl, .ndjson, .json, or those + .gz): {_listed(other)}; name a file to read it anyway"
        )
        result.skipped.extend(os.path.join(directory, name) for name in other)
    if subdirectories:
        result.notices.append(
            f"{directory}: {_count(subdirectories, 'subdirectory', 'subdirectories')} not read: "
            f"{_listed(subdirectories)}; name one, or use a glob such as '{os.path.join(directory, '**', '*.jsonl')}'"
        )
    if hidden:
        result.notices.append(f"{directory}: {_count(hidden, 'hidden file')} not read: {_listed(hidden)}")
    if special:
        result.notices.append(
            f"{directory}: {_count(special, 'special file')} not read (not regular files): {_listed(special)}"
        )
    return names


def _count(items: list[str], word: str, words: str | None = None) -> str:
    return f"{len(items)} {word if len(items) == 1 else (words or word + 's')}"


def _listed(items: list[str]) -> str:
    """The first few names, and how many more."""
    more = len(items) - _SHOWN_SKIPPED
    return ", ".join(items[:_SHOWN_SKIPPED]) + (f" and {more} more" if more > 0 else "")


def _add_file(name: str, seen: dict[tuple[int, int], str], result: Resolution) -> None:
    try:
        info = os.stat(name)
    except OSError as exc:
        result.problems.append(InputError(name, f"cannot be read: {exc.strerror or exc}"))
        return
    if not os.access(name, os.R_OK):
        result.problems.append(InputError(name, "permission denied"))
        return
    if stat.S_ISREG(info.st_mode):
        key = (info.st_dev, info.st_ino)
        if key in seen:
            result.notices.append(f"{display_name(name)}: same file as {seen[key]}, read once")
            return
        seen[key] = display_name(name)
        sniffed = sniff_file(name)  # a regular file can be opened twice; a pipe could not
        if not sniffed.is_log:
            result.notices.append(f"{name}: not read: {sniffed.describe()}")
            result.skipped.append(name)
            return
        if sniffed.kind != "jsonl":
            result.notices.append(f"{name}: {sniffed.describe()}")
    result.sources.append(InputSource(display_name(name), path=Path(name), regular=stat.S_ISREG(info.st_mode)))

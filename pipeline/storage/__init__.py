"""Logs and datasets at URLs (`s3://bucket/prefix`, `gs://`, `az://`, `hdfs://`, ...): one
filesystem layer, fsspec, for every reader and writer, in this process and in Spark's tasks.

A path without a scheme is a local path, and stays with the local code (`pathlib`, `open`,
`os`): hard links, renames, `flock` and fsync are what make a dataset safe on a local disk,
and an object store has none of them. A URL is handed to fsspec, which finds the filesystem
package for its scheme (`s3fs` for `s3://`, `gcsfs`, `adlfs`, pyarrow's HDFS) and its
credentials the usual way (for S3: the AWS environment variables, `~/.aws`, an instance
role; `AWS_ENDPOINT_URL` for an S3-compatible server). Nothing here knows one store from
another: the only primitives used are read, write, list, delete, copy, and one conditional
write, create-if-absent (`open(..., "xb")`: `If-None-Match: *` on S3, a generation
precondition on GCS, `overwrite=False` on Azure, `O_EXCL` locally), which the dataset's
commit protocol rests on (pipeline/dataset/remote.py).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any

from pipeline.errors import UserError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


class StorageUnavailable(UserError):
    """A URL whose filesystem package is not installed, or that fsspec cannot use."""


def is_url(location: object) -> bool:
    """A `scheme://...` string other than `file://` (a local path is not a URL here)."""
    return isinstance(location, str) and bool(_URL.match(location)) and not location.startswith("file://")


def scheme(url: str) -> str:
    return url.split("://", 1)[0].lower()


def filesystem(url: str) -> "tuple[AbstractFileSystem, str]":
    """The fsspec filesystem for `url` and the path within it. Raises StorageUnavailable
    naming the package to install when the scheme's filesystem is missing."""
    fs = _filesystem(scheme(url))
    return fs, fs._strip_protocol(url)


@lru_cache(maxsize=None)
def _filesystem(protocol: str) -> "AbstractFileSystem":
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise StorageUnavailable(f"{protocol}:// paths need fsspec: pip install fsspec") from None
    try:
        return fsspec.filesystem(protocol)
    except (ImportError, ValueError) as exc:
        hint = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs"}.get(
            protocol
        )
        install = f": pip install {hint}" if hint else ""
        raise StorageUnavailable(f"{protocol}:// paths cannot be read here ({_first_line(exc)}){install}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def join(base: str, *parts: str) -> str:
    """`base/part/...` for a URL (slashes only, never a local separator)."""
    out = base.rstrip("/")
    for part in parts:
        out += "/" + part.strip("/")
    return out


def name(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def parent(url: str) -> str:
    head = url.rstrip("/")
    return head.rsplit("/", 1)[0] if head.count("/") > 2 else head


def with_scheme(url: str, path: str) -> str:
    """A path fsspec returned (without scheme) as a URL of `url`'s scheme."""
    return f"{scheme(url)}://{path.lstrip('/')}"


def open_binary(location: str | os.PathLike, mode: str = "rb") -> IO[bytes]:
    """A local file or a URL, opened in a binary `mode` ("rb", "wb", "xb")."""
    if is_url(location):
        fs, path = filesystem(str(location))
        return fs.open(path, mode)
    return open(location, mode)


def read_bytes(url: str) -> bytes:
    fs, path = filesystem(url)
    return fs.cat_file(path)


def write_bytes(url: str, data: bytes, *, exclusive: bool = False) -> None:
    """Write a whole object. `exclusive`: only if nothing is there yet (FileExistsError
    otherwise, and nothing written): the store's create-if-absent."""
    fs, path = filesystem(url)
    with fs.open(path, "xb" if exclusive else "wb") as fh:
        fh.write(data)


def info(url: str) -> dict[str, Any] | None:
    """The object's size and type, or None if there is none."""
    fs, path = filesystem(url)
    try:
        return fs.info(path)
    except FileNotFoundError:
        return None


def exists(url: str) -> bool:
    return info(url) is not None


def is_dir(url: str) -> bool:
    found = info(url)
    return found is not None and found.get("type") == "directory"


def size(url: str) -> int | None:
    found = info(url)
    return None if found is None or found.get("type") == "directory" else int(found.get("size") or 0)


def listing(url: str) -> list[dict[str, Any]]:
    """The entries directly under `url` (fsspec's `ls` with details), names as URLs."""
    fs, path = filesystem(url)
    try:
        entries = fs.ls(path, detail=True, refresh=True)
    except FileNotFoundError:
        return []
    return [dict(e, name=with_scheme(url, e["name"])) for e in entries if e["name"].rstrip("/") != path.rstrip("/")]


def glob(pattern: str) -> list[str]:
    fs, path = filesystem(pattern)
    return sorted(with_scheme(pattern, p) for p in fs.glob(path))


def remove(url: str, recursive: bool = False) -> None:
    """Delete an object (or, `recursive`, everything under a prefix); none there is fine."""
    fs, path = filesystem(url)
    try:
        fs.rm(path, recursive=recursive)
    except FileNotFoundError:
        pass


def copy(sources: list[str], targets: list[str]) -> None:
    """Copy objects within one store (a server-side copy where the store has one)."""
    if not sources:
        return
    fs, _ = filesystem(sources[0])
    fs.copy([filesystem(s)[1] for s in sources], [filesystem(t)[1] for t in targets])


def invalidate(url: str) -> None:
    """Forget what fsspec cached of the listings under `url` (another writer may have changed them)."""
    fs, path = filesystem(url)
    fs.invalidate_cache(path)


def register_duckdb(con: Any, paths: list[Any]) -> None:
    """Let DuckDB connection `con` read the URLs among `paths` through fsspec (DuckDB's own
    httpfs would be an extension to download; this is the same layer as everything else)."""
    schemes = {scheme(str(p)) for p in paths if is_url(str(p))}
    if not schemes:
        return
    registered = set(con.list_filesystems())
    for protocol in schemes:
        fs = _filesystem(protocol)
        if fs.__class__.__name__ not in registered and protocol not in registered:
            try:
                con.register_filesystem(fs)
            except Exception:  # registered under another name already
                pass


def read_parquet(location: Any, **options: Any) -> Any:
    """pyarrow.parquet.read_table of a local path or a URL."""
    import pyarrow.parquet as pq

    if is_url(str(location)):
        with open_binary(str(location)) as fh:
            return pq.read_table(fh, **options)
    return pq.read_table(location, **options)


def basename(location: Any) -> str:
    return name(location) if isinstance(location, str) else location.name


def child(base: Any, *parts: str) -> Any:
    """`base / part / ...` for a local Path, or the URL for a URL."""
    return join(base, *parts) if isinstance(base, str) else base.joinpath(*parts)

"""Stage 3, route: events → hash buckets of game ids, spilled to disk as Arrow IPC.

Every event of a game lands in the same bucket (crc32 of the game id's UTF-8, modulo the
bucket count), so a bucket is a set of whole games and replays on its own. Each parsed
block becomes one IPC file with one record batch per bucket (empty ones included), in
line order within each bucket; replaying bucket b reads batch b of every block's file,
in block order, which is reading order. So memory holds one block while
parsing and one bucket while replaying, whatever the input size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from zlib import crc32

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.replay.partition import ORDER_COLUMN


BUCKET_BYTES = 8 << 20  # about this much log per bucket: ~75 K events (replay memory follows it)


def bucket_count(total_bytes: int, workers: int) -> int:
    """Enough buckets that one holds about BUCKET_BYTES of log (the reference replay holds a
    Python object per event of the bucket), and at least two per worker so the replay stage
    balances."""
    return max(2 * max(workers, 1), -(-total_bytes // BUCKET_BYTES))


def buckets_of(game_ids: pa.Array, buckets: int) -> pa.Array:
    """The bucket of each row: crc32 once per distinct game id, then a take."""
    return _buckets(game_ids, buckets)[0]


def _buckets(game_ids: pa.Array, buckets: int) -> tuple[pa.Array, np.ndarray]:
    """The bucket of each row, and of each distinct game id."""
    encoded = pc.dictionary_encode(game_ids)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    ids = encoded.dictionary.to_pylist()
    per_id = np.fromiter((crc32(g.encode("utf-8", "surrogatepass")) % buckets for g in ids), np.int32, len(ids))
    return pa.array(per_id).take(encoded.indices), per_id


def part_of(game_ids: pa.Array, buckets: int, parts: int) -> np.ndarray:
    """Which of `parts` parts of its bucket each row's game falls in: the crc32's bits above
    the bucket's, so the parts of a bucket are about equal and each holds whole games."""
    encoded = pc.dictionary_encode(game_ids)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    ids = encoded.dictionary.to_pylist()
    per_id = np.fromiter(
        (crc32(g.encode("utf-8", "surrogatepass")) // buckets % parts for g in ids), np.int32, len(ids)
    )
    return per_id[encoded.indices.to_numpy(zero_copy_only=False)]


@dataclass
class Spilled:
    """One block's spill: its events in bucket order (without the ordering column), and per
    bucket its rows and game ids. Nothing was written for a block without events."""

    events: pa.Table
    rows: list[int]
    games: list[int]


def spill(events: pa.Table, file_ordinal: int, buckets: int, path: Path) -> Spilled:
    """Write `events` (one block, EVENTS columns) to `path` grouped by bucket, each bucket in
    line order, with the ordering column added (a block without events writes nothing)."""
    if not events.num_rows:
        return Spilled(events, [0] * buckets, [0] * buckets)
    events, ordered, rows, games = by_bucket(events, file_ordinal, buckets)
    write_buckets(ordered, rows, path)
    return Spilled(events, rows, games)


def by_bucket(events: pa.Table, file_ordinal: int, buckets: int) -> tuple[pa.Table, pa.Table, list[int], list[int]]:
    """`events` (one block) sorted by bucket, then line: the rows without and with the
    ordering column, and per bucket its rows and game ids (slice b of the sorted rows is
    bucket b). What `spill` writes, and what the Spark engine's parse tasks send on."""
    if not events.num_rows:
        ordered = events.append_column(ORDER_COLUMN, pa.array([], pa.int32()))
        return events, ordered, [0] * buckets, [0] * buckets
    rows_bucket, per_id = _buckets(events.column("game_id").combine_chunks(), buckets)
    keys = pa.table({"b": rows_bucket, "l": events.column("source_line")})
    order = pc.sort_indices(keys, sort_keys=[("b", "ascending"), ("l", "ascending")])
    events = events.take(order)
    rows = np.bincount(rows_bucket.to_numpy(zero_copy_only=False), minlength=buckets).tolist()
    games = np.bincount(per_id, minlength=buckets).tolist()
    ordered = events.append_column(ORDER_COLUMN, pa.array(np.full(events.num_rows, file_ordinal, np.int32)))
    return events, ordered, rows, games


def write_buckets(ordered: pa.Table, sizes: list[int], path: Path) -> None:
    """`ordered` grouped by bucket with `sizes[b]` rows of bucket b: one batch per bucket."""
    ordered = ordered.combine_chunks()
    with pa.ipc.new_file(str(path), ordered.schema) as writer:
        start = 0
        for size in sizes:
            part = ordered.slice(start, size)
            batch = part.to_batches()[0] if size else pa.RecordBatch.from_pylist([], schema=ordered.schema)
            writer.write_batch(batch)
            start += size


class SpillFiles:
    """The spilled files, each read once per bucket. Opening one parses its footer, and with a
    file per block read once per bucket that is blocks x buckets opens (about a fifth of the
    replay stage on the 2.9 M-event log), so the first MAX_OPEN files stay open across
    buckets; the others (an ingest of hundreds of small files) are opened for one bucket and
    closed at once, so the open files stay few whatever the input (a limit of 256
    descriptors is common). Batches are read, not memory-mapped: a mapping kept open would
    keep every page read so far in the process's resident set."""

    MAX_OPEN = 64  # files kept open across buckets (an eighth of the limit of open files, if lower)

    def __init__(self) -> None:
        self._keep = min(self.MAX_OPEN, max(4, _open_files_limit() // 8))
        self._readers: dict[Path, tuple[pa.OSFile, pa.ipc.RecordBatchFileReader]] = {}

    def gather(
        self, paths: list[Path], bucket: int, keep: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None
    ) -> pa.Table:
        """Bucket `bucket` of every spilled file, in the order of `paths`; with `keep`, only
        the rows it keeps of each file's batch (one part of a large bucket)."""
        batches = []
        schema = None
        for path in paths:
            kept = self._readers.get(path)
            if kept is not None:
                reader = kept[1]
                batch = reader.get_batch(bucket)
            else:
                source = pa.OSFile(str(path))
                reader = pa.ipc.open_file(source)
                batch = reader.get_batch(bucket)
                if len(self._readers) < self._keep:
                    self._readers[path] = (source, reader)
                else:
                    source.close()
            schema = reader.schema
            if batch.num_rows and keep is not None:
                batch = keep(batch)
            if batch.num_rows:
                batches.append(batch)
        if schema is None:
            raise ValueError("no spilled files")
        return pa.Table.from_batches(batches, schema=schema)

    def close(self) -> None:
        """Close every file (the spill directory is removed after the replay stage)."""
        for source, _ in self._readers.values():
            source.close()
        self._readers.clear()


def _open_files_limit() -> int:
    """This process's limit of open files (`ulimit -n`), or a common default."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return soft if soft > 0 else 1024
    except (ImportError, OSError, ValueError):
        return 1024


def spill_ordered(ordered: pa.Table, buckets: int, path: Path) -> None:
    """Spill rows that already carry the ordering column (stored events of games to replay
    again), grouped by bucket, each bucket in (file_ordinal, source_line) order."""
    if ordered.num_rows:
        b = buckets_of(ordered.column("game_id").combine_chunks(), buckets)
        keys = pa.table({"b": b, "f": ordered.column(ORDER_COLUMN), "l": ordered.column("source_line")})
        order = pc.sort_indices(keys, sort_keys=[("b", "ascending"), ("f", "ascending"), ("l", "ascending")])
        ordered = ordered.take(order)
        sizes = {c["values"]: c["counts"] for c in pc.value_counts(b.take(order)).to_pylist()}
    else:
        sizes = {}
    write_buckets(ordered, [sizes.get(i, 0) for i in range(buckets)], path)

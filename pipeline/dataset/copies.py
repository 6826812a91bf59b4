"""Events stored twice from two sources: what `dataset check` reports and `dataset repair`
drops (pipeline.ingest.copies).

Before sources had identities (pipeline.dataset.sources), one log read as two sources
(stdin piped in twice, a copy under another name, the same log gzipped) stored each of its
events twice, and replay made every second one a `seq_error`. A *copy* is an `events` row
whose game, seq and content (every column but where it was read: `source_file`,
`source_line`, `ingest_id`) equal those of a row from another source. In replay order
(sources by first appearance in the manifest, then line) the first row stays; the copies
are the rows of the other sources. Rows repeated within one source are the log's own
content (`audit` reports them the same way) and are not copies.

Only (game_id, seq) pairs stored more than once are looked at, and only those stored by two
sources are compared whole, so a dataset without copies costs two scans of a few columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.dataset.layout import duckdb_path
from pipeline.dataset.sources import Catalog, replay_order, source_key_sql
from pipeline.dataset.tables import EVENTS

WHERE_READ = ("source_file", "source_line", "ingest_id")
CONTENT = [name for name in EVENTS.names if name not in WHERE_READ]
EXAMPLES = 3  # copies named in a report


@dataclass
class Copies:
    """The later copies: (source_file, source_line, game_id, ingest_id) of each, in replay
    order, and a few described for people ("game g1 seq 5: a.jsonl:5 and <stdin>:5")."""

    rows: list[tuple[str, int, str, str]] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)  # source_file -> copies it holds

    def __len__(self) -> int:
        return len(self.rows)

    def describe(self) -> str:
        shown = "; ".join(self.examples)
        return (
            f"{len(self.rows):,} event(s) stored twice from two sources (the same game, seq and content: "
            f"{shown}{' ...' if len(self.rows) > len(self.examples) else ''}); replay makes each later copy a seq_error"
        )


def find_copies(manifest: dict[str, Any], event_files: list[Path]) -> Copies:
    """The later copies among the events `event_files` hold (the files a snapshot whose
    manifest is `manifest` lists)."""
    if not event_files:
        return Copies()
    import duckdb

    catalog = Catalog.of(manifest.get("files", []))
    order = replay_order(manifest.get("files", []), catalog.unnamed)
    con = duckdb.connect()
    try:
        con.register("unnamed", pa.table({"name": pa.array(sorted(catalog.unnamed), pa.string())}))
        con.register("file_order", pa.table({"k": list(order), "o": pa.array(list(order.values()), pa.int64())}))
        events = {"events": [duckdb_path(p) for p in event_files]}
        # cheap first: (game_id, seq) pairs stored more than once, then those from two sources
        pairs = con.sql(
            f"""
            with repeated as (
                select game_id, seq from read_parquet($events) group by game_id, seq having count(*) > 1
            )
            select e.game_id, e.seq from read_parquet($events) e
            join repeated r on r.game_id = e.game_id and r.seq = e.seq
            group by e.game_id, e.seq having count(distinct {source_key_sql("unnamed")}) > 1
            """,
            params=events,
        ).to_arrow_table()
        if not pairs.num_rows:
            return Copies()
        con.register("pairs", pairs)
        content = ", ".join(f'"{c}"' for c in CONTENT)
        sql = f"""
            with candidates as (
                select e.*, {source_key_sql("unnamed")} as src, coalesce(o.o, 9223372036854775807) as ordinal
                from read_parquet($events) e
                join pairs p on p.game_id = e.game_id and p.seq = e.seq
                left join file_order o on o.k = {source_key_sql("unnamed")}
            ),
            ranked as (
                select source_file, source_line, game_id, seq, src, ingest_id,
                    first_value(src) over w as first_src,
                    first_value(source_file) over w as first_file,
                    first_value(source_line) over w as first_line,
                    first_value(ingest_id) over w as first_ingest
                from candidates
                window w as (partition by {content} order by ordinal, source_line)
            )
            select source_file, source_line, game_id, seq, first_file, first_line, ingest_id, first_ingest,
                src <> source_file as is_reading, first_src <> first_file as first_is_reading
            from ranked
            where src <> first_src
            order by game_id, seq, source_file, source_line
        """
        rows = con.execute(sql, events).fetchall()
    finally:
        con.close()
    copies = Copies()
    for source_file, source_line, game_id, seq, first_file, first_line, ingest_id, first_ingest, *readings in rows:
        copies.rows.append((source_file, source_line, game_id, ingest_id))
        copies.sources[source_file] = copies.sources.get(source_file, 0) + 1
        if len(copies.examples) < EXAMPLES:
            first = _where(first_file, first_line, first_ingest if readings[1] else None)
            later = _where(source_file, source_line, ingest_id if readings[0] else None)
            copies.examples.append(f"game {game_id} seq {seq}: {first} and {later}")
    return copies


def _where(name: str, line: int, reading: str | None) -> str:
    """`name:line`, and for a stream reading (whose name every reading shares) its ingest."""
    return f"{name}:{line}" + (f" (ingest {reading})" if reading else "")

"""What a run adds to a dataset that already holds data (docs/dataset.md, "Incremental ingest").

The rule: a line is identified by its file name and line
number. Re-reading a line already stored there with the same content adds nothing (it is
a *duplicate*: a log that grew is read again, its old lines are duplicates). Everything else
is new: a repeated (game_id, seq) anywhere else in the logs is an event like any other, and
replay gives it the `seq_error` that `audit` gives it. A line whose stored version at the
same (file, line) differs (the file was rewritten, or its last line was cut and is now
whole), or a stored line that is now blank or past the file's new end, is *superseded*: its
stored row leaves the dataset and the new reading takes its place, so the dataset always
equals a fresh ingest of the files as they are now.

A game that gets new events, or loses superseded ones, and already has events in the
dataset is replayed whole (stored events plus new, in replay order: files by first
appearance in the dataset, then line), and its rows in the derived tables are replaced.
"Same content" compares the stored columns (everything but `ingest_id`), which is what a
fresh ingest of the line would store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import storage
from pipeline.dataset import tables
from pipeline.dataset import batches
from pipeline.ingest import route
from pipeline.ingest.sinks import writer_options
from pipeline.dataset.layout import duckdb_path
from pipeline.reader.split import Block
from pipeline.reader.inputs import STDIN_NAME
from pipeline.model import BadLine
from pipeline.replay.partition import ORDER_COLUMN

PARSE_CODES = ("bad_json", "bad_event")  # findings owned by a line, not by a game's replay
DERIVED = ("turns", "rolls", "decisions", "games", "game_players", "findings")
_EVENT_VALUES = [n for n in tables.EVENTS.names if n not in ("ingest_id", "source_file")]
_REJECT_VALUES = [n for n in tables.REJECTS.names if n not in ("ingest_id", "file")]


def file_key(name: str, ingest_id: str) -> str:
    """Which reading a row belongs to, for replay order: a file is known by its name, but
    each reading of stdin is a file of its own (stdin is never 're-read')."""
    return f"{name}\0{ingest_id}" if name == STDIN_NAME else name


@dataclass
class StoredLines:
    """Where the stored rows of one re-read file are (workers query them per block)."""

    events: list[str]
    rejects: list[str]


@dataclass
class Stored:
    games: frozenset[str] = frozenset()
    reread: dict[str, StoredLines] = field(default_factory=dict)
    ordinals: dict[str, int] = field(default_factory=dict)  # file_key → position in replay order

    @classmethod
    def load(cls, store, names: list[str], ingest_id: str) -> "Stored":
        """The stored game ids, the files of this run that were read before, and the replay
        order of every file (stored ones first, by first appearance)."""
        ordinals: dict[str, int] = {}
        for f in store.manifest["files"]:
            ordinals.setdefault(file_key(f["path"], f["ingest_id"]), len(ordinals))
        for name in names:
            ordinals.setdefault(file_key(name, ingest_id), len(ordinals))
        events = [duckdb_path(p) for p in store.table_files("events")]
        rejects = [duckdb_path(p) for p in store.table_files("rejects")]
        known = {f["path"] for f in store.manifest["files"]}
        reread = {n: StoredLines(events, rejects) for n in names if n in known and n != STDIN_NAME}
        games: frozenset[str] = frozenset()
        if events:
            import duckdb

            con = duckdb.connect()
            storage.register_duckdb(con, events)
            ids = con.sql("select distinct game_id from read_parquet(?)", params=[events]).to_arrow_table()
            games = frozenset(ids.column(0).to_pylist())
            con.close()
        return cls(games, reread, ordinals)


_con = None


def _duckdb():
    global _con
    if _con is None:
        import duckdb

        _con = duckdb.connect()
    return _con


def drop_stored_lines(
    stored: StoredLines, block: Block, events: pa.Table, bad: list[BadLine]
) -> tuple[pa.Table, list[BadLine], int, list[tuple[str, int, str | None]]]:
    """Compare a block of a re-read file with what the dataset holds at the same lines.

    Returns the events and bad lines that are new, the number of duplicates, and the stored
    rows superseded in the block's line range, as (file, line, game_id or None)."""
    name = block.name
    numbers = [b.line for b in block.long_lines]
    lo = min([block.first_line] + numbers)
    hi = max([block.first_line + block.data.count(b"\n") - 1] + numbers)
    con = _duckdb()
    storage.register_duckdb(con, stored.events + stored.rejects)
    stored_e = (
        con.sql(
            "select * exclude (ingest_id) from read_parquet(?) where source_file = ? and source_line between ? and ?",
            params=[stored.events, name, lo, hi],
        ).to_arrow_table()
        if stored.events
        else tables.EVENTS.empty_table()
    )
    stored_r = (
        con.sql(
            "select * exclude (ingest_id) from read_parquet(?) where file = ? and line between ? and ?",
            params=[stored.rejects, name, lo, hi],
        ).to_arrow_table()
        if stored.rejects
        else tables.REJECTS.empty_table()
    )
    new_r = batches.rejects_table(bad, "") if bad else tables.REJECTS.empty_table()
    same_e = _same_lines(con, events, stored_e, "source_line", _EVENT_VALUES)
    same_r = _same_lines(con, new_r, stored_r, "line", _REJECT_VALUES)
    duplicates = len(same_e) + len(same_r)
    if same_e:
        keep = pc.invert(pc.is_in(events.column("source_line"), value_set=pa.array(sorted(same_e), pa.int64())))
        events = events.filter(keep)
    if same_r:
        bad = [b for b in bad if b.line not in same_r]
    superseded = [
        (name, line, game)
        for line, game in zip(stored_e.column("source_line").to_pylist(), stored_e.column("game_id").to_pylist())
        if line not in same_e
    ]
    superseded += [(name, line, None) for line in stored_r.column("line").to_pylist() if line not in same_r]
    return events, bad, duplicates, superseded


def _same_lines(con, new: pa.Table, old: pa.Table, line: str, values: list[str]) -> set[int]:
    """Line numbers where `new` and `old` hold the same row (every value column equal)."""
    if new.num_rows == 0 or old.num_rows == 0:
        return set()
    con.register("new_rows", new)
    con.register("old_rows", old)
    same = " and ".join(f'n."{c}" is not distinct from o."{c}"' for c in values if c != line)
    rows = con.execute(
        f'select n."{line}" from new_rows n join old_rows o on n."{line}" = o."{line}" and {same}'
    ).fetchall()
    con.unregister("new_rows")
    con.unregister("old_rows")
    return {r[0] for r in rows}


def lines_past_end(store, name: str, last_line: int) -> list[tuple[str, int, str | None]]:
    """Stored rows of a re-read file beyond its new last line: superseded."""
    out: list[tuple[str, int, str | None]] = []
    con = _duckdb()
    events = [duckdb_path(p) for p in store.table_files("events")]
    rejects = [duckdb_path(p) for p in store.table_files("rejects")]
    storage.register_duckdb(con, events + rejects)
    if events:
        rows = con.execute(
            "select source_line, game_id from read_parquet(?) where source_file = ? and source_line > ?",
            [events, name, last_line],
        ).fetchall()
        out += [(name, line, game) for line, game in rows]
    if rejects:
        rows = con.execute(
            "select line from read_parquet(?) where file = ? and line > ?", [rejects, name, last_line]
        ).fetchall()
        out += [(name, line, None) for (line,) in rows]
    return out


def spill_stored_games(
    store,
    touched: set[str],
    superseded: Iterable[tuple[str, int, Any]],
    ordinals: dict[str, int],
    buckets: int,
    path: Path,
) -> None:
    """The stored events of the games to replay again (superseded lines left out), with the
    ordering column, spilled by bucket like a parsed block. A game_start without `rules`
    gets the ruleset the game was first replayed with (games.ruleset), so a later run's
    --rules does not change an existing game."""

    files = [duckdb_path(p) for p in store.table_files("events")]
    if not touched or not files:
        route.write_buckets(_with_ordinal(tables.EVENTS.empty_table()), [0] * buckets, path)
        return
    con = _duckdb()
    storage.register_duckdb(con, files)
    con.register("touched", pa.table({"game_id": sorted(touched)}))
    gone = sorted({f"{file}\n{line}" for file, line, _ in superseded})
    con.register("gone", pa.table({"k": pa.array(gone, pa.string())}))
    order = pa.table({"k": list(ordinals), ORDER_COLUMN: pa.array(list(ordinals.values()), pa.int32())})
    con.register("file_order", order)
    game_files = [duckdb_path(p) for p in store.table_files("games")]
    rules_sql = "e.rules"
    join_games = ""
    if game_files:
        join_games = (
            "left join (select game_id, ruleset from read_parquet($games)) g on g.game_id = e.game_id "
            "and e.type = 'game_start' and e.rules is null"
        )
        rules_sql = "coalesce(e.rules, g.ruleset)"
    cols = ", ".join(f'e."{c}"' if c != "rules" else f"{rules_sql} as rules" for c in tables.EVENTS.names)
    key = f"case when e.source_file = '{STDIN_NAME}' then e.source_file || chr(0) || e.ingest_id else e.source_file end"
    sql = (
        f"select {cols}, o.{ORDER_COLUMN} from read_parquet($events) e {join_games} "
        f"join file_order o on o.k = {key} "
        "where e.game_id in (select game_id from touched) "
        "and (e.source_file || chr(10) || cast(e.source_line as varchar)) not in (select k from gone)"
    )
    params: dict[str, Any] = {"events": files}
    if game_files:
        params["games"] = game_files
    table = con.sql(sql, params=params).to_arrow_table()
    for name in ("touched", "gone", "file_order"):
        con.unregister(name)
    table = table.cast(
        _with_ordinal(tables.EVENTS.empty_table()).schema
    )  # DuckDB names list items and time zones its way
    route.spill_ordered(table, buckets, path)


def _with_ordinal(table: pa.Table) -> pa.Table:
    return table.append_column(pa.field(ORDER_COLUMN, pa.int32()), pa.nulls(table.num_rows, pa.int32()))


@dataclass
class Superseded:
    """What `supersede` did: the stored files rewritten, and the rows of superseded lines
    that left the events and rejects tables, per input file name (the manifest records these
    with the file's new reading, so its counts still add up to the tables' rows)."""

    new_files: dict[str, list[Path]] = field(default_factory=dict)
    removed: dict[str, set[str]] = field(default_factory=dict)  # table → file names no longer listed
    events: dict[str, int] = field(default_factory=dict)  # source_file → event rows removed
    rejects: dict[str, int] = field(default_factory=dict)  # file → reject rows removed


def supersede(
    store, touched: set[str], superseded: list[tuple[str, int, Any]], staging: Path, ingest_id: str
) -> Superseded:
    """Rewrite each stored file that holds rows to replace: derived rows of the games replayed
    again (their bad lines' findings stay with their lines), and the rows of superseded
    lines (events, rejects and those lines' findings)."""
    result = Superseded()
    new_files, removed = result.new_files, result.removed
    games = pa.array(sorted(touched), pa.string())
    lines = pa.array(sorted({f"{file}\n{line}" for file, line, _ in superseded}), pa.string())
    if not len(games) and not len(lines):
        return result
    parse_codes = pa.array(PARSE_CODES)
    lost = {"events": (result.events, "source_file"), "rejects": (result.rejects, "file")}
    for table in tables.TABLES:
        for path in store.table_files(table):
            drop = _drop_mask(path, table, games, lines, parse_codes)
            if drop is None:
                continue
            data = storage.read_parquet(path, schema=tables.TABLES[table])
            if table in lost:  # rows of these tables go only because their line was superseded
                per_file, column = lost[table]
                for item in pc.value_counts(data.column(column).filter(drop)).to_pylist():
                    per_file[item["values"]] = per_file.get(item["values"], 0) + item["counts"]
            kept = data.filter(pc.invert(drop))
            removed.setdefault(table, set()).add(storage.basename(path))
            if kept.num_rows:
                out = storage.child(staging, table, f"part-{ingest_id}-rw{len(new_files.get(table, [])):04d}.parquet")
                if isinstance(out, str):  # a dataset at a URL
                    with storage.open_binary(out, "wb") as fh:
                        pq.write_table(kept, fh, **writer_options(kept.schema))
                else:
                    pq.write_table(kept, out, **writer_options(kept.schema))
                new_files.setdefault(table, []).append(out)
    return result


def _drop_mask(path: Path, table: str, games: pa.Array, lines: pa.Array, parse_codes: pa.Array):
    """Which rows of a stored file go, or None if none does (only key columns are read)."""
    if table == "events":
        cols = ["source_file", "source_line"]
    elif table == "rejects":
        cols = ["file", "line"]
    elif table == "findings":
        cols = ["game_id", "file", "line", "code"]
    else:
        cols = ["game_id"]
    data = storage.read_parquet(path, columns=cols)
    false = pa.array([False] * data.num_rows, pa.bool_())
    drop = false
    if table in DERIVED and len(games):
        drop = pc.fill_null(pc.is_in(data.column("game_id"), value_set=games), False)
        if table == "findings":
            drop = pc.and_(drop, pc.invert(pc.is_in(data.column("code"), value_set=parse_codes)))
    if table in ("events", "rejects", "findings") and len(lines):
        file_col, line_col = cols[-2:] if table != "findings" else ("file", "line")
        keys = pc.binary_join_element_wise(data.column(file_col), pc.cast(data.column(line_col), pa.string()), "\n")
        by_line = pc.fill_null(pc.is_in(keys, value_set=lines), False)
        if table == "findings":
            by_line = pc.and_(by_line, pc.is_in(data.column("code"), value_set=parse_codes))
        drop = pc.or_(drop, by_line)
    if not pc.any(drop).as_py():
        return None
    return drop

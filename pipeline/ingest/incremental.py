"""What a run adds to a dataset that already holds data (docs/dataset.md, "Incremental ingest").

The rule: a line is identified by its source (a file by its resolved path, a named stream
by its name: pipeline.ingest.identity; the rows carry the source's one name) and its line
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
from typing import TYPE_CHECKING, Any, Collection, Iterable

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
from pipeline.dataset.sources import STREAM, replay_order, source_key, source_key_sql

if TYPE_CHECKING:
    from pipeline.ingest.identity import Identity

PARSE_CODES = ("bad_json", "bad_event")  # findings owned by a line, not by a game's replay
DERIVED = ("turns", "rolls", "decisions", "games", "game_players", "findings")
_EVENT_VALUES = [n for n in tables.EVENTS.names if n not in ("ingest_id", "source_file")]
_REJECT_VALUES = [n for n in tables.REJECTS.names if n not in ("ingest_id", "file")]


def file_key(name: str, ingest_id: str, streams: Collection[str] = (STDIN_NAME,)) -> str:
    """Which reading a row belongs to, for replay order (pipeline.dataset.sources.source_key)."""
    return source_key(name, ingest_id, streams)


@dataclass
class StoredLines:
    """Where the stored rows of one source read again are (workers query them per block):
    the table files, and the names its rows carry (one, unless the dataset predates
    identities and held the same file under two names)."""

    events: list[str]
    rejects: list[str]
    names: list[str] = field(default_factory=list)


@dataclass
class Stored:
    games: frozenset[str] = frozenset()
    reread: dict[str, StoredLines] = field(default_factory=dict)  # the name a source is read under → its rows
    ordinals: dict[str, int] = field(default_factory=dict)  # file_key → position in replay order
    streams: frozenset[str] = frozenset({STDIN_NAME})  # names of unnamed stream readings

    @classmethod
    def load(cls, store, reading: list[Identity], ingest_id: str, unnamed: Iterable[str] = ()) -> "Stored":
        """The stored game ids, the sources of this run that were read before, and the replay
        order of every source (stored ones first, by first appearance). `unnamed`: the names
        of the dataset's unnamed stream readings."""
        streams = frozenset(
            set(unnamed) | {STDIN_NAME} | {i.name for i in reading if i.kind == STREAM and not i.stream_name}
        )
        ordinals = replay_order(store.manifest["files"], streams)
        for identity in reading:
            ordinals.setdefault(file_key(identity.name, ingest_id, streams), len(ordinals))
        events = [duckdb_path(p) for p in store.table_files("events")]
        rejects = [duckdb_path(p) for p in store.table_files("rejects")]
        reread = {i.name: StoredLines(events, rejects, list(i.names)) for i in reading if i.reread}
        games: frozenset[str] = frozenset()
        if events:
            import duckdb

            con = duckdb.connect()
            storage.register_duckdb(con, events)
            ids = con.sql("select distinct game_id from read_parquet(?)", params=[events]).to_arrow_table()
            games = frozenset(ids.column(0).to_pylist())
            con.close()
        return cls(games, reread, ordinals, streams)

    def ordinal(self, name: str, ingest_id: str) -> int:
        """The replay position of this run's source `name`."""
        return self.ordinals[file_key(name, ingest_id, self.streams)]


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
    names = stored.names or [block.name]
    numbers = [b.line for b in block.long_lines]
    lo = min([block.first_line] + numbers)
    hi = max([block.first_line + block.data.count(b"\n") - 1] + numbers)
    con = _duckdb()
    storage.register_duckdb(con, stored.events + stored.rejects)
    among = ", ".join("?" * len(names))
    stored_e = (
        con.sql(
            "select * exclude (ingest_id) from read_parquet(?) "
            f"where source_file in ({among}) and source_line between ? and ?",
            params=[stored.events, *names, lo, hi],
        ).to_arrow_table()
        if stored.events
        else tables.EVENTS.empty_table()
    )
    stored_r = (
        con.sql(
            f"select * exclude (ingest_id) from read_parquet(?) where file in ({among}) and line between ? and ?",
            params=[stored.rejects, *names, lo, hi],
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
        for name, line, game in zip(
            stored_e.column("source_file").to_pylist(),
            stored_e.column("source_line").to_pylist(),
            stored_e.column("game_id").to_pylist(),
        )
        if line not in same_e
    ]
    superseded += [
        (name, line, None)
        for name, line in zip(stored_r.column("file").to_pylist(), stored_r.column("line").to_pylist())
        if line not in same_r
    ]
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


def lines_past_end(store, names: list[str], last_line: int) -> list[tuple[str, int, str | None]]:
    """Stored rows of a source read again (its rows carry `names`) beyond its new last line:
    superseded."""
    out: list[tuple[str, int, str | None]] = []
    con = _duckdb()
    events = [duckdb_path(p) for p in store.table_files("events")]
    rejects = [duckdb_path(p) for p in store.table_files("rejects")]
    storage.register_duckdb(con, events + rejects)
    among = ", ".join("?" * len(names))
    if events and names:
        rows = con.execute(
            "select source_file, source_line, game_id from read_parquet(?) "
            f"where source_file in ({among}) and source_line > ?",
            [events, *names, last_line],
        ).fetchall()
        out += [(name, line, game) for name, line, game in rows]
    if rejects and names:
        rows = con.execute(
            f"select file, line from read_parquet(?) where file in ({among}) and line > ?", [rejects, *names, last_line]
        ).fetchall()
        out += [(name, line, None) for name, line in rows]
    return out


def spill_stored_games(
    store,
    touched: set[str],
    superseded: Iterable[tuple[str, int, Any]],
    stored: Stored,
    buckets: int,
    path: Path,
    default_rules: str | None = None,
) -> list[tuple[str, str]]:
    """The stored events of the games to replay again (superseded lines left out), with the
    ordering column, spilled by bucket like a parsed block. A game_start without `rules`
    gets the ruleset the game was first replayed with (games.ruleset), so a later run's
    --rules does not change an existing game. Returns those games whose ruleset differs from
    `default_rules` (this run's, as canonical JSON), as (game_id, the ruleset's name kept):
    the caller says so."""

    files = [duckdb_path(p) for p in store.table_files("events")]
    if not touched or not files:
        route.write_buckets(_with_ordinal(tables.EVENTS.empty_table()), [0] * buckets, path)
        return []
    con = _duckdb()
    storage.register_duckdb(con, files)
    con.register("touched", pa.table({"game_id": sorted(touched)}))
    gone = sorted({f"{file}\n{line}" for file, line, _ in superseded})
    con.register("gone", pa.table({"k": pa.array(gone, pa.string())}))
    order = pa.table({"k": list(stored.ordinals), ORDER_COLUMN: pa.array(list(stored.ordinals.values()), pa.int32())})
    con.register("file_order", order)
    con.register("unnamed", pa.table({"name": pa.array(sorted(stored.streams), pa.string())}))
    game_files = [duckdb_path(p) for p in store.table_files("games")]
    rules_sql = "e.rules"
    join_games = ""
    kept_sql = "cast(null as varchar)"
    if game_files:
        join_games = (
            "left join (select game_id, ruleset, ruleset_name from read_parquet($games)) g on g.game_id = e.game_id "
            "and e.type = 'game_start' and e.rules is null"
        )
        rules_sql = "coalesce(e.rules, g.ruleset)"
        kept_sql = "case when g.ruleset is distinct from $default then g.ruleset_name end"
    cols = ", ".join(f'e."{c}"' if c != "rules" else f"{rules_sql} as rules" for c in tables.EVENTS.names)
    key = source_key_sql("unnamed")
    sql = (
        f"select {cols}, o.{ORDER_COLUMN}, {kept_sql} as kept_ruleset from read_parquet($events) e {join_games} "
        f"join file_order o on o.k = {key} "
        "where e.game_id in (select game_id from touched) "
        f"and ({key} || chr(10) || cast(e.source_line as varchar)) not in (select k from gone)"
    )
    params: dict[str, Any] = {"events": files}
    if game_files:
        params["games"] = game_files
        params["default"] = default_rules
    table = con.sql(sql, params=params).to_arrow_table()
    for name in ("touched", "gone", "file_order", "unnamed"):
        con.unregister(name)
    kept_column = table.column("kept_ruleset")
    mask = pc.is_valid(kept_column)
    kept = sorted(zip(table.column("game_id").filter(mask).to_pylist(), kept_column.filter(mask).to_pylist()))
    table = table.drop_columns(["kept_ruleset"]).cast(
        _with_ordinal(tables.EVENTS.empty_table()).schema
    )  # DuckDB names list items and time zones its way
    route.spill_ordered(table, buckets, path)
    return kept if default_rules is not None else []


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
    store,
    touched: set[str],
    superseded: list[tuple[str, int, Any]],
    staging: Path,
    ingest_id: str,
    streams: Collection[str] = (),
) -> Superseded:
    """Rewrite each stored file that holds rows to replace: derived rows of the games replayed
    again (their bad lines' findings stay with their lines), and the rows of superseded
    lines (events, rejects and those lines' findings). A superseded line is (source, line,
    game): its source is a row's name (`source_file`, `file`), or for a row of an unnamed
    stream reading (its name in `streams`) the name and ingest (`file_key`)."""
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
            drop = _drop_mask(path, table, games, lines, parse_codes, streams)
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


def _drop_mask(
    path: Path, table: str, games: pa.Array, lines: pa.Array, parse_codes: pa.Array, streams: Collection[str] = ()
):
    """Which rows of a stored file go, or None if none does (only key columns are read)."""
    if table == "events":
        cols = ["source_file", "source_line", "ingest_id"]
    elif table == "rejects":
        cols = ["file", "line", "ingest_id"]
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
        file_col, line_col = cols[:2] if table != "findings" else ("file", "line")
        source = data.column(file_col)
        if table != "findings" and streams:  # a stream reading's rows: its name and ingest
            reading = pc.binary_join_element_wise(source, data.column("ingest_id"), "\0")
            unnamed = pc.fill_null(pc.is_in(source, value_set=pa.array(sorted(streams), pa.string())), False)
            source = pc.if_else(unnamed, reading, source)
        keys = pc.binary_join_element_wise(source, pc.cast(data.column(line_col), pa.string()), "\n")
        by_line = pc.fill_null(pc.is_in(keys, value_set=lines), False)
        if table == "findings":
            by_line = pc.and_(by_line, pc.is_in(data.column("code"), value_set=parse_codes))
        drop = pc.or_(drop, by_line)
    if not pc.any(drop).as_py():
        return None
    return drop


_SOURCE_COLUMN = {"events": "source_file", "rejects": "file", "findings": "file"}


def drop_rows_of(files: dict[str, list[Any]], names: set[str], staging: Path | str, ingest_id: str) -> None:
    """Remove from this run's staged files (in place in `files`) the rows read from the
    inputs named `names`, whose content turned out to be stored already. Only the events,
    rejects and bad lines' findings hold such rows: their events were never replayed."""
    wanted = pa.array(sorted(names), pa.string())
    for table, column in _SOURCE_COLUMN.items():
        kept_paths = []
        for n, path in enumerate(files.get(table, [])):
            read = storage.read_parquet(path, columns=[column]).column(column)
            drop = pc.fill_null(pc.is_in(read, value_set=wanted), False)
            if not pc.any(drop).as_py():
                kept_paths.append(path)
                continue
            data = storage.read_parquet(path, schema=tables.TABLES[table]).filter(pc.invert(drop))
            if isinstance(path, str):  # a dataset at a URL
                storage.remove(path)
            else:
                path.unlink()
            if data.num_rows:
                out = storage.child(staging, table, f"part-{ingest_id}-kept{n:04d}.parquet")
                if isinstance(out, str):
                    with storage.open_binary(out, "wb") as fh:
                        pq.write_table(data, fh, **writer_options(data.schema))
                else:
                    pq.write_table(data, out, **writer_options(data.schema))
                kept_paths.append(out)
        files[table] = kept_paths

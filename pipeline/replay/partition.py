"""Replay one partition of whole games: Arrow events in, one Arrow table per derived table out.

This is the unit of work every engine shares: local ingest
calls it once per hash bucket of game ids, the Spark engine once per group of its
`applyInArrow`/`mapInArrow`. There is one replay engine (`Replayer`, the reference), so a
game replayed here gives exactly the records `audit` computes for it.

Contract:

- `events`: the *valid* events of a set of whole games (every event of each game present,
  bad lines excluded), with the columns of `pipeline.dataset.tables.EVENTS`. Rows are replayed in
  replay order: input file order as given, then line. If the table has a `file_ordinal`
  column (any integer type: the position of the row's source file in the ordered list of
  inputs, by first appearance), rows are first sorted by (`file_ordinal`, `source_line`), a
  stable sort; without it the rows are taken in the order given. Other extra columns are
  ignored. A game's events may be in any chunks of the table.
- `default_rules`: the ruleset of games whose `game_start` has no `rules`.
- result: `{"turns", "rolls", "decisions", "games", "game_players", "findings"}`, each a
  `pyarrow.Table` with exactly the schema of `pipeline.dataset.tables` (possibly zero rows).
  `findings` holds the replay's findings only: a bad line's `bad_json`/`bad_event` finding
  belongs to its line and is made from the rejects by the caller (`bad_line_findings`).
- pure: no I/O, no global state; the same input gives the same output row for row.

The events are turned back into `Event` records from their stored form (`ts` as a UTC
timestamp, `rules`/`scores` as JSON text, `winner` as a list), so a game replayed from a
fresh parse and a game replayed from the dataset's own `events` files are the same input.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.dataset import tables
from pipeline.dataset import batches
from pipeline.model import BadLine, Event
from pipeline.replay.engine import Replayer
from pipeline.rules import Ruleset

ORDER_COLUMN = "file_ordinal"
OUTPUT_TABLES = ("turns", "rolls", "decisions", "games", "game_players", "findings")


def replay_partition(
    events: pa.Table,
    default_rules: Ruleset,
    *,
    reference: bool = False,
    jit: bool = True,
    rejected_starts: dict[str, tuple[str, int, str]] | None = None,
) -> dict[str, pa.Table]:
    """Replay whole games given as Arrow rows; see the module docstring for the contract.

    Clean games go through the compiled fast path (`pipeline.replay.fast`; plain Python
    without `jit`), every other game through the reference engine; the result is the
    reference's, row for row (tests/test_replay_fast.py). `reference` replays everything
    with the reference engine (for comparison and benchmarks). `rejected_starts` (game_id ->
    file, line, reason of a game_start that was a bad line) lets a game's first unknown_game
    say why its start is missing."""
    events = in_replay_order(events)
    if reference:
        return reference_partition(events, default_rules, rejected_starts)
    from pipeline.replay.fast.arrow import replay_table

    return replay_table(events, default_rules, to_events=events_from_table, jit=jit, rejected_starts=rejected_starts)


def reference_partition(
    events: pa.Table, default_rules: Ruleset, rejected_starts: dict[str, tuple[str, int, str]] | None = None
) -> dict[str, pa.Table]:
    """Every game of `events` (already in replay order) by the reference Replayer."""
    replayer = Replayer(default_rules, records=True)
    for game_id, (file, line, reason) in (rejected_starts or {}).items():
        replayer.note_rejected_start(game_id, file, line, reason)
    feed = replayer.feed
    for event in events_from_table(events):
        feed(event)
    replayer.finish()
    out = replayer.drain()
    games, players = batches.games_tables(out.games)
    return {
        "turns": batches.turns_table(out.turns),
        "rolls": batches.rolls_table(out.rolls),
        "decisions": batches.decisions_table(out.decisions),
        "games": games,
        "game_players": players,
        "findings": batches.findings_table(out.findings),
    }


def in_replay_order(events: pa.Table) -> pa.Table:
    """The rows sorted by (file_ordinal, source_line) when the ordering column is there."""
    if ORDER_COLUMN not in events.column_names or events.num_rows < 2:
        return events
    files, lines = events.column(ORDER_COLUMN), events.column("source_line")
    n = events.num_rows
    a_files, b_files = files.slice(0, n - 1), files.slice(1)
    a_lines, b_lines = lines.slice(0, n - 1), lines.slice(1)
    ascending = pc.or_(pc.less(a_files, b_files), pc.and_(pc.equal(a_files, b_files), pc.less_equal(a_lines, b_lines)))
    if pc.all(ascending).as_py():
        return events  # already in order (a one-run ingest): no copy
    order = pc.sort_indices(events, sort_keys=[(ORDER_COLUMN, "ascending"), ("source_line", "ascending")])
    return events.take(order)


def events_from_table(events: pa.Table) -> Iterable[Event]:
    """Stored event rows back into the Events the reader made of them, column by column."""
    if events.num_rows == 0:
        return
    names = [name for name in tables.EVENTS.names if name not in ("ingest_id", "ts")]
    cols = {name: events.column(name).to_pylist() for name in names}
    cols["ts"] = ts_text(events.column("ts"))
    rules_cache: dict[str, tuple[Any, Ruleset]] = {}
    json_cache: dict[str, Any] = {}

    def ruleset(text: str) -> tuple[Any, Ruleset]:
        found = rules_cache.get(text)
        if found is None:
            raw = json.loads(text)
            found = rules_cache[text] = (raw, Ruleset.from_value(raw))
        return found

    def loads(text: str) -> Any:
        found = json_cache.get(text)
        if found is None:
            found = json_cache[text] = json.loads(text)
        return found

    for (
        game_id,
        seq,
        ts,
        kind,
        player,
        dice,
        points,
        total,
        players,
        rules,
        winner,
        scores,
        extra,
        file,
        line,
        turn_points,
        reason,
    ) in zip(
        cols["game_id"],
        cols["seq"],
        cols["ts"],
        cols["type"],
        cols["player"],
        cols["dice"],
        cols["points"],
        cols["total"],
        cols["players"],
        cols["rules"],
        cols["winner"],
        cols["scores"],
        cols["extra"],
        cols["source_file"],
        cols["source_line"],
        cols["turn_points"],
        cols["reason"],
    ):
        rules_raw, rules_obj = ruleset(rules) if rules is not None else (None, None)
        if winner is not None:
            winner = winner[0] if len(winner) == 1 else tuple(winner)
        yield Event(
            game_id,
            seq,
            kind,
            file,
            line,
            ts,
            player,
            None if dice is None else tuple(dice),
            points,
            total,
            None if players is None else tuple(players),
            rules_obj,
            rules_raw,
            winner,
            None if scores is None else dict(loads(scores)),
            {} if extra is None else json.loads(extra),
            turn_points,
            reason,
        )


def ts_text(ts: pa.ChunkedArray) -> list[str | None]:
    """UTC timestamps as RFC 3339 text, in Arrow: `to_pylist` of a zoned timestamp makes a
    datetime per value, which is slow; text round-trips through batches.timestamps."""
    naive = pc.cast(ts, pa.timestamp("us"))
    return pc.binary_join_element_wise(pc.cast(naive, pa.string()), "Z", "").to_pylist()


def bad_line_findings(bad: Iterable[BadLine]) -> pa.Table:
    """The findings of bad lines (one `bad_json`/`bad_event` each), made by the same engine
    code that `audit` uses, so their messages are the same."""
    replayer = Replayer(records=False)
    for item in bad:
        replayer.feed(item)
    return batches.findings_table(replayer.drain().findings)

"""Arrow schemas of the dataset's Parquet tables: the contract between ingest and stats.

Each table is the list of Parquet files the dataset's current manifest names (see
docs/dataset.md; pipeline.dataset.layout reads it). Stats SQL and the report read these
columns by name; a change here is a change of the dataset version (see docs/dataset.md).
`schemas/tables/*.json` is generated from this module (python -m pipeline.dataset.tables).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

# 2: `_current.json` is the commit point; readers read the manifest's file lists
# 3: running totals (events.turn_points, rolls.kept_turn_points), abandoned games
#    (events.reason, games.ended), round-limited rulesets
DATASET_VERSION = 5

TS = pa.timestamp("us", tz="UTC")

# seq is int64 because the reader accepts any seq up to 2**63 - 1 (log-format.md sets no
# upper bound); counts that a hostile log can inflate (rolls in a turn, players in a game)
# are int32, so no valid line can overflow a column and crash ingest.

EVENTS = pa.schema(
    [
        ("game_id", pa.string()),
        ("seq", pa.int64()),
        ("ts", TS),
        ("type", pa.string()),
        ("player", pa.string()),
        ("dice", pa.list_(pa.int8())),
        ("dice_count", pa.int8()),
        ("points", pa.int64()),  # as logged: null for a keep logged with turn_points
        ("total", pa.int64()),
        ("turn_points", pa.int64()),  # keep: the turn's claimed running total, when logged so
        ("players", pa.list_(pa.string())),
        ("rules", pa.string()),  # raw rules value of game_start as JSON text
        ("winner", pa.list_(pa.string())),
        ("scores", pa.string()),  # JSON object text
        ("reason", pa.string()),  # game_end: "finished" | "abandoned" as logged, null if absent
        ("extra", pa.string()),  # unknown fields as JSON object text, null if none
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("ingest_id", pa.string()),
    ]
)

TURNS = pa.schema(
    [
        ("game_id", pa.string()),
        ("player", pa.string()),
        ("turn", pa.int32()),
        ("start_seq", pa.int64()),
        ("end_seq", pa.int64()),
        ("rolls", pa.int32()),
        ("hot_dice", pa.int32()),
        ("outcome", pa.string()),  # bank | farkle | open (cut off, or forfeited when abandoned)
        ("end_implied", pa.bool_()),  # the ending line was lost; replay supplied the end (end_seq: the revealing roll)
        ("claimed_points", pa.int64()),
        ("corrected_points", pa.int64()),
        ("dice_left", pa.int8()),
        ("claimed_total", pa.int64()),
        ("corrected_total", pa.int64()),
        ("ts", TS),
    ]
)

ROLLS = pa.schema(
    [
        ("game_id", pa.string()),
        ("seq", pa.int64()),
        ("player", pa.string()),
        ("turn", pa.int32()),
        ("roll_in_turn", pa.int32()),
        ("dice", pa.list_(pa.int8())),
        ("dice_count", pa.int8()),
        ("scored", pa.bool_()),
        ("best_value", pa.int64()),
        ("kept", pa.list_(pa.int8())),
        ("kept_claimed", pa.int64()),  # the keep's claimed points (for a running total: its difference)
        ("kept_value", pa.int64()),
        ("ts", TS),
        ("points_before", pa.int64()),
        ("opened", pa.bool_()),
        ("kept_turn_points", pa.int64()),  # the keep's claimed running total, when logged so
        # both corrected banked totals at the turn's start: the mover's, and in a game of two
        # players the other's (null otherwise): the winning-chance state (docs/dataset.md)
        ("start_total", pa.int64()),
        ("other_start_total", pa.int64()),
        ("roll_key", pa.int64()),  # dice keys (pipeline.rules.play.dice_key) of the roll and the keep
        ("kept_key", pa.int64()),
    ]
)

DECISIONS = pa.schema(
    [
        ("game_id", pa.string()),
        ("seq", pa.int64()),
        ("player", pa.string()),
        ("turn", pa.int32()),
        ("dice_left", pa.int8()),
        ("turn_points", pa.int64()),
        ("banked_total", pa.int64()),
        ("opponents_best", pa.int64()),
        ("opened", pa.bool_()),
        ("choice", pa.string()),  # bank | roll
        ("farkled", pa.bool_()),
        ("ts", TS),
        ("turn_points_corrected", pa.int64()),
        ("start_total", pa.int64()),  # as in rolls
        ("other_start_total", pa.int64()),
        # the roll this choice's keep was taken from (the turn's last roll before the keep),
        # as rolls holds it: its dice key, its keep's dice key, the turn points before it;
        # null without a roll. The single-turn judgement reads the link here instead of
        # joining every choice to the rolls (docs/dataset.md)
        ("from_roll_key", pa.int64()),
        ("from_kept_key", pa.int64()),
        ("from_points_before", pa.int64()),
    ]
)

GAMES = pa.schema(
    [
        ("game_id", pa.string()),
        ("ruleset", pa.string()),  # canonical ruleset JSON (Ruleset.to_json)
        ("ruleset_name", pa.string()),  # standard | playmonster | custom (base X)
        ("players", pa.list_(pa.string())),
        ("claimed", pa.string()),  # {name: total} JSON
        ("corrected", pa.string()),  # {name: total} JSON
        ("winner_claimed", pa.list_(pa.string())),
        ("winner_corrected", pa.list_(pa.string())),
        ("complete", pa.bool_()),
        ("ended", pa.string()),  # finished | abandoned (the first game_end's reason); null: no game_end
        ("events", pa.int32()),
        ("first_ts", TS),
        ("last_ts", TS),
    ]
)

# One row per (game, player): the long form of claimed/corrected finals, easy to query.
GAME_PLAYERS = pa.schema(
    [
        ("game_id", pa.string()),
        ("player", pa.string()),
        ("seat", pa.int32()),  # 1-based position in `players`
        ("claimed_total", pa.int64()),
        ("corrected_total", pa.int64()),
        ("won_claimed", pa.bool_()),
        ("won_corrected", pa.bool_()),
    ]
)

FINDINGS = pa.schema(
    [
        ("game_id", pa.string()),
        ("seq", pa.int64()),
        ("file", pa.string()),
        ("line", pa.int64()),
        ("player", pa.string()),
        ("code", pa.string()),
        ("severity", pa.string()),
        ("message", pa.string()),
        ("claimed", pa.float64()),
        ("expected", pa.float64()),
        ("ts", TS),
    ]
)

REJECTS = pa.schema(
    [
        ("file", pa.string()),
        ("line", pa.int64()),
        ("code", pa.string()),  # bad_json | bad_event
        ("reason", pa.string()),
        ("raw", pa.string()),  # cut at 64 KiB
        ("raw_truncated", pa.bool_()),
        ("game_id", pa.string()),
        ("seq", pa.int64()),
        ("ingest_id", pa.string()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "events": EVENTS,
    "turns": TURNS,
    "rolls": ROLLS,
    "decisions": DECISIONS,
    "games": GAMES,
    "game_players": GAME_PLAYERS,
    "findings": FINDINGS,
    "rejects": REJECTS,
}


def schema_as_json(schema: pa.Schema) -> list[dict[str, object]]:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def write_schema_files(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in TABLES.items():
        payload = {"table": name, "dataset_version": DATASET_VERSION, "columns": schema_as_json(schema)}
        (directory / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":  # pragma: no cover - run from the repository's top: schemas/tables
    import sys

    write_schema_files(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas/tables"))

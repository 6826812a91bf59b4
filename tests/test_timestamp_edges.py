"""Timestamps at the calendar's edges (issue 11 item 2): valid RFC 3339 the audit accepts,
stored clamped to 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999Z, never failing an
ingest, a re-ingest of a stored game, or the report."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.reader import parse_line
from pipeline.dataset.timestamps import to_utc_array
from pipeline.reader.timestamps import UTC_MAX_US, UTC_MIN_US

runner = CliRunner()
UTC = dt.timezone.utc
FIRST = dt.datetime(1, 1, 1, tzinfo=UTC)
LAST = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def utc(values):
    return [None if v is None else v.astimezone(UTC) for v in to_utc_array(values).to_pylist()]


def test_the_edges_are_pythons_datetime_range():
    epoch = dt.datetime(1970, 1, 1, tzinfo=UTC)
    assert UTC_MIN_US == (FIRST - epoch) // dt.timedelta(microseconds=1)
    assert UTC_MAX_US == (LAST - epoch) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0001-01-01T00:00:00+01:00", FIRST),  # 0000-12-31T23:00Z: clamped
        ("0000-01-01T00:00:00Z", FIRST),  # year 0 is valid RFC 3339 text
        ("9999-12-31T23:59:59-01:00", LAST),  # 10000-01-01T00:59:59Z: clamped
        ("9999-12-31t23:59:59.9999999z", LAST),  # cut to microseconds: in range
        ("0001-01-01T00:59:59-01:00", dt.datetime(1, 1, 1, 1, 59, 59, tzinfo=UTC)),  # in range: exact
        ("9999-12-31T23:00:00+05:30", dt.datetime(9999, 12, 31, 17, 30, tzinfo=UTC)),
        ("2026-01-02T04:04:05.250+01:00", dt.datetime(2026, 1, 2, 3, 4, 5, 250000, tzinfo=UTC)),
        ("2026-01-02T03:04:05.123456789Z", dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
    ],
)
def test_to_utc_array(text, expected):
    assert (
        parse_line(
            json.dumps({"game_id": "g", "seq": 1, "type": "farkle", "player": "a", "ts": text}).encode(), "f", 1
        ).ts
        == text
    )  # the audit accepts it as it is
    assert utc([text, None]) == [expected, None]


def test_to_utc_array_keeps_nulls_and_rejects_nothing():
    assert to_utc_array([]).type == pa.timestamp("us", tz="UTC")
    assert utc([None, None]) == [None, None]
    # text the reader would never let through becomes null, not an exception
    assert utc(["2026-02-30T00:00:00Z", "2026-01-01T00:00:00.1234567Z", "nonsense"]) == [
        None,
        dt.datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC),
        None,
    ]


def edge_log(path: Path, game: str = "e1") -> Path:
    lines = [
        {
            "game_id": game,
            "seq": 1,
            "ts": "0001-01-01T00:00:00.1234567+01:00",
            "type": "game_start",
            "players": ["a", "b"],
        },
        {
            "game_id": game,
            "seq": 2,
            "ts": "9999-12-31T23:59:59-01:00",
            "type": "roll",
            "player": "a",
            "dice": [1, 2, 3, 4, 6, 6],
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_ingest_stores_edge_timestamps_clamped_and_report_and_stats_work(tmp_path):
    log = edge_log(tmp_path / "edge.jsonl")
    audit = json.loads(runner.invoke(app, ["audit", str(log), "-f", "json"]).stdout)
    assert {f["code"] for f in audit["findings"]} == {"missing_turn_end", "game_incomplete"}  # no bad_event
    out = tmp_path / "ds"
    result = runner.invoke(app, ["ingest", str(log), "-o", str(out), "-f", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert json.loads(result.stdout)["events"] == 2
    stored = duckdb.sql(f"select seq, ts from read_parquet('{out}/events/**/*.parquet') order by seq").fetchall()
    assert [(seq, ts.astimezone(UTC)) for seq, ts in stored] == [(1, FIRST), (2, LAST)]
    report = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    stats = runner.invoke(app, ["stats", str(out)])
    assert stats.exit_code == 0, stats.output


def test_a_stored_game_with_edge_timestamps_can_be_continued(tmp_path):
    # A second ingest replays the stored game whole, reading its events back through Python.
    out = tmp_path / "ds"
    runner.invoke(app, ["ingest", str(edge_log(tmp_path / "edge.jsonl")), "-o", str(out)])
    more = tmp_path / "more.jsonl"
    more.write_text(
        json.dumps(
            {
                "game_id": "e1",
                "seq": 3,
                "ts": "2020-01-01T00:00:00Z",
                "type": "keep",
                "player": "a",
                "dice": [1],
                "points": 100,
            }
        )
        + "\n"
    )
    result = runner.invoke(app, ["ingest", str(more), "-o", str(out), "-f", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    summary = json.loads(result.stdout)
    assert summary["events"] == 1 and summary["games_recomputed"] == 1


def test_a_column_arrow_reads_as_it_is_gets_what_the_normalising_path_gives():
    """Most columns are cast by Arrow as they are; one text Arrow refuses (a lower-case 't',
    a leap second) sends the whole column through the normalising path. Both give every
    valid text the same instant: spaces for the 'T', offsets, fractions, the years' edges."""
    rng = random.Random(7)
    texts = []
    for _ in range(3000):
        date = f"{rng.randint(0, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        fraction = rng.choice(["", ".5", ".25", ".123456", ".000001"])
        offset = rng.choice(["Z", "+00:00", "+01:00", "-05:30", "+14:00", "-12:00"])
        texts.append(f"{date}{rng.choice('T ')}{clock}{fraction}{offset}" if rng.random() > 0.05 else None)
    as_they_are = to_utc_array(texts)
    for refused in ("2026-01-01t00:00:00z", "2026-12-31T23:59:60Z", "2026-01-01T00:00:00.1234567Z"):
        normalised = to_utc_array([*texts, refused])
        assert normalised.slice(0, len(texts)).equals(as_they_are), refused
    assert as_they_are.null_count == texts.count(None)

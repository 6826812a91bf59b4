"""Ingest of sample_logs/: row counts per table against the logs themselves and README's truth."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest import ingest
from tests.test_ingest import count

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
LOGS = sorted(SAMPLES.glob("*.jsonl")) + sorted(SAMPLES.glob("*.jsonl.gz"))
BAD = {("bad_lines.jsonl", 10), ("bad_lines.jsonl", 23), ("bad_lines.jsonl", 43)}  # sample_logs/README.md

pytestmark = pytest.mark.skipif(not LOGS, reason="sample_logs/ not present")


def expected() -> dict[str, int]:
    """Counted from the files with the json module, not with the reader or replay."""
    types: Counter[str] = Counter()
    players = 0
    lines = blank = 0
    for path in LOGS:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for n, raw in enumerate(data.decode().splitlines(), start=1):
            lines += 1
            if not raw.strip():
                blank += 1
                continue
            if (path.name, n) in BAD:
                continue
            event = json.loads(raw)
            types[event["type"]] += 1
            players += len(event.get("players", ()))
    return {
        "lines": lines,
        "blank": blank,
        "events": sum(types.values()),
        "games": types["game_start"],
        "game_players": players,
        "rolls": types["roll"],
        "decisions": types["keep"],  # every keep is followed by a roll or a bank: one choice each
        "turns": types["bank"] + types["farkle"],  # all sample games are complete: no open turn
    }


def test_sample_logs_row_counts(tmp_path):
    out = tmp_path / "ds"
    s = ingest([str(p) for p in LOGS], out)
    want = expected()
    assert s.lines == want["lines"] and s.blank_lines == want["blank"]
    assert s.events == want["events"] == count(out, "events")
    assert s.rejects == 3 == count(out, "rejects")
    assert s.duplicates == 0 and s.invariant_holds
    for table in ("games", "game_players", "rolls", "decisions", "turns"):
        assert count(out, table) == want[table], table
    findings = duckdb.sql(
        f"select code, regexp_extract(file, '[^/]*$'), line, seq from read_parquet('{out}/findings/*.parquet') order by 2, 3"
    ).fetchall()
    assert findings == [
        ("bad_json", "bad_lines.jsonl", 10, None),
        ("bad_event", "bad_lines.jsonl", 23, 22),
        ("bad_event", "bad_lines.jsonl", 43, 41),
        ("cross_roll_meld", "disputed_game.jsonl", 178, 178),
    ]
    rejects = duckdb.sql(f"select line, code from read_parquet('{out}/rejects/*.parquet') order by line").fetchall()
    assert rejects == [(10, "bad_json"), (23, "bad_event"), (43, "bad_event")]
    assert (
        count(out, "games")
        == duckdb.sql(f"select count(*) from read_parquet('{out}/games/*.parquet') where complete").fetchall()[0][0]
    )


def test_the_disputed_game_result(tmp_path):
    out = tmp_path / "ds"
    ingest([str(SAMPLES / "disputed_game.jsonl")], out)
    game = duckdb.sql(
        f"select winner_claimed, winner_corrected, claimed, corrected from read_parquet('{out}/games/*.parquet')"
    ).fetchall()[0]
    assert game[0] == ["bo"] and game[1] == ["ana"]
    assert json.loads(game[2])["bo"] == 11050 and json.loads(game[3])["bo"] == 10550
    bo = duckdb.sql(
        f"select claimed_total, corrected_total, won_claimed, won_corrected from read_parquet('{out}/game_players/*.parquet') "
        "where player = 'bo'"
    ).fetchall()
    assert bo == [(11050, 10550, True, False)]


def test_the_split_sample_game_ingested_in_two_runs_equals_one(tmp_path):
    parts = [str(SAMPLES / "split_game-1.jsonl"), str(SAMPLES / "split_game-2.jsonl")]
    from tests.test_ingest import everything

    ingest(parts, tmp_path / "one")
    first = ingest(parts[:1], tmp_path / "inc")
    codes = duckdb.sql(f"select code from read_parquet('{tmp_path}/inc/findings/*.parquet') order by 1").fetchall()
    assert codes == [("game_incomplete",), ("missing_turn_end",)]  # README: part 1 alone
    assert first.exit_code == 1
    second = ingest(parts[1:], tmp_path / "inc")
    assert second.games_recomputed == 1 and second.exit_code == 0
    assert everything(tmp_path / "inc") == everything(tmp_path / "one")
    assert count(tmp_path / "inc", "findings") == 0

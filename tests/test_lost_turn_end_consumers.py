"""Issue 15 through every consumer: ingest's tables, stats and the report's dispute view.

The logs are small and hand-built (tests/gamelog.py), so each figure below is known from the
log and log-format.md, not from the code under test: a lost bank (bo keeps 1 and 5 for 150,
om's six dice reveal it), a lost farkle in a penalty game, and events logged under a name
that is not a player of the game (the "phantom player" of issue 13).
"""

from __future__ import annotations

import datetime as dt
import re

import duckdb
import pytest

from pipeline.audit.run import audit_stream
from pipeline.ingest.run import ingest
from pipeline.report import build_report
from pipeline.stats import compute
from tests.gamelog import Log

GENERATED = dt.datetime(2026, 3, 3, 12, 0, tzinfo=dt.timezone.utc)
BUST = [2, 2, 3, 3, 4, 6]


def lost_bank() -> Log:
    """g1: bo keeps 1,5 (150), the bank is lost; om banks 1000; bo banks 600 (total 750); om busts.
    opening 0, so the implied bank is worth its 150 by the dice too."""
    log = Log("g1", players=("bo", "om"), rules={"base": "standard", "opening": 0}, ts="2026-03-01T10:00:00Z")
    log.roll("bo", [1, 5, 2, 3, 4, 4]).keep("bo", [1, 5], 150)  # seq 2, 3
    log.roll("om", [1, 1, 1, 2, 3, 4]).keep("om", [1, 1, 1], 1000).bank("om", 1000, 1000)  # seq 4-6
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 750)  # seq 7-9
    return log.bust("om")  # seq 10, 11


def lost_farkle() -> Log:
    """g2: penalty 500 after 2 in a row; ana busts twice (the 2nd farkle line lost: -500)."""
    log = Log(
        "g2",
        players=("ana", "bo"),
        rules={"base": "standard", "farkle_penalty": 500, "penalty_after": 2},
        ts="2026-03-02T10:00:00Z",
    )
    log.bust("ana", total=0)  # seq 2, 3
    log.opening_turn("bo")  # seq 4-6
    log.roll("ana", BUST)  # seq 7: farkle line lost
    return log.opening_turn("bo", total_before=600)  # seq 8-10: reveals it


def phantom() -> Log:
    """g3: a roll logged as 'zed' and a keep as 'Ana' inside ana's turn; no such players."""
    log = Log("g3", players=("ana", "bo"), rules="standard", ts="2026-03-03T10:00:00Z")
    log.roll("zed", [6, 6, 6, 2, 3, 4]).keep("Ana", [6, 6, 6], 600).bank("ana", 600, 600)
    return log.opening_turn("bo")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("lost")
    path = root / "logs.jsonl"
    path.write_text("\n".join(lost_bank().lines + lost_farkle().lines + phantom().lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def dataset(logs):
    out = logs.parent / "ds"
    ingest([str(logs)], out)
    return out


def table(dataset, name: str, order: str) -> list[tuple]:
    con = duckdb.connect()
    return con.execute(f"select * from read_parquet('{dataset}/{name}/**/*.parquet') order by {order}").fetchall()


def test_turns_table_marks_implied_ends(dataset):
    con = duckdb.connect()
    rows = con.execute(
        f"select game_id, player, turn, outcome, end_seq, end_implied, claimed_points, corrected_points, "
        f"claimed_total, corrected_total from read_parquet('{dataset}/turns/**/*.parquet') "
        "where game_id in ('g1', 'g2') order by game_id, start_seq"
    ).fetchall()
    assert rows == [
        ("g1", "bo", 1, "bank", 4, True, 150, 150, 150, 150),
        ("g1", "om", 1, "bank", 6, False, 1000, 1000, 1000, 1000),
        ("g1", "bo", 2, "bank", 9, False, 600, 600, 750, 750),
        ("g1", "om", 2, "farkle", 11, False, 0, 0, 1000, 1000),
        ("g2", "ana", 1, "farkle", 3, False, 0, 0, 0, 0),
        ("g2", "bo", 1, "bank", 6, False, 600, 600, 600, 600),
        ("g2", "ana", 2, "farkle", 8, True, 0, 0, -500, -500),  # 2nd in a row: 500 off; ended by seq 8
        ("g2", "bo", 2, "bank", 10, False, 600, 600, 1200, 1200),
    ]


def test_dataset_findings_equal_the_audit_and_games_have_list_winners(dataset, logs):
    con = duckdb.connect()
    stored = con.execute(
        f"select game_id, seq, line, player, code from read_parquet('{dataset}/findings/**/*.parquet') "
        "order by game_id, seq, code"
    ).fetchall()
    report = audit_stream(_items(logs))
    audited = sorted((f.game_id, f.seq, f.line, f.player, f.code) for f in report.findings)
    assert stored == audited
    assert ("g1", 4, 4, "bo", "missing_turn_end") in stored
    games = con.execute(
        f"select game_id, winner_claimed, winner_corrected from read_parquet('{dataset}/games/**/*.parquet') "
        "order by game_id"
    ).fetchall()
    assert games == [("g1", None, ["om"]), ("g2", None, ["bo"]), ("g3", None, ["ana", "bo"])]


def _items(path):
    from pipeline.reader.parse import parse_line

    items = []
    for i, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if raw:
            items.append(parse_line(raw, str(path), i))
    return items


def test_decisions_count_the_implied_bank_once(dataset):
    con = duckdb.connect()
    rows = con.execute(
        f"select seq, player, choice from read_parquet('{dataset}/decisions/**/*.parquet') "
        "where game_id = 'g1' order by seq"
    ).fetchall()
    assert rows == [(3, "bo", "bank"), (5, "om", "bank"), (8, "bo", "bank")]


def test_stats_count_each_turn_once_and_show_no_phantom_player(dataset):
    tables = compute(dataset)
    summary = {r["player"]: r for r in tables["player_summary"].to_pylist() if r["scope"] == "player"}
    assert set(summary) == {"ana", "bo", "om"}  # no 'zed', no 'Ana'
    # bo: g1 turns 150 + 600, g2 turns 600 + 600, g3 turn 600; om: 1000, farkle
    assert (summary["bo"]["turns"], summary["bo"]["points"], summary["bo"]["banks"]) == (5, 2550, 5)
    assert (summary["om"]["turns"], summary["om"]["farkled_turns"], summary["om"]["points"]) == (2, 1, 1000)
    # ana: g2 two farkles (one implied), g3 a 600 bank; the implied farkle's roll is one roll
    assert (summary["ana"]["turns"], summary["ana"]["farkled_turns"], summary["ana"]["rolls"]) == (3, 2, 3)
    assert summary["ana"]["corrected_points"] == -500 + 600
    findings = {(r["player"], r["code"]) for r in tables["player_findings"].to_pylist() if r["scope"] == "player"}
    assert findings == {("bo", "missing_turn_end"), ("ana", "missing_turn_end")}


def test_dispute_view_labels_the_implied_end_and_shows_the_finding_once(dataset):
    page = build_report(dataset, game="g1", generated=GENERATED)
    view = re.search(r'<section id="dispute".*?</section>', page, re.S).group(0)
    rows = re.findall(r'<tr class="(\w*)" id="g1-seq-(\d+)">(.*?)</tr>', view, re.S)
    # g1 has no game_end: its game_incomplete warning falls in the last turn
    assert [(cls, seq) for cls, seq, _ in rows] == [("", "2"), ("error", "4"), ("", "7"), ("warning", "10")]
    assert "bank (implied: the bank line is missing)" in rows[0][2]
    assert "missing_turn_end" not in rows[0][2] and rows[1][2].count("missing_turn_end") == 1


def race_lost_bank() -> Log:
    """g4: g1 at a target of 2,000, so the two-player race is solved in a moment: bo's bank
    of 150 is lost and om's six dice reveal it (the implied bank ends bo's turn at seq 4, the
    seq om's turn starts at)."""
    log = Log("g4", players=("bo", "om"), rules={"base": "standard", "opening": 0, "target": 2000})
    log.roll("bo", [1, 5, 2, 3, 4, 4]).keep("bo", [1, 5], 150)  # seq 2, 3
    log.roll("om", [1, 1, 1, 2, 3, 4]).keep("om", [1, 1, 1], 1000).bank("om", 1000, 1000)  # seq 4-6
    log.roll("bo", [6, 6, 6, 2, 3, 4]).keep("bo", [6, 6, 6], 600).bank("bo", 600, 750)  # seq 7-9
    return log.bust("om")  # seq 10, 11


def test_winning_chance_sees_the_implied_bank_at_the_turn_it_starts(tmp_path, monkeypatch):
    """om's first turn starts with the roll that reveals bo's lost bank: bo has banked 150
    by then, so both yardsticks' two-player state is (om 0, bo 150), not (0, 0), in the
    stats (fct_race_choices) and in the coach (audit --coach) alike."""
    from pipeline.reader.parse import parse_line
    from pipeline.solved import tables as race_tables
    from pipeline.stats import run, session
    from pipeline.strategy.judge import coach_game_turns
    from pipeline.strategy.race import Race
    from pipeline.strategy.race_coach import judge_race

    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))
    race_tables.race.cache_clear()
    log = race_lost_bank()
    path = tmp_path / "g4.jsonl"
    path.write_text("\n".join(log.lines) + "\n", encoding="utf-8")
    ingest([str(path)], tmp_path / "ds")
    expected = {  # (player, seq, kind) -> (mover's total, other's total) at the turn's start
        ("bo", 3, "keep"): (0, 0),
        ("bo", 3, "action"): (0, 0),
        ("om", 5, "keep"): (0, 150),
        ("om", 5, "action"): (0, 150),
        ("bo", 8, "keep"): (150, 1000),
        ("bo", 8, "action"): (150, 1000),
    }
    with session(tmp_path / "ds", with_odds=False, with_policy=True) as con:
        rows = run(con, "fct_race_choices").to_pylist()
        stored = con.execute(  # what the replay wrote as om's turn opened, the lost bank supplied
            "select start_total, other_start_total from src_rolls where seq = 4"
        ).fetchall()
    assert stored == [(0, 150)]
    stats = {(r["player"], r["seq"] + (1 if r["kind"] == "keep" else 0), r["kind"]): r for r in rows}
    assert {k: (r["mover_total"], r["other_total"]) for k, r in stats.items() if k in expected} == expected
    assert all(stats[k]["race_judged"] for k in expected)
    items = [parse_line(raw.encode(), str(path), i) for i, raw in enumerate(log.lines, 1)]
    result, _, judged, turns = coach_game_turns(items, "g4")
    coach = judge_race(Race(race_tables.load(result.ruleset)), judged, turns, result.players)
    by_seq = {(kind, seq): (j.mover_total, j.other_total) for (kind, seq), j in coach.items()}
    assert by_seq[("keep", 4)] == by_seq[("action", 5)] == (0, 150)
    race_tables.race.cache_clear()

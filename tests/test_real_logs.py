"""Real logs: running totals, abandoned games, round limits, and the spec points they settled.

log-format.md's "Running totals", "Abandoned games" and "game over" sections, rules.md's
`rounds` and null `target`, and the reading rules they came with (a space for the `T` and
leap seconds in `ts`, a second game_start that uses up no seq, a bad line's integer seq,
the numbers each finding carries, a rejected game_start named once). Each case is checked
through the reference replay and the fast path (kernel + reference, row for row), and the
simulator's games of each kind through the independent oracle.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.model import BadLine, Event
from pipeline.reader import parse_line
from pipeline.replay import audit_items
from pipeline.replay.fast.arrow import event_columns
from pipeline.replay.fast.runner import FastReplay
from pipeline.rules import Ruleset, RulesetError
from pipeline.rules.play import NO_ROUND_LIMIT, NO_TARGET, game_over, rounds_played_out, running_claim
from pipeline.simulate import simulate
from pipeline.simulate.check import check_game
from tests.test_replay_fast import assert_same_tables, events_table

STANDARD = Ruleset.builtin("standard")
ROUNDS = Ruleset.from_value({"target": None, "rounds": 2})


def items(lines: list[str], file: str = "log.jsonl") -> list:
    out = []
    for n, line in enumerate(lines, 1):
        item = parse_line(line.encode(), file, n)
        if item is not None:
            out.append(item)
    return out


def audit(lines: list[str], rules: Ruleset = STANDARD):
    """The reference's findings and results, after holding the fast path to them."""
    out = audit_items(items(lines), rules)
    assert_same_tables(events_table(lines), rules)
    return out


def codes(out) -> list[tuple[int | None, str]]:
    return [(f.seq, f.code) for f in out.findings]


def game(gid: str = "g1", players=("ana", "bo"), rules=None, **start) -> list[dict]:
    ev = {"game_id": gid, "seq": 1, "type": "game_start", "players": list(players), **start}
    if rules is not None:
        ev["rules"] = rules
    return [ev]


def add(events: list[dict], kind: str, **fields) -> list[dict]:
    events.append({"game_id": events[0]["game_id"], "seq": len(events) + 1, "type": kind, **fields})
    return events


def lines_of(events: list[dict]) -> list[str]:
    return [json.dumps(e) for e in events]


def ana_banks_750(events: list[dict], *, running: bool) -> list[dict]:
    """ana: a straight kept as 1 and 5, then three 6s, banked: 750."""
    field = "turn_points" if running else "points"
    add(events, "roll", player="ana", dice=[1, 5, 2, 3, 4, 6])
    add(events, "keep", player="ana", dice=[1, 5], **{field: 150})
    add(events, "roll", player="ana", dice=[6, 6, 6, 2])
    add(events, "keep", player="ana", dice=[6, 6, 6], **{field: 750 if running else 600})
    return add(events, "bank", player="ana", points=750, total=750)


# ---- running totals ----------------------------------------------------------------------
def test_the_spec_example_in_running_totals_is_clean_in_both_paths():
    ev = ana_banks_750(game(), running=True)
    add(ev, "roll", player="bo", dice=[2, 2, 3, 3, 4, 6])
    add(ev, "farkle", player="bo")
    add(ev, "game_end", winner="ana", scores={"ana": 750, "bo": 0})
    out = audit(lines_of(ev), Ruleset.from_value({"target": 500}))
    assert codes(out) == []
    assert out.rolls[1].kept_claimed == 600 and out.rolls[1].kept_turn_points == 750


def test_a_running_total_that_jumps_wrongly_is_one_scoring_error_with_the_difference():
    ev = game()
    add(ev, "roll", player="ana", dice=[1, 5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[1], turn_points=100)
    add(ev, "roll", player="ana", dice=[5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[5], turn_points=50)  # reset: claims 50 - 100 = -50
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4])
    add(ev, "keep", player="ana", dice=[1], turn_points=150)  # +100 again: right
    add(ev, "bank", player="ana", points=150, total=150)
    out = audit(lines_of(ev), Ruleset.from_value({"opening": 0}))
    [f, *rest] = out.findings
    assert (f.seq, f.code, f.claimed, f.expected) == (5, "scoring_error", -50, 50)
    assert [x.code for x in rest] == ["game_incomplete"]


def test_hot_dice_do_not_reset_the_running_total_and_kinds_mix():
    ev = game()
    add(ev, "roll", player="ana", dice=[1, 1, 5, 5, 2, 2])
    add(ev, "keep", player="ana", dice=[1, 1, 5, 5, 2, 2], points=1500)  # three pairs: hot dice
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6])
    add(ev, "keep", player="ana", dice=[1], turn_points=1600)
    add(ev, "roll", player="ana", dice=[5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[5], points=50)
    add(ev, "roll", player="ana", dice=[5, 2, 3, 4])
    add(ev, "keep", player="ana", dice=[5], turn_points=1700)
    add(ev, "bank", player="ana", points=1700, total=1700)
    assert codes(audit(lines_of(ev))) == [(10, "game_incomplete")]


def test_an_earlier_keep_with_a_finding_still_counts_in_the_running_total():
    ev = game()
    add(ev, "roll", player="ana", dice=[1, 5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[1], turn_points=200)  # worth 100: scoring_error, claims 200
    add(ev, "roll", player="ana", dice=[5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[5], turn_points=250)  # 250 - 200 = 50: right
    add(ev, "bank", player="ana", points=250, total=250)
    out = audit(lines_of(ev), Ruleset.from_value({"opening": 0}))
    assert [(f.seq, f.code, f.claimed, f.expected) for f in out.findings][:1] == [(3, "scoring_error", 200, 100)]
    assert codes(out)[1:] == [(6, "game_incomplete")]


def test_a_running_total_that_melds_across_rolls_is_a_cross_roll_meld():
    ev = game()
    add(ev, "roll", player="ana", dice=[5, 5, 2, 3, 4, 6])
    add(ev, "keep", player="ana", dice=[5, 5], turn_points=100)
    add(ev, "roll", player="ana", dice=[5, 2, 3, 4])
    add(ev, "keep", player="ana", dice=[5], turn_points=500)  # claims 400: three 5s less the 100
    out = audit(lines_of(ev))
    assert [(f.seq, f.code, f.claimed, f.expected) for f in out.findings][0] == (5, "cross_roll_meld", 400, 50)


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"points": 100, "turn_points": 100}, "both 'points' and 'turn_points'"),
        ({}, "missing field 'points' for a keep (or 'turn_points'"),
        ({"turn_points": None}, "'turn_points' must be an integer"),
    ],
)
def test_a_keep_needs_exactly_one_of_points_and_turn_points(fields, words):
    line = json.dumps({"game_id": "g1", "seq": 3, "type": "keep", "player": "ana", "dice": [1], **fields})
    bad = parse_line(line.encode(), "log.jsonl", 3)
    assert type(bad) is BadLine and bad.code == "bad_event" and words in bad.reason
    assert running_claim(450, 300) == 150 and running_claim(50, 300) == -250


# ---- abandoned games ---------------------------------------------------------------------
def abandoned(end: dict, *, mid_turn: bool = True, penalty: bool = False) -> list[dict]:
    ev = ana_banks_750(game(), running=False)
    add(ev, "roll", player="bo", dice=[2, 2, 3, 3, 4, 6])
    add(ev, "farkle", player="bo", **({"total": 0} if penalty else {}))
    if mid_turn:
        add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6])
        add(ev, "keep", player="ana", dice=[1], points=100)
    ev.append({"game_id": "g1", "seq": len(ev) + 1, "type": "game_end", "reason": "abandoned", **end})
    return ev


@pytest.mark.parametrize(
    "end",
    [{}, {"winner": None}, {"winner": "ana"}, {"winner": ["ana"], "scores": {"ana": 750, "bo": 0}}],
    ids=["bare", "null winner", "leader named", "scores given"],
)
def test_an_abandoned_game_ends_without_target_or_final_round(end):
    out = audit(lines_of(abandoned(end)))
    assert codes(out) == []  # the open turn is forfeited: no missing_turn_end
    [result] = out.games
    assert (result.ended, result.winner_corrected, result.complete) == ("abandoned", None, True)
    assert result.claimed == {"ana": 750, "bo": 0} and result.corrected == {"ana": 750, "bo": 0}
    assert result.to_dict()["ended"] == "abandoned"
    forfeited = out.turns[-1]
    assert (forfeited.outcome, forfeited.end_seq, forfeited.corrected_points) == ("open", None, 0)


def test_an_abandoned_game_naming_another_winner_or_wrong_scores_is_flagged():
    out = audit(lines_of(abandoned({"winner": "bo"})))
    assert codes(out) == [(11, "wrong_winner")]
    out = audit(lines_of(abandoned({"winner": ["ana", "bo"]})))
    assert codes(out) == [(11, "wrong_winner")]
    out = audit(lines_of(abandoned({"winner": "ana", "scores": {"ana": 850, "bo": 0}})))
    assert [(f.seq, f.code, f.claimed, f.expected) for f in out.findings] == [(11, "final_score_mismatch", 850, 750)]


def test_a_forfeited_turn_is_no_farkle_and_costs_no_penalty():
    rules = Ruleset.from_value({"farkle_penalty": 500, "penalty_after": 1})
    ev = ana_banks_750(game(), running=False)
    add(ev, "roll", player="bo", dice=[2, 2, 3, 3, 4, 6])  # bo's turn left open after a roll
    add(ev, "game_end", reason="abandoned")
    out = audit(lines_of(ev), rules)
    assert codes(out) == [(7, "missed_farkle")] or codes(out) == []
    assert out.games[0].claimed == {"ana": 750, "bo": 0} and out.games[0].corrected == {"ana": 750, "bo": 0}


def test_a_finished_game_end_before_the_end_and_an_unknown_reason():
    ev = abandoned({"winner": "ana", "scores": {"ana": 750, "bo": 0}})
    ev[-1]["reason"] = "finished"
    out = audit(lines_of(ev))
    assert codes(out) == [(11, "wrong_winner"), (11, "missing_turn_end")]
    assert out.games[0].ended == "finished" and out.games[0].winner_corrected == ["ana"]
    bad = parse_line(json.dumps({**ev[-1], "reason": "quit"}).encode(), "log.jsonl", 11)
    assert type(bad) is BadLine and "'reason' must be \"finished\" or \"abandoned\"" in bad.reason
    for finished in ({"reason": "finished"}, {"winner": None, "scores": {}}):
        line = json.dumps({"game_id": "g1", "seq": 9, "type": "game_end", **finished})
        assert type(parse_line(line.encode(), "log.jsonl", 9)) is BadLine


def test_a_game_without_game_end_has_ended_null():
    ev = ana_banks_750(game(), running=False)
    [result] = audit(lines_of(ev)).games
    assert (result.ended, result.complete) == (None, False)


# ---- round limits and a null target -------------------------------------------------------
def test_round_limits_end_the_game_after_every_player_played_them():
    assert game_over(-1, 0, 2, 2) and not game_over(-1, 0, 1, 2) and not game_over(-1, 0, 9, NO_ROUND_LIMIT)
    assert rounds_played_out(3, 3) and not rounds_played_out(3, NO_ROUND_LIMIT)
    rules = {"target": None, "rounds": 1}
    ev = game(rules=rules)
    ana_banks_750(ev, running=True)
    add(ev, "roll", player="bo", dice=[2, 2, 3, 3, 4, 6])
    add(ev, "farkle", player="bo")
    clean = ev + [{"game_id": "g1", "seq": 9, "type": "game_end", "winner": "ana", "scores": {"ana": 750, "bo": 0}}]
    assert codes(audit(lines_of(clean))) == []
    late = ev + [{"game_id": "g1", "seq": 9, "type": "roll", "player": "ana", "dice": [1, 1, 1, 2, 3, 4]}]
    assert codes(audit(lines_of(late)))[:1] == [(9, "play_after_game_over")]
    early = ev[:6] + [{"game_id": "g1", "seq": 7, "type": "game_end", "winner": "ana", "scores": {"ana": 750, "bo": 0}}]
    out = audit(lines_of(early))
    assert codes(out) == [(7, "wrong_winner")]
    assert "round 1 was played out (bo still to play)" in out.findings[0].message


def test_with_target_and_rounds_whichever_comes_first():
    rules = {"target": 500, "rounds": 5}
    ev = game(rules=rules)
    ana_banks_750(ev, running=False)  # reaches the target: bo has the final turn
    add(ev, "roll", player="bo", dice=[2, 2, 3, 3, 4, 6])
    add(ev, "farkle", player="bo")
    add(ev, "game_end", winner="ana", scores={"ana": 750, "bo": 0})
    assert codes(audit(lines_of(ev))) == []


def test_rulesets_with_rounds_or_no_target():
    assert ROUNDS.target is None and ROUNDS.rounds == 2 and NO_TARGET == 0
    assert Ruleset.from_value(ROUNDS.to_dict()) == ROUNDS
    assert Ruleset.from_value({"rounds": 10}).target == 10000
    for bad in ({"target": None}, {"target": None, "rounds": None}, {"rounds": 0}, {"rounds": 1001}, {"rounds": 1.5}):
        with pytest.raises(RulesetError):
            Ruleset.from_value(bad)


def test_rules_show_says_when_the_game_is_over():
    runner = CliRunner()
    result = runner.invoke(app, ["rules", "show", '{"target": null, "rounds": 10}', "-f", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["rules"]["target"] is None and shown["rules"]["rounds"] == 10
    assert shown["game_over"] == "after 10 rounds (every player has played 10 turns); no target"
    result = runner.invoke(app, ["rules", "show", '{"rounds": 3}'])
    assert "after 3 rounds (every player has played 3 turns), or at the end of the final round" in result.stdout
    result = runner.invoke(app, ["rules", "show", '{"target": null}'])
    assert result.exit_code == 2 and "both null" in result.stderr


# ---- the simulator, its oracle and both paths --------------------------------------------
def simulated(games: int, seed: int, **kw) -> list[str]:
    buffer = io.BytesIO()
    simulate(buffer, games=games, seed=seed, **kw)
    return buffer.getvalue().decode().splitlines()


MIXED = (STANDARD, ROUNDS, Ruleset.from_value({"rounds": 4, "farkle_penalty": 300, "penalty_after": 2}))


def test_simulated_running_totals_abandoned_and_round_limited_games_are_clean_everywhere():
    lines = simulated(60, 21, rules=MIXED, tables=3, running_totals=0.5, abandon=0.4)
    events = [json.loads(line) for line in lines]
    assert any("turn_points" in e for e in events)
    ended = [e for e in events if e["type"] == "game_end"]
    assert sum(e.get("reason") == "abandoned" for e in ended) >= 10
    assert any("winner" not in e for e in ended) and any("scores" not in e for e in ended)
    got = assert_same_tables(events_table(lines))
    assert got["findings"].num_rows == 0
    assert set(got["games"].column("ended").to_pylist()) == {"finished", "abandoned"}
    fast = FastReplay(STANDARD)
    fast.feed(event_columns(events_table(lines), fast, STANDARD))
    assert fast.clean().all()  # the kernel replays all three kinds itself
    by_game: dict[str, list[dict]] = {}
    for e in events:
        by_game.setdefault(e["game_id"], []).append(e)
    assert all(check_game(g) == [] for g in by_game.values())


@pytest.mark.parametrize("codes", [None, ("scoring_error", "wrong_winner", "cross_roll_meld", "bank_mismatch")])
def test_injected_errors_in_such_games_match_the_manifest(tmp_path, codes):
    log, manifest = tmp_path / "inj.jsonl", tmp_path / "truth.jsonl"
    kw = {} if codes is None else {"inject_codes": codes}
    simulate(log, 120, 8, rules=MIXED, inject_rate=0.8, running_totals=0.6, abandon=0.4, manifest=manifest, **kw)
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    if codes is not None:  # the new variants really ran
        assert any("running total reset" in r["what"] for r in rows)
        assert any("without saying it was abandoned" in r["what"] for r in rows)
        assert any("before the game was over" in r["what"] for r in rows)
    result = CliRunner().invoke(app, ["audit", str(log), "-f", "json"])
    found = sorted(
        (str(f["game_id"]), str(f["seq"]), f["code"], f["line"]) for f in json.loads(result.stdout)["findings"]
    )
    assert found == sorted((str(r["game_id"]), str(r["seq"]), r["code"], r["line"]) for r in rows)
    lines = log.read_text().splitlines()
    assert_same_tables(events_table(lines))


def test_simulate_command_options(tmp_path):
    out = tmp_path / "g.jsonl"
    args = ["simulate", "-n", "20", "--seed", "2", "-o", str(out), "--running-totals", "1", "--abandon", "1"]
    result = CliRunner().invoke(app, [*args, "-r", '{"target": null, "rounds": 3}'])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert all("points" not in e for e in events if e["type"] == "keep")
    assert all(e.get("reason") == "abandoned" for e in events if e["type"] == "game_end")
    result = CliRunner().invoke(app, ["simulate", "-n", "1", "--abandon", "2"])
    assert result.exit_code == 2 and "--abandon" in result.stderr


# ---- the settled spec points ----------------------------------------------------------------
def test_ts_with_a_space_and_leap_seconds(tmp_path):
    ok = ["2026-01-02 03:04:05Z", "2016-12-31T23:59:60Z", "2016-12-31 23:59:60.5z", "2017-01-01T05:29:60+05:30"]
    for ts in ok:
        line = json.dumps({"game_id": "g", "seq": 1, "type": "game_start", "players": ["a"], "ts": ts})
        assert type(parse_line(line.encode(), "f", 1)) is Event, ts
    for ts in ["2016-12-31T23:58:60Z", "2016-12-31T23:59:60+01:00", "2016-12-31T23:59:61Z"]:
        line = json.dumps({"game_id": "g", "seq": 1, "type": "game_start", "players": ["a"], "ts": ts})
        assert type(parse_line(line.encode(), "f", 1)) is BadLine, ts
    ev = game(ts="2016-12-31T23:59:60Z")
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6], ts="2016-12-31 23:59:59.5Z")
    add(ev, "keep", player="ana", dice=[1], points=100, ts="2017-01-01T00:59:60.25+01:00")
    log = tmp_path / "leap.jsonl"
    log.write_text("\n".join(lines_of(ev)) + "\n")
    assert codes(audit(lines_of(ev)))[0][1] == "missing_turn_end"  # the game started: no unknown_game
    data = tmp_path / "ds"
    assert CliRunner().invoke(app, ["ingest", str(log), "--out", str(data)]).exit_code == 1
    [events_file] = open_dataset(data).table_files("events")
    stamps = [t.isoformat() for t in pq.read_table(events_file).column("ts").to_pylist()]
    assert stamps == ["2016-12-31T23:59:59.999999+00:00", "2016-12-31T23:59:59.500000+00:00"] + [
        "2016-12-31T23:59:59.999999+00:00"
    ]


def test_a_second_game_start_uses_up_no_seq():
    ev = game()
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6])
    again = {"game_id": "g1", "seq": 3, "type": "game_start", "players": ["ana", "bo"]}
    keep = {"game_id": "g1", "seq": 3, "type": "keep", "player": "ana", "dice": [1], "points": 100}
    out = audit(lines_of(ev + [again, keep]))
    assert [(f.seq, f.code, f.claimed, f.expected) for f in out.findings][:1] == [(3, "seq_error", 3, 3)]
    assert [f.code for f in out.findings[1:]] == ["missing_turn_end", "game_incomplete"]  # the keep at 3 is due


def test_a_bad_lines_finding_keeps_an_integer_seq_even_zero_or_negative():
    lines = [
        json.dumps({"game_id": "g1", "seq": 0, "type": "roll", "player": "ana", "dice": [1]}),
        json.dumps({"game_id": "g1", "seq": -4, "type": "roll", "player": "ana", "dice": [1]}),
        json.dumps({"game_id": "g1", "seq": 3.0, "type": "roll", "player": "ana", "dice": [7]}),
        json.dumps({"game_id": "g1", "seq": "3", "type": "roll", "player": "ana", "dice": [1]}),
    ]
    out = audit_items(items(lines))
    assert [(f.seq, f.code) for f in out.findings] == [
        (0, "bad_event"),
        (-4, "bad_event"),
        (3, "bad_event"),
        (None, "bad_event"),
    ]


def test_a_rejected_game_start_is_named_once_by_audit_and_ingest(tmp_path):
    ev = game(ts="2026-02-30T10:00:00Z")
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6])
    add(ev, "keep", player="ana", dice=[1], points=100)
    log = tmp_path / "day1.jsonl"
    log.write_text("\n".join(lines_of(ev)) + "\n")
    for replay in ("reference", "fast"):
        env = {"FARKLE_LOGS_REPLAY": replay} if replay == "reference" else {}
        result = CliRunner().invoke(app, ["audit", str(log), "-f", "json"], env=env)
        findings = json.loads(result.stdout)["findings"]
        assert [f["code"] for f in findings] == ["bad_event", "unknown_game", "unknown_game"]
        assert f"whose game_start at {log}:1 was rejected: 'ts' is not an RFC 3339" in findings[1]["message"]
        assert findings[2]["message"].endswith("whose game_start was rejected (see seq 2)")
    data = tmp_path / "ds"
    CliRunner().invoke(app, ["ingest", str(log), "--out", str(data)])
    stored = [pq.read_table(f).to_pylist() for f in open_dataset(data).table_files("findings")]
    messages = sorted(f["message"] for rows in stored for f in rows if f["code"] == "unknown_game")
    assert len(messages) == 2 and f"game_start at {log}:1 was rejected" in messages[0]
    assert messages[1].endswith("(see seq 2)")


def test_claimed_and_expected_carry_the_numbers_log_format_lists():
    ev = game()
    add(ev, "roll", player="ana", dice=[1, 2, 3, 4, 6, 6])
    add(ev, "keep", player="ana", dice=[1, 2], points=100)  # non_scoring_kept: claimed, null
    add(ev, "roll", player="ana", dice=[1, 5, 2, 3])
    add(ev, "farkle", player="ana")  # false_farkle: 0 and the roll's best value
    add(ev, "roll", player="bo", dice=[1, 2, 3, 4, 6, 6])
    add(ev, "keep", player="bo", dice=[1], points=100)
    add(ev, "farkle", player="bo")  # after a keep: null, null
    out = audit(lines_of(ev))
    got = {(f.seq, f.code): (f.claimed, f.expected) for f in out.findings}
    assert got[(3, "non_scoring_kept")] == (100, None)
    assert got[(5, "false_farkle")] == (0, 150)
    assert got[(8, "false_farkle")] == (None, None)
    assert got[(8, "game_incomplete")] == (None, None)


def test_ingest_stores_running_totals_and_how_each_game_ended(tmp_path):
    lines = simulated(30, 6, rules=MIXED, running_totals=1.0, abandon=0.5)
    log = tmp_path / "real.jsonl"
    log.write_text("\n".join(lines) + "\n")
    data = tmp_path / "ds"
    assert CliRunner().invoke(app, ["ingest", str(log), "--out", str(data)]).exit_code == 0
    ds = open_dataset(data)

    def table(name):
        import pyarrow as pa

        return pa.concat_tables([pq.read_table(f) for f in ds.table_files(name)])

    games = table("games")
    assert set(games.column("ended").to_pylist()) == {"finished", "abandoned"}
    events = table("events")
    keeps = [r for r in events.to_pylist() if r["type"] == "keep"]
    assert keeps and all(r["points"] is None and r["turn_points"] is not None for r in keeps)
    reasons = {r["reason"] for r in events.to_pylist() if r["type"] == "game_end"}
    assert reasons == {None, "abandoned"}
    rolls = [r for r in table("rolls").to_pylist() if r["kept"] is not None]
    assert all(r["kept_turn_points"] is not None and r["kept_claimed"] == r["kept_value"] for r in rolls)
    # results and win rates count finished games only; the dice count every game
    result = CliRunner().invoke(app, ["stats", str(data), "--section", "players", "-f", "json"])
    summary = json.loads(result.stdout)["tables"]["player_summary"]
    overall = next(r for r in summary if r["scope"] == "overall")
    finished = games.column("ended").to_pylist().count("finished")
    assert overall["finished_games"] == finished and overall["complete_games"] == games.num_rows
    assert overall["rolls"] == table("rolls").num_rows


def test_league_figures_leave_abandoned_games_out_and_say_so(tmp_path):
    lines = simulated(40, 9, rules=(STANDARD,), abandon=0.5)
    log = tmp_path / "league.jsonl"
    log.write_text("\n".join(lines) + "\n")
    data = tmp_path / "ds"
    CliRunner().invoke(app, ["ingest", str(log), "--out", str(data)])
    abandoned_games = sum('"reason": "abandoned"' in line or '"reason":"abandoned"' in line for line in lines)
    result = CliRunner().invoke(app, ["stats", str(data), "--section", "ratings", "-f", "json"])
    left_out = json.loads(result.stdout)["games_left_out"]["ratings"]
    assert left_out["unfinished"] == abandoned_games > 0 and left_out["counted"] == 40 - abandoned_games


def test_docs_say_it(tmp_path):
    root = Path(__file__).resolve().parents[1]
    log_format = (root / "docs" / "log-format.md").read_text()
    for words in ("**Running totals.**", "**Abandoned games.**", "**Game over.**", "23:59:60 UTC", "uses up no `seq`"):
        assert words in log_format, words
    assert "| `rounds` |" in (root / "docs" / "rules.md").read_text()


def test_the_report_labels_an_abandoned_game(tmp_path):
    ev = abandoned({"winner": "bo", "scores": {"ana": 750, "bo": 0}})  # wrong_winner: a disputed game
    log = tmp_path / "quit.jsonl"
    log.write_text("\n".join(lines_of(ev)) + "\n")
    data = tmp_path / "ds"
    CliRunner().invoke(app, ["ingest", str(log), "--out", str(data)])
    page = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["report", str(data), "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert "– (abandoned)" in html  # the disputed games' winner by the dice
    assert "abandoned (stopped before its end: no winner by the dice)" in html
    assert "1 complete, 1 of them abandoned" in html


def test_a_round_limit_shares_the_exact_odds_of_its_scoring_table():
    from pipeline.stats.odds import scoring_part

    assert scoring_part(ROUNDS) == scoring_part(STANDARD)  # rounds and target decide no roll

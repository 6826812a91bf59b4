"""Issue 8, phase 2: judging logged choices against the exact single-turn policy.

Hand-checked cases, the SQL path (stats section decisions-quality) on hand-made rows, the
blunder threshold, and the SQL judged the same as Python (`pipeline.strategy.judge`, used by
`audit --coach`) on a simulated dataset with injected errors and three rulesets.
"""

from __future__ import annotations

import json

import pytest

from pipeline.ingest.run import ingest
from pipeline.reader import read_events
from pipeline.reader.inputs import resolve
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from pipeline.stats import compute, run, session
from pipeline.stats.fixtures import write_dataset
from pipeline.strategy import solve
from pipeline.strategy.judge import coach_game, judge_action, judge_keep, policy_tables

STANDARD = Ruleset.builtin("standard")
STD_TEXT = STANDARD.to_json()
SECTION = ["decisions-quality"]


@pytest.fixture(scope="module")
def policy():
    return solve(STANDARD)


# ---- hand-checked --------------------------------------------------------------------
def test_one_die_left_with_1000_bank_is_best_and_rolling_loses(policy):
    bank = judge_action(policy, 1000, 1, True, "bank")
    roll = judge_action(policy, 1000, 1, True, "roll")
    assert bank.best == roll.best == "bank" and bank.loss == 0 and bank.optimal
    # one die scores 1 time in 3 (a 1: 1100, a 5: 1050, then six fresh dice, each worth
    # roughly the points plus ~400-550): about (1/6)(1100 + 1050 + 2 x ~500) ~ 525 expected,
    # so rolling gives up about 475 of the 1000 in hand
    assert roll.value_made == pytest.approx(policy.roll_value(1000, 1, True))
    assert 400 < roll.loss < 550
    assert roll.loss == pytest.approx(policy.action_loss(1000, 1, True, "roll"))


def test_banking_50_with_six_dice_is_a_loss(policy):
    bank = judge_action(policy, 50, 6, True, "bank")
    # six dice farkle 5 times in 216: rolling is worth 50 plus about the expected turn value
    assert bank.best == "roll" and bank.value_made == 50
    assert bank.loss == pytest.approx(policy.roll_value(50, 6, True) - 50)
    assert bank.loss > 500
    not_opened = judge_action(policy, 50, 6, False, "bank")  # below the opening: banks 0
    assert not_opened.value_made == 0 and not_opened.loss == pytest.approx(policy.roll_value(50, 6, False))


def test_keep_of_three_scoring_dice_loses_to_a_single_one(policy):
    j = judge_keep(policy, 0, (1, 1, 5, 2, 3, 4), (1, 1, 5), True)
    assert j.best == "1" and j.made == "1 1 5"
    assert j.value_best == pytest.approx(404.19, abs=0.01)
    assert j.loss == pytest.approx(policy.keep_loss(0, (1, 1, 5, 2, 3, 4), (1, 1, 5), True))
    assert judge_keep(policy, 0, (1, 1, 5, 2, 3, 4), (1,), True).loss == 0


def test_keep_value_above_the_cap_uses_the_closed_form(policy):
    high = policy.cap + 1000
    j = judge_keep(policy, high, (1, 2, 3), (1,), True)
    assert j.value_made == pytest.approx(policy.value(high + 100, 2, True))
    assert j.value_made == high + 100  # banking is best up there
    tables = policy_tables([STD_TEXT])
    assert tables["policy_values"].num_rows == 2 * 6 * policy.cap // policy.granularity
    assert max(tables["policy_values"].column("points").to_pylist()) < policy.cap


# ---- SQL on hand-made rows ----------------------------------------------------------
def _rows():
    """ana: 1 1 1 5 5 kept (1100, one die left) and then rolls: a blunder of ~500.
    bo: keeps a 5 from one die (hot dice, 50 points) and banks with six dice: ~560 lost.
    cy: keeps 1 from 1 2 3 4 6 6 and rolls five dice: optimal; then a keep of a 2 (not a
    scoring keep: not judged) and the bank after it (not judged either)."""
    game = {
        "game_id": "g1",
        "ruleset": STD_TEXT,
        "ruleset_name": "standard",
        "players": ["ana", "bo", "cy", "di"],
        "complete": True,
    }
    rolls = [
        {
            "game_id": "g1",
            "seq": 2,
            "player": "ana",
            "turn": 1,
            "roll_in_turn": 1,
            "dice": [1, 1, 1, 5, 5, 2],
            "dice_count": 6,
            "scored": True,
            "best_value": 1100,
            "kept": [1, 1, 1, 5, 5],
            "points_before": 0,
            "opened": True,
        },
        {
            "game_id": "g1",
            "seq": 4,
            "player": "ana",
            "turn": 1,
            "roll_in_turn": 2,
            "dice": [3],
            "dice_count": 1,
            "scored": False,
            "best_value": 0,
            "points_before": 1100,
            "opened": True,
        },
        {
            "game_id": "g1",
            "seq": 10,
            "player": "bo",
            "turn": 1,
            "roll_in_turn": 3,
            "dice": [5],
            "dice_count": 1,
            "scored": True,
            "best_value": 50,
            "kept": [5],
            "points_before": 0,
            "opened": True,
        },
        {
            "game_id": "g1",
            "seq": 20,
            "player": "cy",
            "turn": 1,
            "roll_in_turn": 1,
            "dice": [1, 2, 3, 4, 6, 6],
            "dice_count": 6,
            "scored": True,
            "best_value": 100,
            "kept": [1],
            "points_before": 0,
            "opened": False,
        },
        {
            "game_id": "g1",
            "seq": 22,
            "player": "cy",
            "turn": 1,
            "roll_in_turn": 2,
            "dice": [2, 3, 4, 6, 6],
            "dice_count": 5,
            "scored": False,
            "best_value": 0,
            "kept": [2],
            "points_before": 100,
            "opened": False,
        },
        {
            "game_id": "g1",
            "seq": 30,
            "player": "di",
            "turn": 1,
            "roll_in_turn": 9,
            "dice": [1, 5, 3],
            "dice_count": 3,
            "scored": True,
            "best_value": 150,
            "kept": [5],
            "points_before": 19000,
            "opened": True,
        },
    ]
    decisions = [
        {
            "game_id": "g1",
            "seq": 3,
            "player": "ana",
            "turn": 1,
            "dice_left": 1,
            "turn_points": 1100,
            "turn_points_corrected": 1100,
            "opened": True,
            "choice": "roll",
            "farkled": True,
        },
        {
            "game_id": "g1",
            "seq": 11,
            "player": "bo",
            "turn": 1,
            "dice_left": 6,
            "turn_points": 50,
            "turn_points_corrected": 50,
            "opened": True,
            "choice": "bank",
        },
        {
            "game_id": "g1",
            "seq": 21,
            "player": "cy",
            "turn": 1,
            "dice_left": 5,
            "turn_points": 100,
            "turn_points_corrected": 100,
            "opened": False,
            "choice": "roll",
            "farkled": True,
        },
        {
            "game_id": "g1",
            "seq": 23,
            "player": "cy",
            "turn": 1,
            "dice_left": 4,
            "turn_points": 100,
            "turn_points_corrected": 100,
            "opened": False,
            "choice": "bank",
        },
        {
            "game_id": "g1",
            "seq": 31,
            "player": "di",
            "turn": 1,
            "dice_left": 2,
            "turn_points": 19050,
            "turn_points_corrected": 19050,
            "opened": True,
            "choice": "roll",
        },
    ]
    seats = [{"game_id": "g1", "player": p, "seat": i} for i, p in enumerate(["ana", "bo", "cy", "di"], start=1)]
    return {"games": [game], "game_players": seats, "rolls": rolls, "decisions": decisions}


@pytest.fixture(scope="module")
def handmade(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("dq") / "ds", _rows())


def test_sql_judges_the_hand_made_rows(handmade, policy):
    t = compute(handmade, sections=SECTION)
    q = {r["player"]: r for r in t["decision_quality"].to_pylist()}
    assert q["ana"]["judged"] == 2 and q["ana"]["blunders"] == 1
    assert q["ana"]["loss_points"] == pytest.approx(policy.action_loss(1100, 1, True, "roll"))
    assert q["bo"]["loss_points"] == pytest.approx(policy.action_loss(50, 6, True, "bank"))
    assert q["cy"] == q["cy"] | {"choices": 4, "judged": 2, "not_judged": 2, "optimal": 2, "blunders": 0}
    assert q["cy"]["loss_points"] == pytest.approx(0, abs=1e-9)
    overall = q[None]
    assert overall["scope"] == "overall" and overall["choices"] == 10 and overall["not_judged"] == 2
    assert overall["blunders"] == 3 and overall["blunder_threshold"] == 150
    assert overall["mean_loss"] == pytest.approx(overall["loss_points"] / overall["judged"])
    # above the solver's cap (the closed form): a keep of 5 instead of 1 5, then rolling two dice
    assert 19000 > policy.cap
    keep = judge_keep(policy, 19000, (1, 5, 3), (5,), True)
    action = judge_action(policy, 19050, 2, True, "roll")
    assert keep.best == "1 5" and action.best == "bank" and keep.loss == pytest.approx(100)
    assert q["di"]["keep_loss_points"] == pytest.approx(keep.loss, abs=1e-9)
    assert q["di"]["action_loss_points"] == pytest.approx(action.loss, abs=1e-9)
    assert action.loss == pytest.approx(19050 - ((1 - 4 / 9) * 19050 + policy.tail_gain(2)))
    worst = t["blunders"].to_pylist()
    assert [(b["player"], b["seq"], b["made"], b["best"]) for b in worst] == [
        ("di", 31, "roll", "bank"),
        ("bo", 11, "bank", "roll"),
        ("ana", 3, "roll", "bank"),
    ]


def test_a_choice_links_to_the_last_roll_of_its_own_turn_whatever_comes_between(tmp_path, policy):
    """Most choices directly follow their keep's roll (seq - 1) and are linked by an equality
    join; the others must still find the last roll of their own turn before them: after lost
    lines (ana), after another player's roll (bo), and never a roll of an earlier turn (di)."""
    game = {
        "game_id": "g2",
        "ruleset": STD_TEXT,
        "ruleset_name": "standard",
        "players": ["ana", "bo", "cy", "di"],
        "complete": False,
    }

    def roll(seq, player, turn, dice, kept, points_before, scored=True):
        return {
            "game_id": "g2",
            "seq": seq,
            "player": player,
            "turn": turn,
            "roll_in_turn": 1,
            "dice": dice,
            "dice_count": len(dice),
            "scored": scored,
            "best_value": 0,
            "kept": kept,
            "points_before": points_before,
            "opened": True,
        }

    def choice(seq, player, turn, dice_left, points, made):
        return {
            "game_id": "g2",
            "seq": seq,
            "player": player,
            "turn": turn,
            "dice_left": dice_left,
            "turn_points": points,
            "turn_points_corrected": points,
            "opened": True,
            "choice": made,
        }

    rows = {
        "games": [game],
        "game_players": [{"game_id": "g2", "player": p, "seat": i} for i, p in enumerate(game["players"], 1)],
        "rolls": [
            roll(2, "ana", 1, [1, 1, 1, 5, 5, 2], [1, 1, 1, 5, 5], 0),
            roll(10, "bo", 1, [5], [5], 0),
            roll(11, "cy", 1, [2, 3, 4, 6, 6, 3], None, 0, scored=False),
            roll(20, "di", 1, [1, 2, 3, 4, 6, 6], [1], 0),
        ],
        "decisions": [
            choice(5, "ana", 1, 1, 1100, "roll"),  # seq 3 and 4 lost
            choice(12, "bo", 1, 6, 50, "bank"),  # after cy's roll
            choice(21, "di", 2, 5, 100, "roll"),
        ],  # di's turn 2 has no roll
    }
    ds = write_dataset(tmp_path / "ds", rows)
    with session(ds, with_odds=False, with_policy=True) as con:
        got = {r["player"]: r for r in run(con, "int_decision_values").to_pylist() if r["kind"] == "action"}
    assert got["ana"]["judged"] and got["ana"]["loss"] == pytest.approx(policy.action_loss(1100, 1, True, "roll"))
    assert got["bo"]["judged"] and got["bo"]["loss"] == pytest.approx(policy.action_loss(50, 6, True, "bank"))
    assert not got["di"]["judged"] and got["di"]["loss"] is None


def test_blunder_threshold_is_respected(handmade, policy):
    ana = policy.action_loss(1100, 1, True, "roll")
    bo = policy.action_loss(50, 6, True, "bank")
    assert ana < bo
    for threshold, expected in (
        (0.0, {"ana", "bo"}),
        (ana - 1e-6, {"ana", "bo"}),
        (ana, {"bo"}),
        ((ana + bo) / 2, {"bo"}),
        (bo, set()),
        (1e9, set()),
    ):
        t = compute(handmade, sections=SECTION, blunder_threshold=threshold)
        assert {b["player"] for b in t["blunders"].to_pylist()} - {"di"} == expected, threshold
        rows = t["blunders"].to_pylist()
        assert all(b["loss"] > threshold for b in rows)
        overall = t["decision_quality"].to_pylist()[0]
        assert overall["blunders"] == len(rows) and overall["blunder_threshold"] == threshold


# ---- SQL and Python agree on a simulated dataset ---------------------------------------
RULESETS = (
    STANDARD,
    Ruleset.builtin("playmonster"),
    Ruleset.from_value({"base": "standard", "three_pairs": None, "opening": 350}),
)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    root = tmp_path_factory.mktemp("dqsim")
    logs = root / "logs.jsonl"
    simulate(
        logs,
        40,
        8,
        rules=RULESETS,
        inject_rate=0.5,
        bots=["threshold", "cautious", "greedy", "keep_all", "keep_min", "optimal"],
    )
    ingest([str(logs)], root / "ds")
    return logs, root / "ds"


def test_sql_and_python_give_the_same_losses(simulated):
    logs, ds = simulated
    with session(ds, with_odds=False, with_policy=True) as con:
        rows = run(con, "int_decision_values").to_pylist()
        rulesets = dict(con.execute("select game_id, ruleset from src_games").fetchall())
    assert rows and any(not r["judged"] for r in rows)  # the injected errors leave some unjudged
    sql = {(r["game_id"], r["seq"], r["kind"]): r for r in rows}
    games = sorted({r["game_id"] for r in rows})
    events = list(read_events(resolve([str(logs)]).sources))
    python = {}
    for game_id in games:
        _, policy, judged = coach_game(events, game_id)
        assert policy is not None and policy.rules == Ruleset.from_value(json.loads(rulesets[game_id]))
        for j in judged:
            python[(j.game_id, j.seq, j.kind)] = j
    assert python.keys() == sql.keys()
    for key, j in python.items():
        r = sql[key]
        assert r["judged"] == (j.judgement is not None), (key, j.why)
        assert r["made"] == j.made
        if j.judgement is None:
            assert r["loss"] is None
            continue
        g = j.judgement
        assert r["value_made"] == pytest.approx(g.value_made, abs=1e-9), key
        assert r["value_best"] == pytest.approx(g.value_best, abs=1e-9), key
        assert r["loss"] == pytest.approx(g.loss, abs=1e-9), key
        if g.loss > 1e-6 or r["kind"] == "action":
            assert r["best"] == g.best, key


def test_every_rolled_choice_has_a_row(simulated):
    _, ds = simulated
    with session(ds, with_odds=False, with_policy=True) as con:
        counts = con.execute(
            "select (select count(*) from src_decisions), (select count(*) from src_rolls where kept is not null)"
        ).fetchone()
        t = compute(ds, sections=SECTION)
    overall = t["decision_quality"].to_pylist()[0]
    assert overall["choices"] == sum(counts)
    assert overall["judged"] + overall["not_judged"] == overall["choices"]
    assert 0 < overall["not_judged"] < overall["choices"] / 10


# ---- the command line ------------------------------------------------------------------
def test_coach_names_every_choice_of_a_small_game(tmp_path):
    from typer.testing import CliRunner

    from pipeline.cli.main import app

    logs = tmp_path / "one.jsonl"
    simulate(logs, 1, 3, players=(2, 2), bots=["greedy", "cautious"])
    game_id = json.loads(logs.read_text().splitlines()[0])["game_id"]
    _, _, judged = coach_game(read_events(resolve([str(logs)]).sources), game_id)
    keeps = [json.loads(line) for line in logs.read_text().splitlines() if '"keep"' in line]
    assert len([j for j in judged if j.kind == "keep"]) == len(keeps) > 5
    result = CliRunner().invoke(app, ["audit", str(logs), "--game", game_id, "--coach"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "single-turn model" in out and "race to the target" in " ".join(out.split())
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    logged = {e["seq"]: e for e in map(json.loads, logs.read_text().splitlines()) if e["game_id"] == game_id}
    assert all(j.judgement is not None for j in judged)  # a clean game: every choice judged
    for j in judged:  # one line per choice: seq, player, ..., what was done, ..., the loss
        # the seq shown is the log line that made the choice, found here from the log: the
        # keep itself, or the roll or bank after the keep (the judge keys a keep by its roll
        # and a bank-or-roll by the keep before it)
        wanted = ("keep",) if j.kind == "keep" else ("roll", "bank", "farkle")
        seq = min(q for q, e in logged.items() if q > j.seq and e["type"] in wanted)
        event = logged[seq]
        assert event["player"] == j.player
        if j.kind == "keep":
            assert " ".join(map(str, sorted(event["dice"]))) == j.made
        else:
            assert event["type"] == j.made  # "bank", or "roll" to go on
        hits = [ln for ln in lines if ln.split()[:2] == [str(seq), j.player]]
        assert len(hits) == 1, (j, out)
        words = hits[0].replace("*", "").split()
        assert j.made in hits[0] and words[-1] == f"{j.judgement.loss:.1f}"
    blunders = [j for j in judged if j.judgement and j.judgement.loss > 150]
    assert sum(ln.rstrip().endswith("*") for ln in lines) == len(blunders)
    as_json = CliRunner().invoke(
        app, ["audit", str(logs), "-g", game_id, "--coach", "-f", "json", "--blunder-threshold", "0"]
    )
    payload = json.loads(as_json.output)
    assert len(payload["choices"]) == len(judged)
    assert sum(c["blunder"] for c in payload["choices"]) == sum(1 for j in judged if j.judgement.loss > 0)
    assert CliRunner().invoke(app, ["audit", str(logs), "--coach"]).exit_code == 2
    missing = CliRunner().invoke(app, ["audit", str(logs), "-g", game_id[:-1] + "9", "--coach"])
    assert missing.exit_code == 2 and f"(did you mean {game_id}?)" in missing.stderr


def test_stats_command_prints_the_section_with_the_model_note(handmade):
    from typer.testing import CliRunner

    from pipeline.cli.main import app

    text = CliRunner().invoke(app, ["stats", str(handmade), "--section", "decisions-quality"])
    assert text.exit_code == 0, text.output
    assert "single-turn model" in text.output and "not judged" in text.output
    out = CliRunner().invoke(
        app, ["stats", str(handmade), "-s", "blunders", "-f", "json", "--blunder-threshold", "570"]
    )
    payload = json.loads(out.output)
    assert [b["player"] for b in payload["tables"]["blunders"]] == ["di", "bo"]
    assert payload["blunder_threshold"] == 570 and "single-turn" in payload["model"]


def test_report_section_says_single_turn_and_lists_the_worst_blunders(handmade):
    from pipeline.report import build_report

    page = build_report(handmade, generated=None)
    section = page[page.index('<section id="quality"') :]
    section = section[: section.index("</section>")]
    assert "A single-turn model" in section and "race to the target" in section
    assert 'data-chart="quality_state"' in section and 'data-chart="quality_players"' in section
    table = section[section.index("Worst blunders") :]
    # worst first: di (rolled two dice at 19,050), bo (banked 50 with six dice), ana
    assert table.index(">di<") < table.index(">bo<") < table.index(">ana<")
    assert "2 not judged" in section


def test_player_filter_applies_to_every_choice(handmade):
    from pipeline.stats import Filters

    t = compute(handmade, Filters(player="bo"), sections=SECTION)
    assert {r["player"] for r in t["decision_quality"].to_pylist()} == {None, "bo"}
    assert t["decision_quality"].to_pylist()[0]["choices"] == 2
    assert [b["player"] for b in t["blunders"].to_pylist()] == ["bo"]


def test_a_dataset_written_before_the_state_columns_keeps_its_other_stats(tmp_path):
    """Rolls and decisions gained points_before/opened/turn_points_corrected for this section;
    a dataset without them still gives every other table (only this section needs them)."""
    import pyarrow.parquet as pq

    ds = write_dataset(tmp_path / "old", _rows())
    for table, drop in (("rolls", ["points_before", "opened"]), ("decisions", ["turn_points_corrected"])):
        path = ds / table / "part-0.parquet"
        pq.write_table(pq.read_table(path).drop(drop), path)
    tables = compute(ds)
    assert tables["bank_vs_roll_by_dice_left"].num_rows > 0 and tables["bust_rate_by_dice_left"].num_rows > 0
    with pytest.raises(Exception, match="points_before|turn_points_corrected"):
        compute(ds, sections=SECTION)


def test_report_of_a_dataset_without_the_state_columns_says_so(tmp_path):
    import pyarrow.parquet as pq

    from pipeline.report import build_report

    ds = write_dataset(tmp_path / "old", _rows())
    path = ds / "rolls" / "part-0.parquet"
    pq.write_table(pq.read_table(path).drop(["points_before", "opened"]), path)
    page = build_report(ds)
    section = page[page.index('<section id="quality"') :]
    assert "ingest the logs again" in section[: section.index("</section>")]
    assert 'data-chart="quality_state"' not in page and 'data-chart="bust"' in page

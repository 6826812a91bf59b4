"""The simulator's clean games: deterministic, schema-valid, and legal under rules.md.

The rule checks here are written out plainly against pipeline.rules (not via the
simulator's own checker), so a bug in the game loop cannot hide behind a bug in its oracle.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter, defaultdict
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.rules import Ruleset, is_farkle, score_keep
from pipeline.simulate import BOT_NAMES, DEFAULT_BOTS, simulate
from pipeline.simulate.game import rules_value

ROOT = Path(__file__).resolve().parents[1]
HOUSE_PENALTY = Ruleset.from_value(
    {"base": "standard", "opening": 1000, "min_bank": 350, "farkle_penalty": 500, "penalty_after": 3}
)
HOUSE_ODD = Ruleset.from_value(
    {
        "base": "playmonster",
        "n_of_a_kind": "doubling",
        "three_pairs": 750,
        "straight": None,
        "partial_straights": {"12345": 500, "23456": 750},
        "opening": 0,
        "min_bank": 300,
        "farkle_penalty": 1000,
        "penalty_after": 2,
        "target": 5000,
    }
)
RULESETS = {
    "standard": Ruleset.builtin("standard"),
    "playmonster": Ruleset.builtin("playmonster"),
    "house_penalty": HOUSE_PENALTY,
    "house_odd": HOUSE_ODD,
}


def sim_bytes(games: int, seed: int, **kw) -> bytes:
    buf = io.BytesIO()
    simulate(buf, games, seed, **kw)
    return buf.getvalue()


def games_of(data: bytes) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for line in data.splitlines():
        e = json.loads(line)
        out[e["game_id"]].append(e)
    return out


@pytest.fixture(scope="module")
def corpus() -> dict[str, dict[str, list[dict]]]:
    """Per ruleset name: 120 games, 1-6 players."""
    return {
        name: games_of(sim_bytes(120, 40 + i, rules=[rules], players=(1, 6)))
        for i, (name, rules) in enumerate(RULESETS.items())
    }


# ---- determinism --------------------------------------------------------------------------
def test_same_seed_same_bytes_and_different_seed_different_ids():
    a, b = sim_bytes(30, 7), sim_bytes(30, 7)
    assert a == b
    c = sim_bytes(30, 8)
    assert a != c
    assert not set(games_of(a)) & set(games_of(c))


def test_game_i_does_not_depend_on_how_many_games_are_asked_for():
    short, long = sim_bytes(5, 3), sim_bytes(12, 3)
    assert long.startswith(short)


def test_gzip_output_is_reproducible_and_holds_the_same_lines(tmp_path):
    plain, gz1, gz2 = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for path in (plain, gz1, gz2):
        simulate(path, 20, 5)
    assert gz1.read_bytes() == gz2.read_bytes()
    assert gz1.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(gz1.read_bytes()) == plain.read_bytes()


def test_output_is_written_in_chunks_not_held_whole():
    class Recorder(io.RawIOBase):
        def __init__(self):
            self.sizes: list[int] = []

        def writable(self):
            return True

        def write(self, b):
            self.sizes.append(len(b))
            return len(b)

    rec = Recorder()
    simulate(rec, 150, 1)
    assert len(rec.sizes) >= 5  # ~15 MB in ~1 MiB chunks
    assert max(rec.sizes) < 4 << 20


def test_tables_interleave_the_same_games():
    one, four = games_of(sim_bytes(12, 6)), sim_bytes(12, 6, tables=4)
    assert four == sim_bytes(12, 6, tables=4)
    ids = [json.loads(line)["game_id"] for line in four.splitlines()]
    assert sum(a != b for a, b in zip(ids, ids[1:])) > 100  # the games really interleave

    def strip(events):
        return [{k: v for k, v in e.items() if k != "ts"} for e in events]

    assert {g: strip(ev) for g, ev in games_of(four).items()} == {g: strip(ev) for g, ev in one.items()}
    for events in games_of(four).values():
        ts = [e["ts"] for e in events]
        assert ts == sorted(ts)


def test_tables_beyond_the_games_change_nothing_and_are_bounded():
    """--tables 1000000000 used to set up a billion tables (2 GB in 6 s) to play 5 games."""
    from pipeline.simulate.run import MAX_TABLES

    assert sim_bytes(5, 6, tables=MAX_TABLES) == sim_bytes(5, 6, tables=5)
    with pytest.raises(ValueError, match="tables must be 1 to 1,000"):
        sim_bytes(5, 6, tables=MAX_TABLES + 1)
    res = CliRunner().invoke(app, ["simulate", "--games", "5", "--tables", "1000000000"])
    assert res.exit_code == 2 and "--tables must be 1 to 1,000" in res.output


# ---- format ---------------------------------------------------------------------------------
def test_every_event_validates_against_the_schema(corpus):
    schema = json.loads((ROOT / "schemas" / "event.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    checked = 0
    for games in corpus.values():
        for events in list(games.values())[:6]:
            for e in events:
                errors = list(validator.iter_errors(e))
                assert not errors, (e, errors[0].message)
                checked += 1
    assert checked > 2_000


def test_game_start_names_rules_and_bots(corpus):
    for name, games in corpus.items():
        for events in games.values():
            start = events[0]
            assert start["type"] == "game_start" and start["seq"] == 1
            assert Ruleset.from_value(start["rules"]) == RULESETS[name]
            assert set(start["bots"]) == set(start["players"])
            assert set(start["bots"].values()) <= set(BOT_NAMES)
    assert corpus["standard"][next(iter(corpus["standard"]))][0]["rules"] == "standard"
    assert rules_value(HOUSE_PENALTY) == {"base": "standard", "opening": 1000, "min_bank": 350, "farkle_penalty": 500}


def test_timestamps_advance_a_few_seconds_per_event(corpus):
    for events in corpus["standard"].values():
        ts = [e["ts"] for e in events]
        assert ts == sorted(ts)
        assert all(t.endswith("Z") and "T" in t for t in ts)


# ---- the rules hold ---------------------------------------------------------------------
def replay_rules(events: list[dict], rules: Ruleset) -> dict:
    """Walk a clean game asserting every rule; return counts of what happened."""
    players = events[0]["players"]
    assert len(set(players)) == len(players)
    n = len(players)
    totals = dict.fromkeys(players, 0)
    opened = dict.fromkeys(players, False)
    streak = dict.fromkeys(players, 0)
    seen = Counter()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    i, turn_no, first, after_first = 1, 0, None, 0
    while events[i]["type"] != "game_end":
        p = players[turn_no % n]
        turn_no += 1
        if first is not None:
            after_first += 1
        pts, left, hot = 0, 6, 0
        while True:
            roll = events[i]
            assert roll["type"] == "roll" and roll["player"] == p
            assert len(roll["dice"]) == left
            i += 1
            e = events[i]
            if is_farkle(roll["dice"], rules):
                assert e["type"] == "farkle" and e["player"] == p
                streak[p] += 1
                if rules.farkle_penalty and streak[p] == rules.penalty_after:
                    totals[p] -= rules.farkle_penalty
                    streak[p] = 0
                    seen["penalties"] += 1
                if rules.farkle_penalty:
                    assert e["total"] == totals[p]
                else:
                    assert "total" not in e
                seen["farkles"] += 1
                i += 1
                break
            assert e["type"] == "keep" and e["player"] == p
            assert not Counter(e["dice"]) - Counter(roll["dice"]), "kept dice not in the roll"
            assert score_keep(e["dice"], rules) == e["points"], "wrong keep value"
            pts += e["points"]
            left -= len(e["dice"])
            if left == 0:
                left, hot = 6, hot + 1
            i += 1
            if events[i]["type"] == "bank":
                bank = events[i]
                assert bank["player"] == p and bank["points"] == pts
                assert pts >= rules.min_bank
                assert opened[p] or pts >= rules.opening
                totals[p] += pts
                assert bank["total"] == totals[p]
                opened[p], streak[p] = True, 0
                seen["banks"] += 1
                i += 1
                break
        seen["max_hot_in_turn"] = max(seen["max_hot_in_turn"], hot)
        if first is None and totals[p] >= rules.target:
            first = p
        if first is not None and after_first == n - 1:
            break
    end = events[i]
    assert i == len(events) - 1, "events after the final round"
    assert first is not None and after_first == n - 1, "final round not played out"
    assert end["type"] == "game_end" and end["scores"] == totals
    top = max(totals.values())
    winners = [q for q in players if totals[q] == top]
    assert end["winner"] == (winners[0] if len(winners) == 1 else winners)
    seen["ties"] += len(winners) > 1
    seen["turns"] += turn_no
    return seen


def test_clean_games_follow_the_rules_under_every_ruleset(corpus):
    for name, games in corpus.items():
        total = Counter()
        for events in games.values():
            total.update(replay_rules(events, RULESETS[name]))
        assert total["banks"] and total["farkles"], name
        if RULESETS[name].farkle_penalty:
            assert total["penalties"] > 0, name


def test_hot_dice_happen_even_twice_in_one_turn(corpus):
    best = 0
    for events in corpus["standard"].values():
        best = max(best, replay_rules(events, RULESETS["standard"])["max_hot_in_turn"])
    assert best >= 2


def test_ties_are_written_as_a_list_of_every_tied_player():
    games = games_of(sim_bytes(600, 2, bots=("cautious",), players=(2, 2)))
    ties = [ev[-1] for ev in games.values() if isinstance(ev[-1]["winner"], list)]
    assert ties, "no tie in 600 cautious games"
    for end in ties:
        top = max(end["scores"].values())
        assert end["winner"] == [p for p, v in end["scores"].items() if v == top]


def test_one_player_game_ends_when_the_target_is_reached():
    games = games_of(sim_bytes(3, 9, players=(1, 1)))
    for events in games.values():
        replay_rules(events, RULESETS["standard"])
        assert events[-2]["type"] == "bank" and events[-2]["total"] >= 10000


# ---- bots ---------------------------------------------------------------------------------
def test_bots_differ_in_how_often_they_bank_after_a_keep(corpus):
    decisions: dict[str, Counter] = defaultdict(Counter)
    for events in corpus["standard"].values():
        bots = events[0]["bots"]
        for prev, e in zip(events, events[1:]):
            if prev["type"] == "keep":
                decisions[bots[prev["player"]]][e["type"]] += 1
    rate = {b: c["bank"] / (c["bank"] + c["roll"]) for b, c in decisions.items()}
    assert set(rate) == set(DEFAULT_BOTS) == set(BOT_NAMES) - {"optimal", "winprob"}
    assert rate["cautious"] > rate["threshold"] > rate["greedy"]
    assert rate["cautious"] > 2 * rate["greedy"]


def test_keep_styles_show_in_the_dice_kept(corpus):
    kept: dict[str, list[int]] = defaultdict(list)
    for events in corpus["standard"].values():
        bots = events[0]["bots"]
        for e in events:
            if e["type"] == "keep":
                kept[bots[e["player"]]].append(len(e["dice"]))
    mean = {b: sum(v) / len(v) for b, v in kept.items()}
    assert mean["keep_min"] < mean["threshold"] < mean["keep_all"]


def test_optimal_bot_plays_the_exact_policy():
    strategy = pytest.importorskip("pipeline.strategy")
    rules = HOUSE_PENALTY
    policy = strategy.solve(rules)
    games = games_of(sim_bytes(15, 8, rules=[rules], bots=("optimal",), players=(2, 3)))
    checked = 0
    for events in games.values():
        replay_rules(events, rules)
        assert set(events[0]["bots"].values()) == {"optimal"}
        opened: set[str] = set()
        points, final = 0, False
        for prev, e, nxt in zip(events, events[1:], events[2:]):
            if e["type"] == "bank":
                opened.add(e["player"])
                final = final or e["total"] >= rules.target
            if prev["type"] == "roll" and e["type"] == "keep":
                best = policy.best_keep(points, prev["dice"], e["player"] in opened)
                assert sorted(e["dice"]) == sorted(best[0])
                points += e["points"]
                if not final:
                    left = len(prev["dice"]) - len(e["dice"]) or 6
                    action = policy.best_action(points, left, e["player"] in opened)
                    assert nxt["type"] == ("bank" if action == strategy.BANK else "roll")
                checked += 1
            if e["type"] in ("bank", "farkle"):
                points = 0
    assert checked > 500


# ---- CLI ----------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_writes_games_and_says_how_long_without_a_rate_on_a_tiny_run(tmp_path):
    out = tmp_path / "g.jsonl.gz"
    res = runner.invoke(app, ["simulate", "--games", "4", "--seed", "1", "--players", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    games = games_of(gzip.decompress(out.read_bytes()))
    assert len(games) == 4 and all(len(ev[0]["players"]) == 3 for ev in games.values())
    assert res.stderr.startswith("4 games, ") and " s → " in res.stderr
    assert "events/s" not in res.stderr  # ~1,000 events in a blink: a rate would measure start-up
    one = runner.invoke(app, ["simulate", "--games", "1", "--seed", "1", "--out", str(tmp_path / "one.jsonl")])
    assert one.stderr.startswith("1 game, ")


def test_cli_mixes_rulesets_when_repeated(tmp_path):
    out = tmp_path / "g.jsonl"
    res = runner.invoke(
        app, ["simulate", "-n", "30", "-s", "2", "-r", "standard", "-r", "playmonster", "-o", str(out), "-q"]
    )
    assert res.exit_code == 0, res.output
    rules = {ev[0]["rules"] for ev in games_of(out.read_bytes()).values()}
    assert rules == {"standard", "playmonster"}


def test_a_ruleset_the_bots_cannot_win_is_refused_not_looped_on():
    res = runner.invoke(app, ["simulate", "-n", "2", "-s", "1", "-r", '{"farkle_penalty": 5000, "penalty_after": 1}'])
    assert res.exit_code == 2
    assert "cannot win" in res.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "0-3"], "--players"),
        (["--players", "two"], "--players"),
        (["--rules", "nosuch"], "unknown ruleset"),
        (["--inject", "1.5"], "--inject"),
        (["--inject", "0.1", "--inject-codes", "scoring_eror"], "unknown finding code"),
        (["--inject", "0.1", "--inject-codes", "sheet_extra_turn"], "cannot be injected"),
        (["--manifest", "m.jsonl"], "--manifest needs --inject"),
        (["--bots", "reckless"], "unknown bot"),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(args, message):
    res = runner.invoke(app, ["simulate", "--games", "1", "--seed", "1", *args])
    assert res.exit_code == 2
    assert message in res.stderr


def test_the_winprob_bot_plays_two_player_games_only(tmp_path):
    """The winning-chance bot needs both totals: other table sizes, or a ruleset the
    two-player solver refuses, are refused before a line is written."""
    from pipeline.rules import Ruleset
    from pipeline.simulate.game import SimulationError

    out = tmp_path / "g.jsonl"
    with pytest.raises(SimulationError, match="two-player games only"):
        simulate(out, 2, 1, players=(2, 3), bots=["winprob"])
    penalty = Ruleset.from_value({"base": "standard", "farkle_penalty": 500})
    with pytest.raises(SimulationError, match="farkle penalty"):
        simulate(out, 2, 1, rules=[penalty], players=(2, 2), bots=["winprob"])
    assert not out.exists() or out.read_text() == ""

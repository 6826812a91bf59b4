"""Two-player choices judged by winning chance: the SQL path (stats decisions-quality, the
Python model int_choices_judged) against the Python one (`audit --coach`), row for row; games
of three players keep the single-turn yardstick only; and simulated play, where the
winning-chance bot beats the single-turn bot and two of them give the first player the
advantage the solver predicts."""

from __future__ import annotations

import json
import math
import random

import pytest

from pipeline.ingest.run import ingest
from pipeline.reader import read_events
from pipeline.reader.inputs import resolve
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from pipeline.simulate.game import Table, play_game
from pipeline.stats import RACE_BLUNDER_PP, RACE_MISTAKE_PP, compute, run, session
from pipeline.solved import tables as race_tables
from pipeline.solved.judge import accuracy, dice_text
from pipeline.strategy.judge import coach_game_turns
from pipeline.strategy.race import Race
from pipeline.strategy.race_coach import judge_race

SMALL = Ruleset.from_value({"base": "standard", "target": 1000})


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    root = tmp_path_factory.mktemp("racesim")
    cache = root / "cache"
    mp = pytest.MonkeyPatch()
    mp.setenv("FARKLE_LOGS_CACHE_DIR", str(cache))
    race_tables.race.cache_clear()
    two = root / "two.jsonl"
    three = root / "three.jsonl"
    bots = ["threshold", "cautious", "greedy", "keep_all", "keep_min", "optimal"]
    simulate(two, 40, 21, rules=[SMALL], players=(2, 2), bots=bots, inject_rate=0.3)
    simulate(three, 10, 22, rules=[SMALL], players=(3, 3), bots=bots)
    ingest([str(two), str(three)], root / "ds")
    yield (two, three), root / "ds"
    race_tables.race.cache_clear()
    mp.undo()


def test_sql_and_python_judge_every_choice_the_same(simulated):
    (two, three), ds = simulated
    with session(ds, with_odds=False, with_policy=True) as con:
        rows = run(con, "fct_race_choices").to_pylist()
        games = dict(con.execute("select game_no, game_id from int_games_in_scope").fetchall())
    sql = {(games[r["game_no"]], r["seq"], r["kind"]): r for r in rows}
    assert sql and any(not r["race_judged"] for r in rows)  # injected errors leave some unjudged
    events = list(read_events(resolve([str(two), str(three)]).sources))
    solved = Race(race_tables.load(SMALL))
    python = {}
    three_player = set()
    for game_id in sorted({e.game_id for e in events if getattr(e, "type", None) == "game_start"}):
        result, policy, judged, turns = coach_game_turns(events, game_id)
        if len(result.players) != 2:
            three_player.add(game_id)
            continue
        for (kind, seq), j in judge_race(solved, judged, turns, result.players).items():
            python[(game_id, seq, kind)] = j
    assert not any(key[0] in three_player for key in sql)  # 3 players: the single-turn yardstick only
    judged_sql = {k: r for k, r in sql.items() if r["race_judged"]}
    assert judged_sql.keys() == python.keys()
    for key, j in python.items():
        r = judged_sql[key]
        assert r["chance_best"] == pytest.approx(j.chance_best, abs=1e-6), key  # stats: float32 roll tables
        assert r["chance_made"] == pytest.approx(j.chance_made, abs=1e-6), key
        assert r["loss_pp"] == pytest.approx(j.loss_pp, abs=1e-4), key
        assert (r["mover_total"], r["other_total"]) == (j.mover_total, j.other_total)
        if r["loss_pp"] > 1e-3:  # a clear best (float32 tables can swap near-equal keeps)
            best = r["best_key"] if r["kind"] == "keep" else ("roll" if r["best_key"] == 1 else "bank")
            assert (dice_text(best) if r["kind"] == "keep" else best) == j.best
    assert any(r["loss_pp"] > RACE_BLUNDER_PP for r in judged_sql.values())


def test_every_choice_is_counted_once_by_the_single_turn_yardstick(simulated):
    """fct_decision_quality counts the two-player games' choices from the judge's output (which
    passes their single-turn columns on) and the others' straight from SQL: together they must
    be int_choice_values counted once, the choices outside any two-player turn included."""
    _, ds = simulated
    counts = (
        "select player, kind, dice, points_lo, sum({c})::bigint, sum({j})::bigint, "
        "round(sum({l}), 9), sum({o})::bigint, sum({b})::bigint from {t} group by all"
    )
    with session(ds, with_odds=False, with_policy=True) as con:
        run(con, "fct_decision_quality")
        run(con, "int_choice_values")  # built apart: fct_decision_quality reads its two halves only
        direct = con.execute(
            counts.format(
                c="1",
                j="judged::int",
                l="case when judged then loss else 0 end",
                o="(judged and loss < 1e-6)::int",
                b="(judged and loss > getvariable('f_blunder_threshold'))::int",
                t="int_choice_values",
            )
        ).fetchall()
        split = con.execute(
            counts.format(c="choices", j="judged", l="loss_points", o="optimal", b="blunders", t="fct_decision_quality")
        ).fetchall()
        blunders = "select b.game_no, b.seq, b.kind from (select unnest(blunder_rows) as b, kind from {t})"
        listed = sorted(con.execute(blunders.replace("b.kind", "kind").format(t="fct_decision_quality")).fetchall())
        expected = sorted(
            con.execute(
                "select game_no, seq, kind from int_choice_values "
                "where judged and loss > getvariable('f_blunder_threshold')"
            ).fetchall()
        )
        halves = {
            part: set(con.execute(f"select game_no, seq, kind from int_choice_values_{part}").fetchall())
            for part in ("two_player", "other_games")
        }
        seats = dict(
            con.execute(
                "select g.game_no, count(*) from int_games_in_scope g "
                "join stg_game_players p on g.game_id = p.game_id group by all"
            ).fetchall()
        )
        every_choice = set(con.execute("select game_no, seq, kind from int_choice_values").fetchall())
    assert sorted(split) == sorted(direct) and len(direct) > 10
    assert listed == expected and expected
    assert halves["two_player"] | halves["other_games"] == every_choice
    assert not halves["two_player"] & halves["other_games"]
    assert {seats[g] for g, _, _ in halves["two_player"]} == {2}
    assert {seats[g] for g, _, _ in halves["other_games"]} == {3}


def test_the_report_figures_add_up(simulated):
    _, ds = simulated
    tables = compute(ds, sections=["decisions-quality"])
    quality = tables["race_quality"].to_pylist()
    assert {r["yardstick"] for r in quality} == {"winning chance (two players)"}
    with session(ds, with_odds=False, with_policy=True) as con:
        rows = [r for r in run(con, "fct_race_choices").to_pylist() if r["race_judged"]]
        sql_accuracy = con.execute("select race_accuracy(2.5)").fetchone()[0]
    assert sql_accuracy == pytest.approx(accuracy(2.5), abs=1e-9)
    for r in quality:
        mine = [c for c in rows if r["scope"] == "overall" or c["player"] == r["player"]]
        assert r["judged"] == len(mine)
        assert r["loss_pp"] == pytest.approx(sum(c["loss_pp"] for c in mine))
        assert r["accuracy"] == pytest.approx(sum(accuracy(c["loss_pp"]) for c in mine) / len(mine))
        assert r["blunders"] == sum(c["loss_pp"] > RACE_BLUNDER_PP for c in mine)
        assert r["mistakes"] == sum(RACE_MISTAKE_PP < c["loss_pp"] <= RACE_BLUNDER_PP for c in mine)
    costliest = tables["race_costliest"].to_pylist()
    assert costliest == sorted(costliest, key=lambda r: -r["loss_pp"])
    assert all(r["loss_pp"] > RACE_MISTAKE_PP for r in costliest)
    assert all(r["line"] and r["game_id"] and r["seq"] for r in costliest)


def _head_to_head(rules: Ruleset, bots: tuple[str, str], games: int, seed: int) -> list[tuple[str, float]]:
    """(bot of the first player, first player's score: 1 win, 1/2 tie, 0 loss) per game."""
    rng = random.Random(seed)
    out = []
    for i in range(games):
        order = bots if i % 2 == 0 else bots[::-1]
        events, _ = play_game(f"g{i}", rng, Table(("ana", "bo"), order), rules, 0)
        scores = events[-1]["scores"]
        first = 1.0 if scores["ana"] > scores["bo"] else 0.5 if scores["ana"] == scores["bo"] else 0.0
        out.append((order[0], first))
    return out


def test_the_winning_chance_bot_beats_the_single_turn_bot(monkeypatch, tmp_path):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path))
    # a short race without an opening: the single-turn policy rolls on past the target where the
    # game is won by banking (1,000 games: 57 %, 4.7 standard errors above a half)
    rules = Ruleset.from_value({"base": "standard", "target": 300, "opening": 0})
    games = _head_to_head(rules, ("winprob", "optimal"), 800, 5)
    share = sum(s if bot == "winprob" else 1.0 - s for bot, s in games) / len(games)
    se = math.sqrt(0.25 / len(games))
    assert share - 2.6 * se > 0.5, share  # one-sided 99.5 %


def test_two_winning_chance_bots_give_the_first_player_the_solved_advantage(monkeypatch, tmp_path):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path))
    rules = Ruleset.from_value({"base": "standard", "target": 300, "opening": 0})
    games = _head_to_head(rules, ("winprob", "winprob"), 1500, 6)
    share = sum(s for _, s in games) / len(games)
    predicted = race_tables.race(rules).first_player()
    se = math.sqrt(predicted * (1 - predicted) / len(games))
    assert abs(share - predicted) < 3.3 * se, (share, predicted)


def test_costliest_text_names_the_yardsticks(simulated):
    from typer.testing import CliRunner

    from pipeline.cli.main import app

    _, ds = simulated
    result = CliRunner().invoke(app, ["stats", str(ds), "--section", "decisions-quality"])
    assert result.exit_code == 0, result.output
    assert "single-turn yardstick" in result.output and "winning-chance yardstick" in result.output
    out = CliRunner().invoke(app, ["stats", str(ds), "--section", "decisions-quality", "-f", "json"]).stdout
    assert json.loads(out)["tables"]["race_quality"][0]["yardstick"] == "winning chance (two players)"


def test_text_shows_the_worst_rows_of_the_long_lists_and_says_how_many(simulated):
    """The text cuts the two long lists to their worst TEXT_BLUNDERS rows, the same rows json
    has first, and says how many there are in all; --all shows every row."""
    import re

    from typer.testing import CliRunner

    from pipeline.cli.main import app
    from pipeline.cli.stats_cmd import TEXT_BLUNDERS

    _, ds = simulated
    args = ["stats", str(ds), "--section", "decisions-quality"]
    listed = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)["tables"]
    text = CliRunner().invoke(app, args).output
    everything = CliRunner().invoke(app, [*args, "--all"]).output
    assert "(--all, json and csv have them all)" not in everything

    def printed(out: str, game: str, seq: int) -> bool:  # a row: its game and seq side by side
        return re.search(rf"{re.escape(game)}\s+{seq}\b", out) is not None

    keys = {name: [(r["game_id"], r["seq"]) for r in listed[name]] for name in ("race_costliest", "blunders")}
    shown_anywhere = {key for rows in keys.values() for key in rows[:TEXT_BLUNDERS]}
    for name, note in (("race_costliest", "the costliest {} of {:,} ("), ("blunders", "the worst {} of {:,} blunders")):
        rows = listed[name]
        assert len(rows) > TEXT_BLUNDERS  # cut below
        assert note.format(TEXT_BLUNDERS, len(rows)) in text
        shown = keys[name][:TEXT_BLUNDERS]
        below = set(keys[name][TEXT_BLUNDERS:]) - shown_anywhere  # (a choice can be in both lists)
        assert below and all(printed(text, *key) for key in shown)
        assert not any(printed(text, *key) for key in below)
        assert all(printed(everything, *key) for key in below)


def test_cut_long_lists_are_the_whole_lists_first_rows_even_at_a_tie(simulated):
    """compute(list_rows=N) words only the rows that can be among the worst N: what it gives
    must be exactly the whole list's first N rows (its order: loss, then game and seq), with
    the whole list's length alongside, also where the N-th row's loss ties with the next."""
    from pipeline.stats import LONG_LISTS, ROWS_TOTAL

    _, ds = simulated
    sections = ["decisions-quality"]
    whole = compute(ds, sections=sections)
    ties = 0
    for name in LONG_LISTS:
        rows = whole[name]
        loss = rows.column("loss_pp" if name == "race_costliest" else "loss").to_pylist()
        edges = [n for n in range(1, len(loss)) if loss[n - 1] == loss[n]]  # cut inside a tie
        ties += bool(edges)
        for n in [*edges[:3], 1, len(loss) - 1, len(loss), len(loss) + 5]:
            cut = compute(ds, sections=sections, list_rows=n)[name]
            assert cut.to_pylist() == rows.slice(0, n).to_pylist(), (name, n)
            assert int(cut.schema.metadata[ROWS_TOTAL]) == rows.num_rows
    assert ties  # the fixture has equal losses at some edge: ties are exercised


def test_stored_turn_start_totals_are_the_race_turns_totals(simulated):
    """The replays write both corrected totals at each row's turn start into rolls and
    decisions as the turn opens; in two-player games they are int_race_turns' totals (derived
    from the turns table by a window and an as-of join), row for row, injected errors
    included; other games have no other's total. The rolls' dice keys are the dice_key macro's."""
    _, ds = simulated
    with session(ds, with_odds=False, with_policy=True) as con:
        run(con, "int_race_turns")
        con.execute("create temp table race_turns as select * from int_race_turns")
        for table in ("rolls", "decisions"):
            rows = con.execute(
                f"""
                select g.two_player, t.game_no is not null as has_turn,
                       r.start_total, r.other_start_total, t.mover_total, t.other_total
                from src_{table} as r
                inner join int_games_in_scope as g on r.game_id = g.game_id
                left join race_turns as t on t.game_no = g.game_no and t.player = r.player and t.turn = r.turn
                """
            ).fetchall()
            in_race = [r for r in rows if r[1]]
            assert len(in_race) > 100 and any(r[3] for r in in_race)
            assert all((r[2], r[3]) == (r[4], r[5]) for r in in_race), table
            assert all(r[3] is None for r in rows if not r[0]), table
        ((wrong_keys,),) = con.execute(
            "select count(*) from src_rolls "
            "where roll_key is distinct from dice_key(dice) or kept_key is distinct from dice_key(kept)"
        ).fetchall()
        ((keeps,),) = con.execute("select count(kept_key) from src_rolls").fetchall()
    assert wrong_keys == 0 and keeps > 100

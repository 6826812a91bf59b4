"""The league figures (ratings, rating history, head-to-head, trends) against independent
counts: ratings recomputed here by openskill itself from the games table, head-to-head and
trends counted here from the games, game_players and rolls tables in Python.

Two datasets: a simulated league (ingested logs with planted errors, so claimed and
corrected totals differ, and a few games whose game_end was cut off) and a hand-made one
whose every row a test controls (tied totals, a one-player game, games without timestamps,
starts out of game_id order).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from openskill.models import PlackettLuce
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.ingest import ingest
from pipeline.simulate.run import simulate
from pipeline.stats import Filters, League, compute, run, session
from pipeline.stats.fixtures import write_dataset

runner = CliRunner()
UTC = dt.timezone.utc
RATING_KEYS = ["player", "mu", "sigma", "ordinal", "games", "wins", "win_share", "mean_final_total", "change_last_10"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """80 simulated games of 2-4 players, 10 % with a planted error; the game_end of three
    games removed (not finished)."""
    root = tmp_path_factory.mktemp("league")
    log = root / "games.jsonl"
    simulate(log, 80, seed=7, players=(2, 4), inject_rate=0.1)
    lines = log.read_bytes().splitlines()
    ends = [i for i, line in enumerate(lines) if b'"game_end"' in line]
    cut = set(ends[5:8])
    (root / "cut.jsonl").write_bytes(b"\n".join(line for i, line in enumerate(lines) if i not in cut) + b"\n")
    ingest([str(root / "cut.jsonl")], root / "ds")
    return root / "ds"


def games_table(ds: Path) -> list[dict]:
    files = open_dataset(ds).table_files("games")
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def table_rows(ds: Path, table: str) -> list[dict]:
    return [row for f in open_dataset(ds).table_files(table) for row in pq.read_table(f).to_pylist()]


def rated_games(games: list[dict]) -> list[tuple[str, list[str], list[int]]]:
    """(game_id, players in seat order, corrected totals) of the finished games of two or more
    players, in rating order: start (null last), then game_id."""
    done = [g for g in games if g["complete"] and len(g["players"]) >= 2]
    far = dt.datetime.max.replace(tzinfo=UTC)
    done.sort(key=lambda g: (g["first_ts"] is None, g["first_ts"] or far, g["game_id"]))
    out = []
    for g in done:
        totals = json.loads(g["corrected"])
        out.append((g["game_id"], list(g["players"]), [totals[p] for p in g["players"]]))
    return out


def openskill_ratings(games: list[tuple[str, list[str], list[int]]]):
    """Every game through openskill's PlackettLuce with its defaults: each player's rating
    after each of their games, and their final rating."""
    model = PlackettLuce()
    now: dict[str, object] = {}
    history: dict[str, list] = defaultdict(list)
    for game_id, players, totals in games:
        ranks = [1 + sum(t > mine for t in totals) for mine in totals]
        teams = [[now.get(p) or model.rating(name=p)] for p in players]
        before = {p: team[0] for p, team in zip(players, teams)}
        for p, (new,) in zip(players, model.rate(teams, ranks=ranks)):
            history[p].append((game_id, before[p], new))
            now[p] = new
    return now, history


def test_ratings_equal_openskill_on_the_same_games_in_the_same_order(league):
    games = rated_games(games_table(league))
    assert 60 < len(games) < 80  # the cut games are not rated
    now, history = openskill_ratings(games)
    got = compute(league, sections=["ratings"])["ratings"]
    assert got.column_names == RATING_KEYS
    rows = got.to_pylist()
    assert {r["player"] for r in rows} == set(now)
    for r in rows:
        want = now[r["player"]]
        assert math.isclose(r["mu"], want.mu, rel_tol=1e-12)
        assert math.isclose(r["sigma"], want.sigma, rel_tol=1e-12)
        assert math.isclose(r["ordinal"], want.ordinal(), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(r["ordinal"], want.mu - 3 * want.sigma, rel_tol=1e-12, abs_tol=1e-12)
        mine = history[r["player"]]
        assert r["games"] == len(mine)
        back = mine[max(len(mine) - 10, 0)][1]  # the rating before the 10th-last game
        assert math.isclose(r["change_last_10"], want.ordinal() - back.ordinal(), rel_tol=1e-9, abs_tol=1e-12)
    assert [r["ordinal"] for r in rows] == sorted((r["ordinal"] for r in rows), reverse=True)


def test_rating_history_is_openskill_after_every_game(league):
    _, history = openskill_ratings(rated_games(games_table(league)))
    got = compute(league, sections=["rating-history"])["rating_history"].to_pylist()
    assert len(got) == sum(len(h) for h in history.values())
    for player, games in history.items():
        mine = [r for r in got if r["player"] == player]
        assert [r["game_id"] for r in mine] == [g for g, _, _ in games]
        assert [r["rated_games"] for r in mine] == list(range(1, len(games) + 1))
        for r, (_, _, after) in zip(mine, games):
            assert math.isclose(r["mu"], after.mu, rel_tol=1e-12)
            assert math.isclose(r["sigma"], after.sigma, rel_tol=1e-12)


def test_wins_games_and_totals_of_the_standings(league):
    games = rated_games(games_table(league))
    wins, played, totals = defaultdict(int), defaultdict(int), defaultdict(list)
    for _, players, scores in games:
        for p, s in zip(players, scores):
            played[p] += 1
            wins[p] += s == max(scores)
            totals[p].append(s)
    for r in compute(league, sections=["ratings"])["ratings"].to_pylist():
        p = r["player"]
        assert (r["games"], r["wins"]) == (played[p], wins[p])
        assert math.isclose(r["win_share"], wins[p] / played[p])
        assert math.isclose(r["mean_final_total"], sum(totals[p]) / len(totals[p]))


def test_min_games_and_player_narrow_the_rows_not_the_ratings(league):
    whole = {r["player"]: r for r in compute(league, sections=["ratings"])["ratings"].to_pylist()}
    cut = sorted(r["games"] for r in whole.values())[len(whole) // 2]
    some = compute(league, sections=["ratings"], league=League(min_games=cut))["ratings"].to_pylist()
    assert {r["player"] for r in some} == {p for p, r in whole.items() if r["games"] >= cut}
    assert all(r == whole[r["player"]] for r in some)
    two = sorted(whole)[:2]
    mine = compute(league, Filters(players=tuple(two)), sections=["ratings"])["ratings"].to_pylist()
    assert [r["player"] for r in mine] == [p for p in sorted(whole, key=lambda p: -whole[p]["ordinal"]) if p in two]
    assert all(r == whole[r["player"]] for r in mine)


def test_since_rates_only_the_games_that_started_from_that_day(league):
    games = games_table(league)
    days = sorted({g["first_ts"].date() for g in games})
    since = days[len(days) // 2]
    now, _ = openskill_ratings(rated_games([g for g in games if g["first_ts"].date() >= since]))
    got = compute(league, Filters(since=since), sections=["ratings"])["ratings"].to_pylist()
    assert {r["player"]: r["mu"] for r in got} == pytest.approx({p: r.mu for p, r in now.items()}, rel=1e-12)


def independent_pairs(games: list[dict]) -> dict[tuple[str, str], list[int]]:
    """(player, opponent) -> [games, above, below, tied, games sitting before, above sitting
    before], counted from the games table alone (finished games, corrected totals)."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * 6)
    for g in games:
        if not g["complete"]:
            continue
        totals = json.loads(g["corrected"])
        for i, p in enumerate(g["players"]):
            for j, q in enumerate(g["players"]):
                if p == q:
                    continue
                c = out[(p, q)]
                c[0] += 1
                c[1] += totals[p] > totals[q]
                c[2] += totals[p] < totals[q]
                c[3] += totals[p] == totals[q]
                c[4] += i < j
                c[5] += i < j and totals[p] > totals[q]
    return out


def test_head_to_head_counts_equal_a_count_from_the_games_table(league):
    want = independent_pairs(games_table(league))
    rows = compute(league, sections=["head-to-head"])["head_to_head"].to_pylist()
    got = {
        (r["player"], r["opponent"]): [
            r["games"],
            r["above"],
            r["below"],
            r["tied"],
            r["before_games"],
            r["before_above"],
        ]
        for r in rows
    }
    assert got == dict(want)
    for r in rows:
        assert r["before_games"] + r["after_games"] == r["games"]
        decided = r["above"] + r["below"]
        if decided:
            assert r["share"] == pytest.approx(r["above"] / decided)
            assert r["share_lo"] <= r["share"] <= r["share_hi"]
    one = rows[0]["player"]
    narrowed = compute(league, Filters(player=one), sections=["head-to-head"])["head_to_head"].to_pylist()
    assert narrowed == [r for r in rows if r["player"] == one]


def test_trends_count_games_wins_and_rolls_per_month(league):
    games = {g["game_id"]: g for g in games_table(league)}
    want = defaultdict(lambda: [0, 0, 0, 0, 0])  # games, finished, wins, rolls, farkles
    for g in games.values():
        totals = json.loads(g["corrected"])
        month = g["first_ts"].astimezone(UTC).date().replace(day=1)
        for p in g["players"]:
            c = want[(p, month)]
            c[0] += 1
            c[1] += bool(g["complete"])
            c[2] += bool(g["complete"]) and totals[p] == max(totals.values())
    for roll in table_rows(league, "rolls"):
        g = games[roll["game_id"]]
        c = want[(roll["player"], g["first_ts"].astimezone(UTC).date().replace(day=1))]
        c[3] += 1
        c[4] += not roll["scored"]
    got = compute(league, sections=["trends"])["trends"].to_pylist()
    assert {(r["player"], r["period"]): [r["games"], r["finished_games"], r["wins"], r["rolls"], r["farkles"]]
            for r in got} == dict(want)  # fmt: skip


def test_trends_decision_loss_adds_up_to_the_decision_quality_per_player(league):
    tables = compute(league, sections=["trends", "decisions-quality"])
    per_player = defaultdict(lambda: [0, 0.0])
    for r in tables["trends"].to_pylist():
        per_player[r["player"]][0] += r["judged_choices"]
        per_player[r["player"]][1] += r["decision_loss_points"]
    quality = {r["player"]: r for r in tables["decision_quality"].to_pylist() if r["scope"] == "player"}
    assert quality and set(per_player) == set(quality)
    for p, (judged, loss) in per_player.items():
        assert judged == quality[p]["judged"]
        assert loss == pytest.approx(quality[p]["loss_points"], rel=1e-9)


def test_weeks_start_on_monday(league):
    got = compute(league, sections=["trends"], league=League(by="week"))["trends"].to_pylist()
    assert got and all(r["period"].weekday() == 0 for r in got)
    months = compute(league, sections=["trends"])["trends"].to_pylist()
    assert sum(r["games"] for r in got) == sum(r["games"] for r in months)


def test_the_cached_figures_equal_the_computed_ones(league, tmp_path, monkeypatch):
    first = compute(league, sections=["ratings", "trends"])
    kept = sorted(p.name for p in (tmp_path / "cache").glob("model-*.arrow"))
    assert [n.split("-")[1] for n in kept] == ["fct_game_decision_loss", "rating_history"]
    again = compute(league, sections=["ratings", "trends"])  # from the cache
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", "off")
    fresh = compute(league, sections=["ratings", "trends"])
    for name in ("ratings", "trends"):  # equal but for the order DuckDB's parallel sums add in
        assert first[name].schema == again[name].schema == fresh[name].schema
        for a, b, c in zip(first[name].to_pylist(), again[name].to_pylist(), fresh[name].to_pylist()):
            for key, value in a.items():
                if isinstance(value, float):
                    assert value == pytest.approx(b[key], rel=1e-12) == pytest.approx(c[key], rel=1e-12)
                else:
                    assert value == b[key] == c[key]
    other = compute(league, Filters(player=first["ratings"]["player"][0].as_py()), sections=["trends"])
    assert other["trends"].num_rows < first["trends"].num_rows  # the filters are part of the key


# ---- the hand-made dataset ----------------------------------------------------------------
def game(game_id, players, totals, *, ts=None, complete=True):
    return {
        "game_id": game_id,
        "ruleset": '{"base":"standard"}',
        "ruleset_name": "standard",
        "players": players,
        "claimed": json.dumps(dict(zip(players, totals))),
        "corrected": json.dumps(dict(zip(players, totals))),
        "complete": complete,
        "events": 10,
        "first_ts": ts,
        "last_ts": ts,
    }


def seats(g):
    totals = json.loads(g["corrected"])
    best = max(totals.values())
    return [
        {
            "game_id": g["game_id"],
            "player": p,
            "seat": i + 1,
            "claimed_total": totals[p],
            "corrected_total": totals[p],
            "won_claimed": totals[p] == best,
            "won_corrected": g["complete"] and totals[p] == best,
        }
        for i, p in enumerate(g["players"])
    ]


def day(d: int) -> dt.datetime:
    return dt.datetime(2026, 3, d, 12, tzinfo=UTC)


HAND_GAMES = [
    game("g5", ["ana", "bo", "cy"], [10000, 10000, 6000], ts=day(2)),  # a tie for first, rated first
    game("g1", ["bo", "ana"], [9000, 10050], ts=day(3)),
    game("g2", ["cy", "ana"], [10000, 3000], ts=day(3)),  # same day: by ts, then game_id
    game("g3", ["ana", "bo"], [7000, 2000], ts=day(9), complete=False),  # no game_end: not rated
    game("g4", ["dee"], [10000], ts=day(10)),  # one player: no match
    game("g0", ["bo", "cy"], [5000, 10000]),  # no timestamp: rated last
]


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> Path:
    return write_dataset(
        tmp_path_factory.mktemp("hand") / "ds",
        {"games": HAND_GAMES, "game_players": [s for g in HAND_GAMES for s in seats(g)]},
    )


def test_ties_share_a_place_and_the_order_is_start_then_game_id(hand):
    history = compute(hand, sections=["rating-history"])["rating_history"].to_pylist()
    assert [r["game_id"] for r in history if r["player"] in ("ana", "bo", "cy")][::1] == [
        "g5", "g5", "g5", "g1", "g1", "g2", "g2", "g0", "g0",
    ]  # fmt: skip
    assert {(r["game_id"], r["player"]): r["place"] for r in history if r["game_id"] == "g5"} == {
        ("g5", "ana"): 1,
        ("g5", "bo"): 1,
        ("g5", "cy"): 3,
    }
    now, _ = openskill_ratings(rated_games(HAND_GAMES))
    got = compute(hand, sections=["ratings"])["ratings"].to_pylist()
    assert {r["player"]: (r["mu"], r["sigma"]) for r in got} == {p: (r.mu, r.sigma) for p, r in now.items()}
    assert "dee" not in {r["player"] for r in got}
    assert {r["player"]: r["wins"] for r in got} == {"ana": 2, "bo": 1, "cy": 2}


def test_what_the_figures_leave_out_is_counted(hand):
    left = {r["figure"]: r for r in compute(hand, sections=["ratings"])["games_left_out"].to_pylist()}
    assert left["ratings"] == {"figure": "ratings", "games": 6, "counted": 4, "unfinished": 1, "one_player": 1}
    assert left["trends"]["unfinished"] == 1 and left["trends"]["counted"] == 5


def test_stats_cli_says_what_it_left_out_and_keys_are_exact(hand):
    result = runner.invoke(app, ["stats", str(hand), "-s", "ratings", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload["tables"]) == ["ratings"]
    assert all(list(r) == RATING_KEYS for r in payload["tables"]["ratings"])
    assert payload["games_left_out"]["ratings"] == {"games": 6, "counted": 4, "unfinished": 1, "one_player": 1}
    text = runner.invoke(app, ["stats", str(hand), "-s", "ratings"])
    assert text.exit_code == 0
    assert "counted 4 of 6 games; left out: 1 not finished (no game_end, or abandoned), 1 of one player" in " ".join(
        text.stdout.split()
    )


def test_stats_cli_filters_of_a_league(hand):
    two = runner.invoke(app, ["stats", str(hand), "-s", "head-to-head", "-p", "ana", "-p", "cy", "-f", "json"])
    assert two.exit_code == 0, two.output
    pairs = [(r["player"], r["opponent"]) for r in json.loads(two.stdout)["tables"]["head_to_head"]]
    assert pairs == [("ana", "bo"), ("ana", "cy"), ("cy", "ana"), ("cy", "bo")]
    assert json.loads(two.stdout)["filters"]["player"] == ["ana", "cy"]
    few = runner.invoke(app, ["stats", str(hand), "-s", "ratings", "--min-games", "3", "-f", "csv"])
    assert few.exit_code == 0, few.output
    assert len(few.stdout.splitlines()) == 1 + 3  # each of ana, bo and cy has 3 rated games
    none = runner.invoke(app, ["stats", str(hand), "-s", "ratings", "--min-games", "4"])
    assert none.exit_code == 2 and "has 4 rated games (--min-games)" in none.output
    nobody = runner.invoke(app, ["stats", str(hand), "-s", "ratings", "-p", "ana", "-p", "zed"])
    assert nobody.exit_code == 2 and "no player 'zed'" in nobody.output
    early = runner.invoke(app, ["stats", str(hand), "-s", "trends", "--until", "2026-01-01"])
    assert early.exit_code == 2 and "no game" in early.output
    week = runner.invoke(app, ["stats", str(hand), "-s", "trends", "--by", "week", "-f", "json"])
    periods = {r["period"] for r in json.loads(week.stdout)["tables"]["trends"]}
    assert periods == {"2026-03-02", "2026-03-09", None}


def test_sessions_can_read_the_league_models(hand):
    with session(hand, with_odds=False) as con:
        results = run(con, "fct_game_results").to_pylist()
    assert {r["game_id"] for r in results} == {"g0", "g1", "g2", "g4", "g5"}

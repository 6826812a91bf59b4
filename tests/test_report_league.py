"""The report's league sections: standings, rating over time, head to head and one panel per
player (trends, opponents, costliest choices, games with findings).

Each section is checked against the stats models it is drawn from (`compute`, the same
tables `farkle-logs stats` prints) and, where a count is simple, against a count made here
from the dataset's tables: the data behind each chart must be those rows, and a section that
went missing or drew other rows fails here. The models themselves are checked against
openskill and independent counts in tests/test_league.py.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.ingest import ingest
from pipeline.report import build_report, charts, gather, league_charts
from pipeline.report import league as league_module
from pipeline.report.bundle import javascript_bundle
from pipeline.report.league import MIN_DECIDED, NoRatedPlayer
from pipeline.report.page import render
from pipeline.simulate.run import simulate
from pipeline.stats import Filters, League, compute
from pipeline.stats.fixtures import write_dataset
from tests.test_league import HAND_GAMES, independent_pairs, seats
from tests.test_league import game as hand_game
from tests.test_report import GENERATED, HOSTILE, Tags, build_dataset, remote_sources
from tests.test_report_snapshots import SNAPSHOTS, UPDATE as UPDATE_SNAPSHOTS

runner = CliRunner()
UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def league_ds(tmp_path_factory) -> Path:
    """60 simulated games of 2-4 players, 15 % with a planted error; the game_end of three
    games removed (not finished)."""
    root = tmp_path_factory.mktemp("report-league")
    log = root / "games.jsonl"
    simulate(log, 60, seed=5, players=(2, 4), inject_rate=0.15)
    lines = log.read_bytes().splitlines()
    ends = [i for i, line in enumerate(lines) if b'"game_end"' in line]
    cut = set(ends[10:13])
    (root / "cut.jsonl").write_bytes(b"\n".join(line for i, line in enumerate(lines) if i not in cut) + b"\n")
    ingest([str(root / "cut.jsonl")], root / "ds")
    return root / "ds"


@pytest.fixture(scope="module")
def data(league_ds):
    return gather(league_ds)


@pytest.fixture(scope="module")
def page(data) -> str:
    return render(data, "league", javascript_bundle(), GENERATED)


@pytest.fixture(scope="module")
def models(league_ds) -> dict:
    """The stats tables of the league sections, as `farkle-logs stats` computes them."""
    return compute(league_ds, sections=["ratings", "rating-history", "head-to-head", "trends", "decisions-quality"])


def hand_at(game_id: str, players: list[str], totals: list[int], hour: int) -> dict:
    return hand_game(game_id, players, totals, ts=dt.datetime(2026, 3, 1, hour, tzinfo=UTC))


def table_rows(ds: Path, table: str) -> list[dict]:
    return [row for f in open_dataset(ds).table_files(table) for row in pq.read_table(f).to_pylist()]


def spec_data(text: str, chart: str) -> list[dict]:
    found = re.search(rf'<script type="application/json" id="spec-{chart}">(.*?)</script>', text, re.S)
    assert found, f"no chart {chart} on the page"
    spec = json.loads(found.group(1))
    return spec["data"]["values"]


def section(text: str, key: str) -> str:
    found = re.search(rf'<section id="{key}" data-section="{key}">(.*?)</section>', text, re.S)
    assert found, f"no section {key}"
    return found.group(1)


def panel(text: str, n: int) -> str:
    found = re.search(rf'<article class="player" id="player-{n}">(.*?)</article>', text, re.S)
    assert found, f"no panel player-{n}"
    return found.group(1)


def body_rows(table_html: str) -> list[list[str]]:
    """The cells of each row of a table's body, as text."""
    body = re.search(r"<tbody>(.*?)</tbody>", table_html, re.S).group(1)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- sections
def test_the_league_sections_are_on_the_page(page):
    h2 = Tags(page).h2
    for title in ("Standings", "Rating over time", "Head to head", "Player by player"):
        assert title in h2
    assert (
        h2.index("Standings")
        < h2.index("Rating over time")
        < h2.index("Head to head")
        < h2.index("Bust rate by dice left")
    )
    assert h2[-1] == "Player by player"
    assert 'id="chart-rating"' in section(page, "rating")
    assert 'id="chart-head_to_head"' in section(page, "head_to_head")
    assert remote_sources(page) == []


def test_a_dispute_page_has_no_league(league_ds, data):
    game = data.detailed_games[0] if data.detailed_games else table_rows(league_ds, "games")[0]["game_id"]
    one = gather(league_ds, dispute_game=game)
    assert one.league is None
    assert "Standings" not in Tags(render(one, "g", javascript_bundle(), GENERATED)).h2


# --------------------------------------------------------------------------- standings
def test_the_standings_are_the_ratings_model_row_for_row(page, models):
    want = models["ratings"].to_pylist()
    table = re.search(r'<table class="sortable standings">.*?</table>', section(page, "standings"), re.S).group(0)
    values = [
        [html.unescape(v) for v in re.findall(r'data-value="([^"]*)"', row)]
        for row in re.findall(r"<tr>(.*?)</tr>", re.search(r"<tbody>(.*?)</tbody>", table, re.S).group(1), re.S)
    ]
    assert len(values) == len(want) > 5
    for place, (got, r) in enumerate(zip(values, want), start=1):
        # place, player, ordinal, mu, sigma, games, wins, win share, mean final total, change
        assert got[0] == str(place) and got[1] == r["player"]
        assert [float(v) for v in got[2:5]] == [r["ordinal"], r["mu"], r["sigma"]]
        assert [int(got[5]), int(got[6])] == [r["games"], r["wins"]]
        assert float(got[7]) == r["win_share"] and float(got[9]) == r["change_last_10"]


def test_the_standings_say_which_games_they_count(league_ds, page):
    games = table_rows(league_ds, "games")
    rated = [g for g in games if g["complete"] and len(g["players"]) >= 2]
    unfinished = [g for g in games if not g["complete"]]
    assert len(unfinished) == 3
    assert (
        f"Ratings count {len(rated)} finished games of {len(games)}; left out: 3 games not finished."
        in html.unescape(section(page, "standings"))
    )


def test_min_games_narrows_the_standings_and_nothing_left_is_an_error(league_ds, models, tmp_path):
    games = sorted(r["games"] for r in models["ratings"].to_pylist())
    floor = games[len(games) // 2]
    narrowed = gather(league_ds, league=League(min_games=floor)).league
    assert narrowed.ratings.to_pylist() == [r for r in models["ratings"].to_pylist() if r["games"] >= floor]
    text = build_report(league_ds, league=League(min_games=floor), generated=GENERATED)
    assert f"Players with fewer than {floor} rated games are not listed" in text
    with pytest.raises(NoRatedPlayer):
        gather(league_ds, league=League(min_games=games[-1] + 1))
    result = runner.invoke(
        app, ["report", str(league_ds), "--min-games", str(games[-1] + 1), "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 2
    assert f"has {games[-1] + 1} rated games (--min-games)" in result.output


# --------------------------------------------------------------------------- rating over time
def last_per_step(history: list[dict], players: list[str], step) -> list[dict]:
    """Each player's rating after their last game of each step (a game's start, a day or a
    week), counted here from the rating history's rows; the ratings to the chart's digits."""
    out: dict[tuple, dict] = {}
    for r in sorted(history, key=lambda r: r["rated_games"]):
        if r["player"] in players and r["start_ts"] is not None:
            key = (r["player"], step(r["start_ts"]))
            games = out.get(key, {}).get("games", 0) + 1
            out[key] = {
                "player": r["player"],
                "moment": iso(step(r["start_ts"])),
                "games": games,
                "rated_games": r["rated_games"],
                "mu": round(r["mu"], league_charts.RATING_DIGITS),
                "sigma": round(r["sigma"], league_charts.RATING_DIGITS),
                "ordinal": round(r["ordinal"], league_charts.RATING_DIGITS),
            }
    return sorted(out.values(), key=lambda r: (r["player"], r["moment"]))


def chart_points(points: list[dict]) -> list[dict]:
    keys = ("player", "moment", "games", "rated_games", "mu", "sigma", "ordinal")
    return sorted(({k: p[k] for k in keys} for p in points), key=lambda r: (r["player"], r["moment"]))


def test_the_rating_chart_is_the_rating_history_after_every_game(data, page, models):
    shown = data.league.shown
    assert shown == models["ratings"].column("player").to_pylist()[: league_module.LEAGUE_PLAYERS]
    points = spec_data(page, "rating")
    assert data.league.rating_unit == "game"
    assert all(p["when"].endswith(" UTC") and len(p["when"]) == len("2026-03-01 10:00 UTC") for p in points)
    history = models["rating_history"].to_pylist()
    want = last_per_step(history, shown, lambda ts: ts)
    assert chart_points(points) == want
    assert sum(p["games"] for p in points) == sum(1 for r in history if r["player"] in shown)


def day(ts: dt.datetime) -> dt.datetime:
    ts = ts.astimezone(UTC)
    return dt.datetime(ts.year, ts.month, ts.day, tzinfo=UTC)


def week(ts: dt.datetime) -> dt.datetime:
    return day(ts) - dt.timedelta(days=ts.astimezone(UTC).weekday())


def test_past_the_cap_the_rating_chart_has_one_point_per_player_and_day_then_week(data, league_ds, models, monkeypatch):
    history = models["rating_history"].to_pylist()
    shown = data.league.shown
    days = len(last_per_step(history, shown, day))
    assert days < sum(1 for r in history if r["player"] in shown)  # a day holds several games of someone
    for cap, unit, step, words in ((days, "day", day, "a day (UTC)"), (days - 1, "week", week, "a week (from Monday")):
        monkeypatch.setattr(league_module, "RATING_POINTS", cap)
        capped = gather(league_ds)
        assert capped.league.rating_unit == unit
        text = render(capped, "league", javascript_bundle(), GENERATED)
        points = spec_data(text, "rating")
        assert chart_points(points) == last_per_step(history, shown, step)
        assert all(len(p["when"]) == len("2026-03-01 UTC") for p in points)
        assert f"each point is a player's rating after their last game of {words}" in html.unescape(
            section(text, "rating")
        )


# --------------------------------------------------------------------------- head to head
def test_the_matrix_is_the_head_to_head_model_and_an_independent_count(league_ds, data, page, models):
    shown = data.league.matrix_rows
    assert shown == data.league.shown[: league_module.MATRIX_PLAYERS] == data.league.matrix_columns
    cells = spec_data(page, "head_to_head")
    keys = ("player", "opponent", "games", "above", "below", "tied", "share", "share_lo", "share_hi")
    want = [
        {k: r[k] for k in keys}
        for r in models["head_to_head"].to_pylist()
        if r["player"] in shown and r["opponent"] in shown
    ]
    assert sorted(({k: c[k] for k in keys} for c in cells), key=lambda r: (r["player"], r["opponent"])) == want
    counted = independent_pairs(table_rows(league_ds, "games"))
    for c in cells:
        assert [c["games"], c["above"], c["below"], c["tied"]] == counted[(c["player"], c["opponent"])][:4]
        assert c["decided"] == c["above"] + c["below"]
        assert c["label"] == f"{c['above']}–{c['below']}"


def test_a_cell_of_few_decided_games_is_not_coloured(tmp_path):
    """ana and bo meet six times (ana above in four), ana and cy twice: only the first pair's
    cells get a colour; the others are grey with their counts written in them."""
    games = [hand_at(f"b{i}", ["ana", "bo"], [10000, 5000] if i < 4 else [5000, 10000], i) for i in range(6)]
    games += [hand_at(f"c{i}", ["cy", "ana"], [10000, 5000], 10 + i) for i in range(2)]
    ds = write_dataset(tmp_path / "ds", {"games": games, "game_players": [s for g in games for s in seats(g)]})
    text = build_report(ds, generated=GENERATED)
    spec = json.loads(re.search(r'id="spec-head_to_head">(.*?)</script>', text, re.S).group(1))
    color = spec["layer"][0]["encoding"]["color"]
    assert color["condition"]["test"] == f"(datum.decided >= {MIN_DECIDED})"
    assert color["condition"]["field"] == "share" and color["value"] == "#e6e6e6"
    cells = {(c["player"], c["opponent"]): (c["decided"], c["label"]) for c in spec["data"]["values"]}
    assert cells == {
        ("ana", "bo"): (6, "4–2"),
        ("bo", "ana"): (6, "2–4"),
        ("ana", "cy"): (2, "0–2"),
        ("cy", "ana"): (2, "2–0"),
    }
    assert MIN_DECIDED > 2  # the ana-cy cells are grey


# --------------------------------------------------------------------------- each player
def test_each_panel_holds_the_players_trends(data, page, models):
    trends = models["trends"].to_pylist()
    for n, player in enumerate(data.league.shown, start=1):
        text = panel(page, n)
        assert f"<h3>{html.escape(player)}</h3>" in text
        table = re.search(r'<table class="compact trends">.*?</table>', text, re.S).group(0)
        want = [r for r in trends if r["player"] == player]
        got = body_rows(table)
        assert [row[0] for row in got] == [r["period"].isoformat() for r in want]
        assert [[int(x) for x in row[1:4]] for row in got] == [
            [r["games"], r["finished_games"], r["wins"]] for r in want
        ]
        few = re.findall(r'<tr class="(few|)">', table)
        assert few == ["few" if r["finished_games"] < league_module.MIN_PERIOD_GAMES else "" for r in want]


def test_each_panel_lists_the_players_costliest_choices(data, page, models):
    blunders = models["blunders"].to_pylist()
    assert blunders  # bots blunder: the tables below are not all empty
    for n, player in enumerate(data.league.shown, start=1):
        text = panel(page, n)
        mine = [r for r in blunders if r["player"] == player][: league_module.PLAYER_CHOICES]
        if not mine:
            assert "No choice gave up more than 150 expected points" in text
            continue
        table = re.search(r'<table class="compact choices">.*?</table>', text, re.S).group(0)
        got = body_rows(table)
        assert [(row[0], int(row[1]), float(row[-1].replace(",", ""))) for row in got] == [
            (r["game_id"], r["seq"], round(r["loss"], 1)) for r in mine
        ]


def test_each_panel_lists_the_players_games_with_findings(league_ds, data, page):
    findings = defaultdict(lambda: [0, 0])  # game -> findings, errors, counted from the findings table
    for f in table_rows(league_ds, "findings"):
        if f["game_id"] is not None:
            findings[f["game_id"]][0] += 1
            findings[f["game_id"]][1] += f["severity"] == "error"
    games = table_rows(league_ds, "games")
    seen_any = False
    for n, player in enumerate(data.league.shown, start=1):
        text = panel(page, n)
        theirs = {g["game_id"] for g in games if player in g["players"] and g["game_id"] in findings}
        if not theirs:
            assert "No game of theirs has a finding." in text
            continue
        seen_any = True
        table = re.search(r'<table class="compact games">.*?</table>', text, re.S).group(0)
        got = body_rows(table)
        assert {row[0] for row in got} <= theirs and len(got) == min(len(theirs), league_module.PLAYER_GAMES)
        assert [(int(row[2]), int(row[3])) for row in got] == [
            (findings[row[0]][1], findings[row[0]][0]) for row in got
        ]
        assert [int(row[2]) for row in got] == sorted((int(row[2]) for row in got), reverse=True)
        assert f"{len(theirs)} game{'s' if len(theirs) != 1 else ''} of theirs with findings" in html.unescape(text)
    assert seen_any


def test_player_filter_gives_their_panel_their_matrix_row_and_their_opponents(league_ds, models):
    player = models["ratings"].column("player")[0].as_py()
    data = gather(league_ds, Filters(player=player))
    lg = data.league
    assert lg.shown == [player] and lg.matrix_rows == [player]
    met = [r for r in models["head_to_head"].to_pylist() if r["player"] == player]
    assert sorted(lg.matrix_columns) == sorted(r["opponent"] for r in met)
    assert [r["games"] for r in sorted(met, key=lambda r: lg.matrix_columns.index(r["opponent"]))] == sorted(
        (r["games"] for r in met), reverse=True
    )
    text = render(data, "one", javascript_bundle(), GENERATED)
    assert "player-2" not in text and 'id="player-1"' in text
    assert [c["player"] for c in spec_data(text, "head_to_head")] == [player] * len(met)
    assert lg.ratings.column("player").to_pylist() == [player]
    # the rating is the league's, not one computed over this player's games alone
    assert lg.ratings.to_pylist() == [r for r in models["ratings"].to_pylist() if r["player"] == player]


def test_report_cli_takes_the_league_options(league_ds, models, tmp_path):
    a, b = models["ratings"].column("player").to_pylist()[:2]
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(league_ds), "-o", str(out), "-p", a, "-p", b, "--by", "week"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert f"covers players {a}, {b}" in text
    assert text.count('<article class="player"') == 2 and "<h4>Trends by week</h4>" in text
    weeks = {
        r["period"].isoformat()
        for r in compute(league_ds, Filters(players=(a,)), ["trends"], league=League(by="week"))["trends"].to_pylist()
        if r["player"] == a
    }
    assert {
        row[0]
        for row in body_rows(re.search(r'<table class="compact trends">.*?</table>', panel(text, 1), re.S).group(0))
    } == weeks


# --------------------------------------------------------------------------- hostile and small data
def test_hostile_names_are_escaped_in_the_league_sections(tmp_path):
    text = build_report(build_dataset(tmp_path), generated=GENERATED)
    assert HOSTILE not in text
    escaped = html.escape(HOSTILE)
    for key in ("standings", "each_player"):
        assert escaped in section(text, key)
    assert re.search(r'<article class="player" id="player-\d">', text)  # ids by position, never by name
    for chart in ("rating", "head_to_head"):
        raw = re.search(rf'id="spec-{chart}">(.*?)</script>', text, re.S).group(1)
        assert "\\u003cb\\u003ezed\\u003c/b\\u003e\\u003c/script\\u003e" in raw
        assert HOSTILE in {r["player"] for r in spec_data(text, chart)}
    assert text.lower().count("</script>") == text.lower().count("<script")


def test_a_league_of_few_games_says_what_it_cannot_show(tmp_path):
    """The hand-made league of tests/test_league.py: a tie, an unfinished game, a one-player
    game and a game without a timestamp."""
    ds = write_dataset(
        tmp_path / "ds", {"games": HAND_GAMES, "game_players": [s for g in HAND_GAMES for s in seats(g)]}
    )
    text = html.unescape(build_report(ds, generated=GENERATED))
    standings = section(text, "standings")
    assert "Ratings count 4 finished games of 6; left out: 1 game not finished, 1 game of one player." in standings
    rating = section(text, "rating")
    assert "2 players have rated games without a timestamp (2, counted per player)" in rating
    # dee sat only in a game of one player: not rated, so neither in the standings nor a panel
    assert "dee" not in standings and "<h3>dee</h3>" not in text
    assert "Head to head count 4 finished games of 6" in section(text, "head_to_head")


def test_no_rated_game_gives_notes_not_empty_charts(tmp_path):
    games = [g for g in HAND_GAMES if g["game_id"] in ("g3", "g4")]  # unfinished, one player
    ds = write_dataset(tmp_path / "ds", {"games": games, "game_players": [s for g in games for s in seats(g)]})
    text = build_report(ds, generated=GENERATED)
    assert "No player is rated: no finished game with two or more players in these games." in text
    assert "No rated game with a time: no rating to chart." in text
    assert "No two players met in a finished game: no head to head to chart." in text
    assert 'id="chart-rating"' not in text and 'id="chart-head_to_head"' not in text


def test_a_dataset_without_choice_states_has_standings_but_no_trends(tmp_path):
    """Trends show each period's decision loss, judged in the turn state rolls carry since a
    later version: a dataset written before gets the rest of the league and a note."""
    ds = write_dataset(
        tmp_path / "old", {"games": HAND_GAMES, "game_players": [s for g in HAND_GAMES for s in seats(g)]}
    )
    path = ds / "rolls" / "part-0.parquet"
    pq.write_table(pq.read_table(path).drop(["points_before", "opened"]), path)
    text = build_report(ds, generated=GENERATED)
    assert re.search(r"<tbody><tr>.*?ana", section(text, "standings"), re.S)
    assert "ingest the logs again for the trends" in panel(text, 1)
    assert 'id="chart-rating"' in text


# --------------------------------------------------------------------------- spec snapshots
def snapshot_chart(name: str, variant: int = 0):
    """The two league charts from small hand-made tables (as tests/test_report_snapshots.py
    does for the others); `variant` changes the values and the players, not the spec."""
    import pyarrow as pa

    players = ["ana", "bo"] if variant == 0 else ["cy", "dee", "eve"]
    if name == "rating_history":
        steps = pa.Table.from_pylist(
            [
                {
                    "player": p,
                    "moment": dt.datetime(2026, 3, 1 + d + variant, tzinfo=UTC),
                    "unit": "game",
                    "games": 1,
                    "rated_games": d + 1,
                    "mu": 25.0 + d + variant,
                    "sigma": 8.0 - d,
                    "ordinal": 1.0 + d,
                }
                for p in players
                for d in range(3)
            ]
        )
        return league_charts.rating_history(steps, players)
    cells = pa.Table.from_pylist(
        [
            {
                "player": p,
                "opponent": q,
                "games": 6 + variant,
                "above": 4,
                "below": 2 + variant,
                "tied": 0,
                "share": 4 / (6 + variant),
                "share_lo": 0.3,
                "share_hi": 0.9,
                "before_games": 3,
                "before_share": 0.5,
                "after_games": 3 + variant,
                "after_share": 0.7,
            }
            for p in players
            for q in players
            if p != q
        ]
    )
    return league_charts.head_to_head(cells, players, players, MIN_DECIDED)


def skeleton(chart) -> dict:
    """charts.spec_skeleton, and the players' names these charts order their axes and legend
    by (lists of names under `sort` and `domain`) left out too."""

    def walk(node):
        if isinstance(node, dict):
            return {
                k: "<players>"
                if k in ("sort", "domain") and isinstance(v, list) and all(isinstance(x, str) for x in v)
                else walk(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(charts.spec_skeleton(chart))


@pytest.mark.parametrize("name", ["rating_history", "head_to_head"])
def test_league_chart_specs_match_their_snapshots(name):
    skeleton_ = skeleton(snapshot_chart(name))
    assert skeleton_ == skeleton(snapshot_chart(name, 1))  # the data is left out
    assert "ana" not in json.dumps(skeleton_)
    text = json.dumps(skeleton_, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = SNAPSHOTS / f"report_{name}.json"
    if UPDATE_SNAPSHOTS:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{name}: the spec changed (see tests/test_report_snapshots.py)"


def test_since_and_until_make_a_season_on_the_page_too(league_ds):
    """--since/--until select the league's games: the page's standings are `stats`' under the
    same filters (ratings start afresh at the season's first game)."""
    starts = sorted(g["first_ts"] for g in table_rows(league_ds, "games") if g["first_ts"] is not None)
    since = starts[len(starts) // 2].astimezone(UTC).date()
    until = starts[-1].astimezone(UTC).date()
    season = Filters(since=since, until=until)
    want = compute(league_ds, season, ["ratings"])["ratings"].to_pylist()
    assert want != compute(league_ds, sections=["ratings"])["ratings"].to_pylist()
    data = gather(league_ds, season)
    assert data.league.ratings.to_pylist() == want
    assert data.league.shown == [r["player"] for r in want][: league_module.LEAGUE_PLAYERS]

"""`farkle-logs report`: the page is self-contained, names every section, shows the dataset's
numbers and the dispute view, and stays small; the CLI's exit codes.

The dataset comes from hand-written logs run through the real ingest, so the figures checked
here (games, turns, the one scoring error and its corrected total) are known from the logs,
not from the code under test. The browser test is tests/test_report_browser.py, the spec
snapshots tests/test_report_snapshots.py.
"""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest.run import ingest
from pipeline.report import SECTIONS, build_report, gather
from pipeline.report import charts
from pipeline.report.data import REPORT_SQL_DIR, TOP_PLAYERS, report_models
from pipeline.stats import Filters
from pipeline.stats.fixtures import write_dataset
from pipeline.stats.runner import load_models
from tests.gamelog import Log

SHORT = {"base": "standard", "target": 1000}
HOSTILE = "<b>zed</b></script><!--"  # a player name that would break a careless page
GENERATED = dt.datetime(2026, 3, 3, 12, 0, tzinfo=dt.timezone.utc)


def clean_game() -> Log:
    """g1, 2026-03-01: ana 600 + 600 = 1200 wins, bo 600 then a farkle. 4 turns, no finding."""
    log = Log("g1", players=("ana", "bo"), rules=SHORT, ts="2026-03-01T10:00:00Z")
    log.opening_turn("ana").opening_turn("bo")
    log.roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600).bank("ana", 600, 1200)
    log.bust("bo")
    return log.end("ana", {"ana": 1200, "bo": 600})


def disputed_game() -> Log:
    """g2, 2026-03-02: ana claims 200 for a single 1 (scoring_error at seq 9), banks 700 for
    1300; by the dice 600, total 1200. 4 turns, one finding."""
    log = Log("g2", players=("ana", HOSTILE), rules=SHORT, ts="2026-03-02T10:00:00Z")
    log.opening_turn("ana").opening_turn(HOSTILE)
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 200)
    log.roll("ana", [5, 5, 5, 2, 3]).keep("ana", [5, 5, 5], 500).bank("ana", 700, 1300)
    log.bust(HOSTILE)
    return log.end("ana", {"ana": 1300, HOSTILE: 600})


def build_dataset(root: Path) -> Path:
    logs = root / "logs.jsonl"
    logs.write_text("\n".join(clean_game().lines + disputed_game().lines) + "\n", encoding="utf-8")
    out = root / "ds"
    ingest([str(logs)], out)
    return out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return build_dataset(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(dataset) -> str:
    return build_report(dataset, generated=GENERATED)


@pytest.fixture(scope="module")
def game_page(dataset) -> str:
    return build_report(dataset, game="g2", generated=GENERATED)


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of <style> and <h2> elements."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self.h2: list[str] = []
        self._in: str | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("style", "h2"):
            self._in = tag
            (self.styles if tag == "style" else self.h2).append("")

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.styles[-1] += data
        elif self._in == "h2":
            self.h2[-1] += data

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


REMOTE = re.compile(r"^\s*(https?:)?//", re.I)


def remote_sources(text: str) -> list[str]:
    """Every script/style/image/frame source of the page that points at the network."""
    doc = Tags(text)
    found = []
    for tag, attrs in doc.tags:
        for name in ("src", "href", "data", "srcset", "poster"):
            value = attrs.get(name)
            if value and REMOTE.search(value) and not (tag == "a" and name == "href"):
                found.append(f"<{tag} {name}={value}>")
    for css in doc.styles:
        found += [m.group(0) for m in re.finditer(r"(@import|url\()\s*['\"]?\s*(https?:)?//[^)'\"]*", css, re.I)]
    return found


# --------------------------------------------------------------------------- offline
def test_page_loads_nothing_from_the_network(page, game_page):
    for text in (page, game_page):
        assert remote_sources(text) == []
        doc = Tags(text)
        assert all("src" not in attrs for attrs in doc.all("script")), "every script is inline"
        assert not [a for a in doc.all("link") if a.get("rel") == "stylesheet"]
        csp = [a["content"] for a in doc.all("meta") if a.get("http-equiv") == "Content-Security-Policy"]
        assert csp and "default-src 'none'" in csp[0] and "connect-src 'none'" in csp[0]


def test_the_remote_source_check_can_fail():
    bad = '<script src="https://cdn.example/vega.js"></script><style>@import url("http://x/y.css");</style>'
    assert len(remote_sources(bad)) == 2
    assert remote_sources('<link rel="stylesheet" href="//cdn.example/a.css">') != []


def test_one_vega_bundle_for_all_charts(page):
    doc = Tags(page)
    figures = [a for a in doc.all("figure") if a.get("data-chart")]
    specs = [a for a in doc.all("script") if (a.get("id") or "").startswith("spec-")]
    # rating over time, head to head, bust, turns, decisions, three of decision quality (two
    # single-turn, the two-player games' loss per game), two of findings, dice
    assert len(figures) == len(specs) == 11
    assert "spec-race_loss" in {a.get("id") for a in specs}
    assert page.count("window.vegaEmbed=") == 1
    # The bundle is most of the page; the data of a small dataset adds little.
    assert 0.5e6 < len(page.encode()) < 1.5e6


# --------------------------------------------------------------------------- sections
def test_page_names_every_section_in_order(page, game_page):
    doc = Tags(page)
    assert doc.h2 == [title for key, title in SECTIONS.items() if key != "dispute"]
    assert [a["id"] for a in doc.all("section")] == [key for key in SECTIONS if key != "dispute"]
    # a dispute page is about its game: no population charts (bust rates, dice faces, ...)
    assert Tags(game_page).h2 == ["Overview", "Dispute view", "Decision quality", "Players"]
    for key in SECTIONS:
        if key != "dispute":
            assert f'href="#{key}"' in page


def test_every_chart_has_a_sentence_saying_how_to_read_it(page, game_page):
    for text in (page, game_page):
        for chart_id in re.findall(r'<figure class="chart" id="chart-(\w+)"', text):
            caption = re.search(rf'id="chart-{chart_id}".*?<figcaption class="how">(.*?)</figcaption>', text, re.S)
            assert caption and len(caption.group(1).split()) >= 12, chart_id


def test_headline_numbers_are_the_logs(page):
    tiles = dict(re.findall(r'data-figure="(\w+)">.*?<div class="value">([^<]*)</div>', page))
    # 2 games, 3 players (ana, bo, zed), 4 + 4 finished turns, every line an event, 1 finding.
    events = len(clean_game().lines) + len(disputed_game().lines)
    assert tiles == {"games": "2", "players": "3", "turns": "8", "events": str(events), "findings": "1"}
    assert "2026-03-01 10:00 UTC to 2026-03-02 10:00 UTC" in page


def test_hostile_player_names_are_escaped(page, game_page):
    for text in (page, game_page):
        assert HOSTILE not in text
        assert "&lt;b&gt;zed&lt;/b&gt;&lt;/script&gt;&lt;!--" in text  # in the tables
        assert "\\u003cb\\u003ezed\\u003c/b\\u003e\\u003c/script\\u003e\\u003c!--" in text  # in the chart data
        assert text.lower().count("</script>") == text.lower().count("<script")


def test_disputed_game_is_listed_and_linked_to_its_details(page):
    assert '<a href="#game-1">g2</a>' in page
    details = re.search(r'<details class="game" id="game-1">(.*?)</details>', page, re.S).group(1)
    assert "scoring_error" in details
    assert 'claimed <span class="wrong">200</span>, <span class="worth">worth 100</span>' in details
    assert '<span class="wrong">1,300</span> → 1,200' in details  # ana's final total
    assert "--game g2" in details  # how to get the whole timeline


def test_dispute_view_is_the_whole_game_with_the_finding_highlighted(game_page):
    view = re.search(r'<section id="dispute".*?</section>', game_page, re.S).group(0)
    rows = re.findall(r"<tr class=\"(\w*)\" id=\"g2-seq-\d+\">", view)
    assert rows == ["", "", "error", ""]  # four turns, the third has the finding
    flagged = re.search(r'<tr class="error".*?</tr>', view, re.S).group(0)
    # the claim is struck through, what the dice were worth is not
    assert (
        '1 2 3 4 6 6 → kept <b>1</b>: claimed <span class="wrong">200</span>, <span class="worth">worth 100</span>'
    ) in flagged
    assert '<span class="wrong">700</span> → 600' in flagged  # the turn's points
    assert '<span class="wrong">1,300</span> → 1,200' in flagged  # the banked total
    assert "scoring_error" in flagged
    assert 'id="chart-dispute"' in view
    # a two-player game: its winning-chance graph, the turn with the finding left unjudged
    assert 'id="chart-dispute_race"' in view
    # The statistics of a dispute page cover that game only.
    assert re.search(r'data-figure="games">.*?<div class="value">1</div>', game_page)


def test_filters_that_match_nothing_still_give_a_page(dataset):
    """The library still writes a page (the CLI refuses such filters with exit 2): it says
    there are no games and draws no empty chart."""
    text = build_report(dataset, Filters(since=dt.date(2030, 1, 1)), generated=GENERATED)
    assert "No games match these filters, so there is nothing to chart." in text
    assert "<b>Period covered:</b> no games." in text
    assert Tags(text).h2 == ["Overview"]
    assert "<figure" not in text


def test_player_filter_and_title(dataset):
    text = build_report(dataset, Filters(player="bo"), title="Bo's <games>", generated=GENERATED)
    assert "<title>Bo&#x27;s &lt;games&gt;</title>" in text
    assert "covers player bo" in text
    assert re.search(r'data-figure="games">.*?<div class="value">1</div>', text)


# --------------------------------------------------------------------------- scale
def test_player_picker_is_capped_and_says_so(tmp_path):
    players = [f"p{i:02d}" for i in range(TOP_PLAYERS + 5)]
    games = [{"game_id": f"g{i}", "ruleset": None, "complete": True} for i in range(len(players))]
    seats = [{"game_id": f"g{i}", "player": p, "seat": 1} for i, p in enumerate(players)]
    turns = [
        {
            "game_id": f"g{i}",
            "player": p,
            "turn": t,
            "outcome": "bank",
            "claimed_points": 300,
            "corrected_points": 300,
            "hot_dice": 0,
        }
        for i, p in enumerate(players)
        for t in range(1, i + 2)
    ]
    root = write_dataset(tmp_path / "ds", {"games": games, "game_players": seats, "turns": turns})
    data = gather(root)
    assert data.players_total == len(players)
    assert data.players == list(reversed(players))[:TOP_PLAYERS]  # most turns first
    text = build_report(root, generated=GENERATED)
    assert f"the {TOP_PLAYERS} players with the most turns (of {len(players)})" in text
    assert '"p:p00"' not in text and '"p:p34"' in text


def test_charts_refuse_unaggregated_data():
    rows = pa.table(
        {
            "code": ["x"] * (charts.MAX_ROWS + 1),
            "severity": ["error"] * (charts.MAX_ROWS + 1),
            "findings": [1] * (charts.MAX_ROWS + 1),
            "games": [1] * (charts.MAX_ROWS + 1),
            "players": [1] * (charts.MAX_ROWS + 1),
        }
    )
    with pytest.raises(charts.TooManyRows):
        charts.findings_by_code(rows)


@pytest.mark.parametrize(
    "first, last, unit",
    [
        ("2026-03-01T10:00", "2026-03-01T18:00", "hour"),  # all on one day: not one block
        ("2026-03-01", "2026-03-20", "day"),
        ("2026-01-01", "2026-09-01", "week"),
        ("2023-01-01", "2026-01-01", "month"),
    ],
)
def test_findings_period_keeps_the_bars_few(tmp_path, first, last, unit):
    a, b = (dt.datetime.fromisoformat(d).replace(tzinfo=dt.timezone.utc) for d in (first, last))
    games = [{"game_id": "a", "first_ts": a}, {"game_id": "b", "first_ts": b}]
    findings = [{"game_id": g, "seq": 3, "code": "scoring_error", "severity": "error", "player": "x"} for g in "ab"]
    root = write_dataset(tmp_path / "ds", {"games": games, "findings": findings})
    periods = gather(root).report["findings_by_period"].to_pylist()
    assert {p["unit"] for p in periods} == {unit}
    starts = [dt.datetime.fromisoformat(p["period"]) for p in periods]
    starts = [s if s.tzinfo else s.replace(tzinfo=dt.timezone.utc) for s in starts]
    assert starts[0] <= a and len(periods) == 2


def test_report_models_resolve_against_the_stats_models():
    base, mine = load_models(), load_models(REPORT_SQL_DIR)
    assert mine and not base.keys() & mine.keys()
    models = report_models()
    assert "int_games_in_scope" in models["int_report_findings_in_scope"].depends_on
    assert "fct_decision_counts" in models["rpt_report_bank_heatmap"].depends_on


# --------------------------------------------------------------------------- CLI
runner = CliRunner()


def test_cli_writes_the_page_and_prints_its_path(dataset, tmp_path):
    out = tmp_path / "sub" / "r.html"
    out.parent.mkdir()  # an output's folder must exist (tests/test_safe_writes.py)
    result = runner.invoke(app, ["report", str(dataset), "-o", str(out), "--title", "T"])
    assert result.exit_code == 0, result.output
    assert str(out.resolve()) in result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in out.parent.iterdir()] == ["r.html"]  # no temporary file left


def test_cli_game_view(dataset, tmp_path):
    out = tmp_path / "g.html"
    result = runner.invoke(app, ["report", str(dataset), "--game", "g2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Farkle dispute: game g2" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--game", "nope"], 2, "no game 'nope'"),
        (["--game", "g22"], 2, "no game 'g22' in dataset"),
        (["--player", "bob"], 2, "(did you mean bo?)"),
        (["--since", "2026-03-05", "--until", "2026-03-01"], 2, "is after --until"),
        (["--rules", "no-such-rules"], 2, "error"),
    ],
)
def test_cli_errors(dataset, tmp_path, args, code, message):
    out = tmp_path / "x.html"
    result = runner.invoke(app, ["report", str(dataset), "-o", str(out), *args])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert not out.exists()


def test_cli_not_a_dataset(tmp_path):
    result = runner.invoke(app, ["report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2  # bad usage, as the README promises
    assert "no such dataset" in result.output


def test_wins_over_games_are_explained_where_they_are_shown(tmp_path):
    """Two games, one of them a tie: 3 wins over 2 games, said under the players table."""
    from tests.gamelog import Log

    short = {"base": "standard", "target": 1000}
    won = Log(game_id="w", rules=short).opening_turn("ana").opening_turn("bo").opening_turn("ana", 600)
    won.bust("bo").end("ana", {"ana": 1200, "bo": 600})
    tie = Log(game_id="t", rules=short).opening_turn("ana").opening_turn("bo")
    tie.opening_turn("ana", 600).opening_turn("bo", 600).end(["ana", "bo"], {"ana": 1200, "bo": 1200})
    logs = tmp_path / "logs.jsonl"
    logs.write_text("\n".join(won.lines + tie.lines) + "\n")
    ingest([str(logs)], tmp_path / "ds")
    text = build_report(tmp_path / "ds", generated=GENERATED)
    assert (
        '<p class="note ties">Wins add up to 3 over 2 games: a tied game counts as a win for each tied player.</p>'
    ) in text


def test_dispute_chart_shows_the_claim_on_top_and_keeps_markers_inside():
    turns = pa.Table.from_pylist(
        [
            {
                "position": i,
                "player": p,
                "turn": (i + 1) // 2,
                "outcome": "bank",
                "claimed_points": 300,
                "corrected_points": 300,
                "claimed_total": total,
                "corrected_total": 300 * ((i + 1) // 2),
                "codes": "scoring_error" if i == 4 else "",
            }
            for i, (p, total) in enumerate([("ana", 300), ("bo", 300), ("ana", 600), ("bo", 1000)], start=1)
        ]
    )
    spec = charts.dispute_totals(turns).to_dict()
    by_dice, claimed, diamonds = spec["layer"]
    calc = lambda layer: layer["transform"][0]["calculate"]  # noqa: E731
    assert calc(by_dice) == "'by the dice'" and calc(claimed) == "'claimed'"  # the claim is drawn last, on top
    assert by_dice["mark"]["opacity"] < 1 == claimed["mark"]["opacity"]
    x, y = diamonds["encoding"]["x"]["scale"], diamonds["encoding"]["y"]["scale"]
    # the last turn (4) carries a finding: its diamond sits inside the plot, not on its edge
    assert x["domainMin"] < 1 and x["domainMax"] > 4 and y["domainMax"] > 1000
    # every player's final totals reach the right edge
    data = spec["data"]["values"]
    assert sorted((r["player"], r["claimed_total"]) for r in data if r["position"] == 5) == [("ana", 600), ("bo", 1000)]


def test_findings_outside_any_game_are_counted_apart(tmp_path):
    """The findings tile must agree with the games' counts below it: a line of no game is
    counted in the total and said to be in no game, not added to 'N errors in M games'."""
    logs = tmp_path / "logs.jsonl"
    logs.write_text("\n".join(disputed_game().lines + ["{not json"]) + "\n")
    ingest([str(logs)], tmp_path / "ds")
    text = build_report(tmp_path / "ds", generated=GENERATED)
    tile = re.search(
        r'data-figure="findings">.*?<div class="value">([^<]*)</div><div class="sub">([^<]*)</div>', text, re.S
    )
    assert tile.groups() == ("2", "2 errors; 1 in no game")
    assert "so the games' findings add up to 1." in text
    # the line of no game has no time either: the chart over time says it is not on it
    assert (
        "1 finding with no time (a line of no game, or a game without timestamps) is counted by code "
        "above but not here."
    ) in text
    disputed = re.search(r"<h3>Most disputed games</h3>.*?</table>", text, re.S).group(0)
    assert re.findall(r"<td>(\d+)</td><td class=\"text\">", disputed) == ["1"]


def test_dispute_chart_says_which_turn_ends_were_implied():
    turns = pa.Table.from_pylist(
        [
            {
                "position": 1,
                "player": "bo",
                "turn": 1,
                "outcome": "bank",
                "outcome_label": "bank (implied: the bank line is missing)",
                "claimed_points": 150,
                "corrected_points": 150,
                "claimed_total": 150,
                "corrected_total": 150,
                "codes": "",
            },
        ]
    )
    (first, _) = charts.dispute_totals(turns).to_dict()["data"]["values"]
    assert first["outcome"] == "bank (implied: the bank line is missing)"


def test_the_single_turn_caveat_is_said_once(page, game_page):
    """It used to be printed twice on a dispute page (once per decision-quality block)."""
    for text in (page, game_page):
        assert text.count("<b>A single-turn model.</b>") == 1
        assert text.count("race to the target are outside it") == 1


def test_a_period_of_one_moment_is_said_as_such(game_page):
    """Game g2's events share one timestamp: not 'X to X (0.0 hours)'."""
    assert "<b>Period covered:</b> 2026-03-02 10:00 UTC (every event within a minute)." in game_page

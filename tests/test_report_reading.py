"""The report reads right (issue 24): heat maps whose colours are not set by one cell and do
not make one or two choices look sure, distinct colours for the findings over time, the
dispute chart's diamonds on the line of the player they name, a verdict line, the seq and
line of every turn, a scoresheet beside the replay, severities and names a user can look up.

Charts are checked on their Vega-Lite spec (what the browser draws from); the page on its
HTML. The dataset of the page tests is the sample disputed game run through ingest.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest.run import ingest
from pipeline.model import Code
from pipeline.report import build_report, charts
from pipeline.report.verdict import verdict

ROOT = Path(__file__).resolve().parent.parent
DISPUTED = ROOT / "sample_logs" / "disputed_game.jsonl"
SHEET = ROOT / "sample_logs" / "disputed_game.scoresheet.csv"
GAME = "s814-g000000"


# ---- decision heat maps ----------------------------------------------------------------------
def loss_rows(extreme: tuple[int, float]) -> pa.Table:
    """Cells of 40+ choices losing 0-99 points, and one cell (5 dice, 3000+) of `extreme`
    = (choices, mean loss)."""
    rows = []
    for kind in ("keep", "action"):
        for dice in range(1, 7):
            for i, bucket in enumerate(charts.POINT_BUCKETS):
                judged, loss = 40 + i, float((dice * 13 + i * 7) % 100)
                if (kind, dice, bucket) == ("keep", 5, "3000+"):
                    judged, loss = extreme
                rows.append(
                    dict(
                        scope="overall", player=None, kind=kind, dice=dice, bucket=bucket, judged=judged, mean_loss=loss
                    )
                )
    return pa.Table.from_pylist([{**r, "optimal_share": 0.5} for r in rows])


@pytest.mark.parametrize("extreme", [(1, 1015.0), (60, 3000.0)])
def test_one_extreme_cell_does_not_set_the_loss_colour_scale(extreme):
    spec = charts.decision_loss(loss_rows(extreme)).to_dict()
    color = spec["encoding"]["color"]
    scale = color["condition"]["scale"]
    assert scale["domainMin"] == 0 and scale["clamp"] is True
    assert scale["domainMax"] <= 99  # the 95th percentile of the cells, not 1,015 or 3,000
    assert color["condition"]["test"] == f"datum.judged >= {charts.MIN_CELL_CHOICES}"
    assert color["value"] == charts.FEW_CHOICES_COLOR  # a cell of 1 choice is greyed out
    legend = color["condition"]["legend"]
    assert legend["values"][-1] == scale["domainMax"] and "'≥ '" in legend["labelExpr"]


def test_the_scale_top_is_the_quantile_of_the_cells_with_enough_choices():
    rows = [{"judged": 50, "mean_loss": float(v)} for v in range(1, 101)] + [{"judged": 3, "mean_loss": 5000.0}]
    assert charts.loss_scale_top(rows) == 95
    assert charts.loss_scale_top([{"judged": 1, "mean_loss": 7.0}]) == 1  # nothing to scale by


def test_the_two_panels_axis_titles_cannot_overlap():
    spec = charts.decision_loss(loss_rows((60, 30.0))).to_dict()
    axis = spec["encoding"]["x"]["axis"]
    assert axis["titleLimit"] <= spec["width"]  # a title never runs past its own panel
    assert spec["encoding"]["column"]["spacing"] >= 20
    assert len(spec["encoding"]["x"]["title"]) < 40


def test_bank_cells_of_few_choices_show_their_count_not_a_share():
    rows = pa.Table.from_pylist(
        [
            dict(dice_left=d, bucket=b, decisions=n, banks=n, rolls=0, bank_rate=1.0, rolled_farkles=0)
            for d, b, n in [(6, "250-500", 2), (5, "250-500", 400)]
        ]
    )
    spec = charts.bank_heatmap(rows.append_column("farkle_rate_after_roll", pa.array([None, None], pa.float64())))
    cells, labels = spec.to_dict()["layer"]
    assert cells["encoding"]["color"]["condition"]["test"] == f"datum.decisions >= {charts.MIN_CELL_CHOICES}"
    assert cells["encoding"]["color"]["value"] == charts.FEW_CHOICES_COLOR
    label = labels["transform"][0]["calculate"]
    assert label.startswith(f"datum.decisions >= {charts.MIN_CELL_CHOICES} ?") and "'n=' + datum.decisions" in label


# ---- findings over time ----------------------------------------------------------------------
def periods(codes: list[str]) -> pa.Table:
    axis = {"axis_start": "2026-01-05", "axis_end": "2026-03-02", "unit": "week", "severity": "error"}
    return pa.Table.from_pylist(
        [
            {
                "period": f"2026-01-{5 + 7 * w:02d}",
                "period_end": f"2026-01-{12 + 7 * w:02d}",
                "code": c,
                "findings": 1 + i,
                **axis,
            }
            for w in range(3)
            for i, c in enumerate(codes)
        ]
    )


def test_many_codes_never_share_a_colour():
    codes = [c.value for c in Code if not c.value.startswith("sheet_")]  # the 22 a log can carry
    spec = charts.findings_over_time(periods(codes), "week").to_dict()
    color = spec["encoding"]["color"]
    domain, colors = color["scale"]["domain"], color["scale"]["range"]
    assert len(set(colors)) == len(colors) == len(domain) <= len(charts.CODE_COLORS)
    assert set(domain) == {charts.code_kind(c) for c in codes}
    assert color["title"].startswith("Kind of finding")
    bars = spec["data"]["values"]
    wrong_winner = next(b for b in bars if "wrong_winner" in b["detail"])
    bad_event = next(b for b in bars if "bad_event" in b["detail"])
    assert wrong_winner["code"] != bad_event["code"]  # the two the issue saw in one colour
    assert any(t["field"] == "detail" for t in spec["encoding"]["tooltip"])


def test_a_few_codes_get_a_colour_each():
    spec = charts.findings_over_time(periods(["scoring_error", "bad_event", "wrong_winner"]), "week").to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == ["bad_event", "scoring_error", "wrong_winner"]  # the registry's order
    assert len(set(scale["range"])) == 3


def test_the_severity_legend_is_the_registrys():
    spec = charts.findings_by_code(
        pa.Table.from_pylist([{"code": "bad_json", "severity": "error", "findings": 1, "games": 0, "players": 0}])
    ).to_dict()
    assert spec["encoding"]["color"]["scale"]["domain"] == sorted({c.severity for c in Code})


# ---- the dispute chart's diamonds --------------------------------------------------------------
def test_a_finding_is_marked_on_the_line_of_the_player_it_names():
    finding = {"seq": 9, "code": "wrong_player", "player": "bo"}
    turns = pa.Table.from_pylist(
        [
            dict(position=1, player="bo", turn=1, claimed_total=800, codes="", finding_list=[]),
            dict(position=2, player="ana", turn=1, claimed_total=850, codes="wrong_player", finding_list=[finding]),
        ]
    )
    (mark,) = charts.finding_marks(turns, [])
    # in ana's turn, about bo: on bo's line (his total then, 800), not ana's (850)
    assert (mark["player"], mark["total"], mark["position"]) == ("bo", 800, 2)
    assert mark["in_turn"] == "ana, turn 1" and mark["where"] == "seq 9" and mark["codes"] == "wrong_player"


# ---- the dispute page --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("disputed") / "ds"
    ingest([str(DISPUTED)], out)
    return out


def test_the_dispute_view_starts_with_its_verdict(dataset):
    page = build_report(dataset, game=GAME)
    view = re.search(r'<section id="dispute".*?</section>', page, re.S).group(0)
    want = (
        "ana wins 10,600–10,550 by the dice; bo&#x27;s claimed win rests on the cross-roll meld at seq 178, line 178."
    )
    assert view.index(want) < view.index('id="chart-dispute"')


def test_every_turn_row_has_its_seq_and_log_lines(dataset):
    page = build_report(dataset, game=GAME)
    assert "<th>seq</th><th>line</th>" in page
    row = re.search(rf'<tr class="error" id="{GAME}-seq-171">(.*?)</tr>', page, re.S).group(1)
    assert '<td class="seq">171–179</td><td class="seq">171–179</td>' in row


def test_a_scoresheet_is_shown_beside_the_replay(dataset, tmp_path):
    rows = list(csv.reader(SHEET.open()))
    bo = next(i for i, r in enumerate(rows) if r[2] == "bo" and r[1] == "14")
    rows[bo][3] = "850"  # the sheet took bo's claimed 850 for his turn 14 (the dice say 350)
    with open(tmp_path / "sheet.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(dataset),
            "--game",
            GAME,
            "--scoresheet",
            str(tmp_path / "sheet.csv"),
            "-o",
            str(tmp_path / "g.html"),
        ],
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "g.html").read_text()
    assert "<th>scoresheet: points / total</th>" in page
    row = re.search(rf'<tr class="error" id="{GAME}-seq-171">(.*?)</tr>', page, re.S).group(1)
    assert f'<span class="wrong">850</span> / 8,350 <small>line {bo + 1}</small>' in row
    assert "sheet_points_mismatch" in row
    assert "1 difference from the replay (1 sheet_points_mismatch); 45 rows of game s814-g000000 checked" in page
    agrees = build_report(dataset, game=GAME, scoresheet=(str(SHEET), SHEET.read_text()))
    assert "agrees with the replay; 45 rows of game s814-g000000 checked" in agrees


@pytest.mark.parametrize(
    "args, message",
    [
        (["--scoresheet", str(SHEET)], "--scoresheet needs --game ID"),
        (["--game", GAME, "--scoresheet", "missing.csv"], "cannot read scoresheet missing.csv"),
    ],
)
def test_report_scoresheet_usage_errors(dataset, tmp_path, args, message):
    result = CliRunner().invoke(app, ["report", str(dataset), *args, "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and message in " ".join(result.stderr.split())


def test_a_sheet_of_other_games_is_refused(dataset, tmp_path):
    (tmp_path / "other.csv").write_text("game_id,turn,player,points,total\ng9,1,ana,300,300\n")
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(dataset),
            "--game",
            GAME,
            "--scoresheet",
            str(tmp_path / "other.csv"),
            "-o",
            str(tmp_path / "x.html"),
        ],
    )
    assert result.exit_code == 2
    assert f"no row of game {GAME} (the sheet's games: g9)" in " ".join(result.stderr.split())


def test_no_internal_module_name_in_the_page(dataset):
    page = build_report(dataset)
    text = re.sub(r"<script.*?</script>|<style.*?</style>", "", page, flags=re.S)
    assert not re.search(r"\bpipeline\.[a-z_]+", text), re.search(r".{60}\bpipeline\.[a-z_]+.{20}", text)


# ---- the verdict sentence ------------------------------------------------------------------------
def seat(player, claimed, corrected, won_claimed, won_corrected):
    return dict(
        player=player,
        claimed_total=claimed,
        corrected_total=corrected,
        won_claimed=won_claimed,
        won_corrected=won_corrected,
    )


def test_verdicts_say_who_won_and_what_a_wrong_claim_rests_on():
    ana, bo = seat("ana", 10600, 10600, False, True), seat("bo", 11050, 10550, True, False)
    meld = dict(seq=178, line=178, code="cross_roll_meld", severity="error", player="bo")
    assert verdict([bo, ana], [meld], True) == (
        "ana wins 10,600–10,550 by the dice; bo's claimed win rests on the cross-roll meld at seq 178, line 178."
    )
    same = [seat("ana", 1200, 1200, True, True), seat("bo", 600, 600, False, False)]
    assert verdict(same, [], True) == "ana wins 1,200–600 by the dice, as claimed; no findings."
    slip = dict(seq=9, line=9, code="scoring_error", severity="error", player="ana")
    assert verdict(same, [slip], True).endswith("as claimed; 1 error in the log did not change the winner.")
    tie = [seat("chen", 11800, 11800, True, True), seat("quin", 11800, 11800, True, True)]
    assert verdict(tie, [], True) == "chen and quin tie at 11,800 by the dice, as claimed; no findings."
    cut = [seat("ana", 900, 900, False, False), seat("bo", 400, 400, False, False)]
    assert (
        verdict(cut, [], False)
        == "No winner: the log ends before the game does (no game_end); by the dice ana leads 900–400."
    )
    # a tie by the dice claimed for one: the other's under-claim, said as theirs
    under = dict(seq=132, line=140, code="bank_mismatch", severity="error", player="milo")
    tied = [seat("jun", 10050, 10050, True, True), seat("milo", 10000, 10050, False, True)]
    assert verdict(tied, [under], True) == (
        "jun and milo tie at 10,050 by the dice; the claim that jun won alone rests on milo's bank mismatch at "
        "seq 132, line 140."
    )
    named = dict(seq=283, line=290, code="wrong_winner", severity="error", player=None)
    wrong = [seat("ana", 9000, 9000, True, False), seat("bo", 10100, 10100, False, True)]
    assert verdict(wrong, [named], True) == (
        "bo wins 10,100–9,000 by the dice; ana's claimed win rests on the game_end naming the wrong winner at "
        "seq 283, line 290."
    )

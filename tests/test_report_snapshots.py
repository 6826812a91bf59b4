"""Snapshots of each chart's Vega-Lite spec, data left out, so a change shows up in review.

The charts are built from small hand-made tables shaped like the stats and report tables;
`spec_skeleton` swaps the data values and the picker's player list for placeholders. A
changed title, axis, encoding, tooltip or scale fails here with a diff. To accept a change
on purpose: `UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_report_snapshots.py`
and review the JSON diff under tests/snapshots/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.report import charts

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"


def scoped(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows)


def bust_table(players: list[str], shift: float = 0.0) -> pa.Table:
    rows = []
    for scope, player in [("overall", None), *(("player", p) for p in players)]:
        for dice in range(1, 7):
            rows.append(
                {
                    "scope": scope,
                    "player": player,
                    "dice": dice,
                    "rolls": 100 + dice,
                    "farkles": 10 + dice,
                    "bust_rate": 0.1 + shift,
                    "wilson_lo": 0.05,
                    "wilson_hi": 0.2,
                    "exact_rate": 0.11,
                    "p_value": 0.5,
                    "p_adjusted": 1.0,
                    "off": False,
                }
            )
    return scoped(rows)


def bucket_tables(players: list[str], shift: int = 0) -> tuple[pa.Table, pa.Table]:
    buckets, summary = [], []
    for scope, player in [("overall", None), *(("player", p) for p in players)]:
        for bucket in ["farkle", "250-500", "3000+"]:
            buckets.append({"scope": scope, "player": player, "bucket": bucket, "turns": 5 + shift, "share": 0.3})
        summary.append(
            {
                "scope": scope,
                "player": player,
                "turns": 15 + shift,
                "mean_points": 400.0 + shift,
                "median_points": 300.0,
            }
        )
    return scoped(buckets), scoped(summary)


def heatmap_table(shift: int = 0) -> pa.Table:
    return scoped(
        [
            {
                "dice_left": d,
                "bucket": "250-500",
                "decisions": 10 + shift,
                "banks": 4,
                "rolls": 6,
                "bank_rate": 0.4,
                "rolled_farkles": 2,
                "farkle_rate_after_roll": 0.33,
            }
            for d in (1, 3, 6)
        ]
    )


def codes_table(shift: int = 0) -> pa.Table:
    return scoped(
        [
            {"code": "scoring_error", "severity": "error", "findings": 3 + shift, "games": 2, "players": 2},
            {"code": "game_incomplete", "severity": "warning", "findings": 1, "games": 1, "players": 0},
        ]
    )


def periods_table(shift: int = 0) -> pa.Table:
    axis = {"axis_start": "2026-02-27", "axis_end": f"2026-03-{10 + shift:02d}"}
    return scoped(
        [
            {
                "unit": "day",
                "period": "2026-03-01",
                "period_end": "2026-03-02",
                "code": "scoring_error",
                "severity": "error",
                "findings": 2 + shift,
                **axis,
            },
            {
                "unit": "day",
                "period": "2026-03-04",
                "period_end": "2026-03-05",
                "code": "bank_mismatch",
                "severity": "error",
                "findings": 1,
                **axis,
            },
            {
                "unit": "day",
                "period": None,
                "period_end": None,
                "code": "bad_json",
                "severity": "error",
                "findings": 1,
                **axis,
            },
        ]
    )


def dice_table(players: list[str], shift: int = 0) -> pa.Table:
    return scoped(
        [
            {
                "scope": scope,
                "player": player,
                **{f"face_{i}": 10 + i + shift for i in range(1, 7)},
                "dice": 81 + 6 * shift,
                "chi2": 1.2,
                "p_value": 0.9,
            }
            for scope, player in [("overall", None), *(("player", p) for p in players)]
        ]
    )


def turns_table(shift: int = 0) -> pa.Table:
    return scoped(
        [
            {
                "position": i,
                "player": p,
                "turn": (i + 1) // 2,
                "outcome": "bank",
                "claimed_points": 300 + shift,
                "corrected_points": 300,
                "claimed_total": 300 * i + shift,
                "corrected_total": 300 * i,
                "codes": "scoring_error" if i == 3 else "",
            }
            for i, p in enumerate(["ana", "bo", "ana", "bo"], start=1)
        ]
    )


def loss_state_table(players: list[str], shift: int = 0) -> pa.Table:
    return scoped(
        [
            {
                "scope": scope,
                "player": player,
                "kind": kind,
                "dice": d,
                "bucket": "250-500",
                "points_lo": 250,
                "judged": 10 + shift,
                "loss_points": 120.0,
                "mean_loss": 12.0 + shift,
                "optimal": 8,
                "optimal_share": 0.8,
            }
            for scope, player in [("overall", None), *(("player", p) for p in players)]
            for kind in ("keep", "action")
            for d in (1, 3, 6)
        ]
    )


def quality_table(players: list[str], shift: int = 0) -> pa.Table:
    return scoped(
        [
            {
                "scope": scope,
                "player": player,
                "judged": 50 + shift,
                "mean_loss": 10.0 + i + shift,
                "optimal_share": 0.9,
                "blunders": i,
            }
            for i, (scope, player) in enumerate([("overall", None), *(("player", p) for p in players)])
        ]
    )


def build(name: str, variant: int = 0):
    players = ["ana", "bo"] if variant == 0 else ["cy", "dee", "eve"]
    return {
        "bust_rate": lambda: charts.bust_rate(bust_table(players, 0.01 * variant), players),
        "turn_value": lambda: charts.turn_value(*bucket_tables(players, variant), players),
        "bank_heatmap": lambda: charts.bank_heatmap(heatmap_table(variant)),
        "findings_by_code": lambda: charts.findings_by_code(codes_table(variant)),
        "findings_over_time": lambda: charts.findings_over_time(periods_table(variant), "day"),
        "dice_faces": lambda: charts.dice_faces(dice_table(players, variant), players),
        "dispute_totals": lambda: charts.dispute_totals(turns_table(variant)),
        "decision_loss": lambda: charts.decision_loss(loss_state_table(players, variant)),
        "players_by_loss": lambda: charts.players_by_loss(quality_table(players, variant), players),
    }[name]()


CHARTS = [
    "bust_rate",
    "turn_value",
    "bank_heatmap",
    "findings_by_code",
    "findings_over_time",
    "dice_faces",
    "dispute_totals",
    "decision_loss",
    "players_by_loss",
]


@pytest.mark.parametrize("name", CHARTS)
def test_spec_matches_snapshot(name):
    skeleton = charts.spec_skeleton(build(name))
    text = json.dumps(skeleton, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = SNAPSHOTS / f"report_{name}.json"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1 and review it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name}: the spec changed; see the module docstring"


@pytest.mark.parametrize("name", CHARTS)
def test_skeleton_leaves_the_data_out(name):
    """Other values and other players give the same skeleton, and no value of the data leaks."""
    assert charts.spec_skeleton(build(name, 0)) == charts.spec_skeleton(build(name, 1))
    assert "ana" not in json.dumps(charts.spec_skeleton(build(name, 0)))


def test_every_chart_has_titles_units_and_tooltips():
    for name in CHARTS:
        spec = build(name).to_dict()
        text = json.dumps(spec)
        assert spec["title"]["text"] and spec["title"]["subtitle"], name
        assert '"tooltip"' in text, name
        titles = [
            enc["title"]
            for enc in _encodings(spec)
            if enc.get("type") in ("quantitative", "temporal", "ordinal") and enc.get("title")
        ]
        assert titles and all("(" in t for t in titles), f"{name}: axis titles need a unit: {titles}"


def _encodings(spec: dict):
    for layer in [spec, *spec.get("layer", [])]:
        for channel in ("x", "y"):
            enc = layer.get("encoding", {}).get(channel)
            if isinstance(enc, dict):
                yield enc


def test_snapshot_comparison_can_fail(tmp_path):
    chart = build("findings_by_code").properties(title="Another title")
    assert charts.spec_skeleton(chart) != charts.spec_skeleton(build("findings_by_code"))

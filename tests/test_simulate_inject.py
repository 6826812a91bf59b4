"""Error injection: every code can be planted, and the auditor finds exactly the manifest.

The differential tests run the real reader and replay engine over the simulator's output:
clean games must give no finding at all, and an injected run must give exactly the
manifest's (game_id, seq, code, line) rows, nothing more and nothing less.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import msgspec
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.rules import Ruleset
from pipeline.simulate import BOT_NAMES, BOTS, INJECTABLE, check_game, simulate
from pipeline.simulate.inject import NOT_INJECTABLE
from tests.test_simulate import HOUSE_ODD, HOUSE_PENALTY

ALL_KNOBS, ODD = HOUSE_PENALTY, HOUSE_ODD  # every knob a code needs; an odd house table
MIXED = [Ruleset.builtin("standard"), Ruleset.builtin("playmonster"), ALL_KNOBS, ODD]


def run(games: int, seed: int, **kw) -> tuple[bytes, list[dict]]:
    """Output bytes and manifest rows of one simulation."""
    out, man = io.BytesIO(), io.StringIO()
    simulate(out, games, seed, manifest=man, **kw)
    return out.getvalue(), [json.loads(line) for line in man.getvalue().splitlines()]


def test_the_codes_split_into_injectable_and_explained_exceptions():
    from pipeline.model import FINDING_CODES

    assert set(INJECTABLE) | set(NOT_INJECTABLE) == set(FINDING_CODES)
    assert not set(INJECTABLE) & set(NOT_INJECTABLE)


@pytest.mark.parametrize("code", INJECTABLE)
def test_every_injectable_code_appears_in_the_manifest_when_asked_for(code):
    data, manifest = run(12, 5, rules=[ALL_KNOBS], inject_rate=1.0, inject_codes=[code])
    codes = Counter(row["code"] for row in manifest)
    assert codes[code] >= 10, codes
    # missing_turn_end: a cut mid-turn also plants game_incomplete; a dropped turn end does not
    expected = {code, "game_incomplete"} if code == "missing_turn_end" else {code}
    assert set(codes) == expected
    lines = data.splitlines()
    for row in manifest:
        text = lines[row["line"] - 1]
        if code == "bad_json":
            with pytest.raises(msgspec.DecodeError):
                msgspec.json.decode(text)  # strict JSON: NaN is not JSON
            assert row["game_id"] is None and row["seq"] is None
        elif code == "bad_event" and row["game_id"] is None:
            assert not isinstance(json.loads(text), dict)
        else:
            event = json.loads(text)
            assert (event["game_id"], event["seq"]) == (row["game_id"], row["seq"])


def test_codes_a_ruleset_cannot_show_are_reported_not_faked():
    out = io.BytesIO()
    summary = simulate(out, 5, 1, inject_rate=1.0, inject_codes=["bank_below_minimum"], manifest=io.StringIO())
    assert "bank_below_minimum" in summary.unavailable
    assert not summary.injected


def injected_games(manifest: str) -> int:
    """Games that got an error: one manifest row each, but a cut mid-turn plants two findings
    (missing_turn_end and game_incomplete) in one game."""
    rows = [json.loads(line) for line in manifest.splitlines()]
    return len(rows) - sum(1 for r in rows if r["what"] == "log cut off mid-turn: no game_end")


def by_game(data: bytes) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for line in data.splitlines():
        try:
            event = json.loads(line)
            out.setdefault(event["game_id"], []).append(line)
        except (ValueError, TypeError, KeyError):
            pass
    return out


def test_the_rate_is_the_share_of_games_with_one_error():
    manifest = io.StringIO()
    simulate(io.BytesIO(), 300, 2, inject_rate=0.25, manifest=manifest)
    assert 0.17 < injected_games(manifest.getvalue()) / 300 < 0.33


def test_games_without_an_error_are_byte_identical_to_a_clean_run():
    clean, dirty = io.BytesIO(), io.BytesIO()
    simulate(clean, 60, 4)
    manifest = io.StringIO()
    simulate(dirty, 60, 4, inject_rate=0.5, manifest=manifest)
    injected = injected_games(manifest.getvalue())
    a, b = by_game(clean.getvalue()), by_game(dirty.getvalue())
    differ = [g for g in a if a[g] != b.get(g)]
    assert 0 < len(differ) <= injected < 60 - 10
    assert sum(1 for g in a if a[g] == b[g]) >= 60 - injected


def test_manifest_as_csv_from_the_cli(tmp_path):
    out, man = tmp_path / "g.jsonl", tmp_path / "truth.csv"
    res = CliRunner().invoke(
        app,
        [
            "simulate",
            "-n",
            "20",
            "-s",
            "3",
            "-o",
            str(out),
            "--inject",
            "1",
            "--inject-codes",
            "scoring_error,seq_error",
            "--manifest",
            str(man),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(man.open()))
    assert rows and {r["code"] for r in rows} == {"scoring_error", "seq_error"}
    assert list(rows[0]) == ["game_id", "seq", "code", "line", "what"]


# ---- the simulator's own checker ------------------------------------------------------------
def test_checker_finds_nothing_in_clean_games_and_something_in_a_doctored_one():
    data = io.BytesIO()
    simulate(data, 30, 6, rules=MIXED, players=(1, 6))
    games: dict[str, list] = {}
    for line in data.getvalue().splitlines():
        e = json.loads(line)
        games.setdefault(e["game_id"], []).append(e)
    for events in games.values():
        assert check_game(events) == []
    events = next(iter(games.values()))
    keep = next(i for i, e in enumerate(events) if e["type"] == "keep")
    events[keep] = dict(events[keep], points=events[keep]["points"] + 50)
    assert (keep, "scoring_error") in check_game(events)


# ---- differential: the real auditor against the manifest -----------------------------------
def audit(data: bytes, name: str = "sim.jsonl"):
    reader = pytest.importorskip("pipeline.reader", reason="the reader (pipeline.reader) is not there yet")
    replay = pytest.importorskip("pipeline.replay", reason="the replay engine (pipeline.replay) is not there yet")
    parse_line = getattr(reader, "parse_line", None)
    if parse_line is None:
        parse_line = pytest.importorskip("pipeline.reader.parse").parse_line
    r = replay.Replayer(Ruleset.builtin("standard"))
    findings = []
    for number, raw in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), 1):
        item = parse_line(raw, name, number)
        if item is not None:
            r.feed(item)
            findings += r.drain().findings
    r.finish()
    findings += r.drain().findings
    return findings


@pytest.mark.parametrize("rules", [[r] for r in MIXED], ids=["standard", "playmonster", "all_knobs", "odd"])
def test_clean_games_audit_with_zero_findings(rules):
    data = io.BytesIO()
    simulate(data, 80, 12, rules=rules, players=(1, 6))
    findings = audit(data.getvalue())
    assert [(f.game_id, f.seq, f.code, f.message) for f in findings][:5] == []


@pytest.mark.parametrize("seed, tables", [(1, 1), (2, 1), (3, 6)])
def test_injected_findings_equal_the_manifest_exactly(seed, tables):
    data, manifest = run(400, seed, rules=MIXED, players=(1, 6), inject_rate=0.8, tables=tables)
    want = Counter((m["game_id"], m["seq"], m["code"], m["line"]) for m in manifest)
    got = Counter((f.game_id, f.seq, f.code, f.line) for f in audit(data))
    assert set(m["code"] for m in manifest) == set(INJECTABLE)
    extra, missing = got - want, want - got
    what = {(m["game_id"], m["seq"], m["code"], m["line"]): m["what"] for m in manifest}
    assert not extra and not missing, (
        f"auditor found but not planted: {sorted(extra)[:5]}; planted but not found: "
        f"{[(k, what[k]) for k in sorted(missing)[:5]]}"
    )


def random_ruleset(rng) -> Ruleset:
    """A house table drawn from the knobs of rules.md (target kept small so games are short)."""
    knobs = {
        "base": rng.choice(["standard", "playmonster"]),
        "n_of_a_kind": rng.choice(["flat", "doubling", "linear"]),
        "three_pairs": rng.choice([1500, 750, None]),
        "straight": rng.choice([1500, 2500, None]),
        "two_triplets": rng.choice([2500, None]),
        "four_kind_plus_pair": rng.choice([1500, None]),
        "split_kinds": rng.choice([True, False]),
        "six_kind": rng.choice([None, 10000]),
        "partial_straights": rng.choice([None, {"12345": 500, "23456": 750}, {"123": 150}]),
        "opening": rng.choice([0, 350, 500, 1000]),
        "min_bank": rng.choice([0, 300, 350]),
        "farkle_penalty": rng.choice([0, 0, 300, 1000]),
        "penalty_after": rng.choice([1, 2, 3]),
        "target": rng.choice([3000, 5000, 10000]),
    }
    if knobs["penalty_after"] == 1 and knobs["farkle_penalty"] > 300:
        knobs["penalty_after"] = 3  # 1000 off every farkle: the bots may never finish
    return Ruleset.from_value(knobs)


@pytest.mark.parametrize("draw", range(6))
def test_random_house_tables_clean_games_audit_clean_and_injections_match(draw):
    import random

    rules = random_ruleset(random.Random(f"house/{draw}"))
    clean = io.BytesIO()
    one_to_five = [b for b in BOT_NAMES if not BOTS[b].race]  # optimal too; winprob plays two only
    simulate(clean, 12, 500 + draw, rules=[rules], players=(1, 5), bots=one_to_five)
    assert audit(clean.getvalue()) == []
    data, manifest = run(40, 600 + draw, rules=[rules], players=(2, 5), inject_rate=1.0)
    want = Counter((m["game_id"], m["seq"], m["code"], m["line"]) for m in manifest)
    got = Counter((f.game_id, f.seq, f.code, f.line) for f in audit(data))
    assert got == want, (rules.to_dict(), sorted((got - want).items())[:3], sorted((want - got).items())[:3])

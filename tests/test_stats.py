"""Stats on a tiny hand-made dataset: every expected figure is worked out by hand below.

The dataset is written straight to Parquet (pipeline.stats.fixtures), not by ingest, so the
test controls every row. Two games:

g1 (standard rules, complete, started 2026-01-10 12:00 UTC), ana vs bo, ana won:
  ana t1  rolls r1 [1,5,2,3,4,6] r2 [6,6,6,2]          bank 750 (corrected 750)
  bo  t1  roll  r3 [2,2,3,3,4,6] farkle
  ana t2  rolls r4 [1,1,5,5,2,2] (hot dice) r5 [2,3,4,6,6,5]   bank 1550 (1550), 1 hot dice
  bo  t2  rolls r6 [1,2,3,4,6,6] r7 [2,3,5,4,6]        bank claimed 150, corrected 0 (not opened)
  ana t3  roll  r8 [2,3,4,6,2,3] farkle
g2 (custom rules: standard without three pairs; incomplete, started 2026-02-05 23:30 UTC):
  ana t1  roll  r9 [3,3,4,4,6,2] farkle
  cy  t1  roll  r10 [1,1,1,4,6,6]                      bank 300 (300)
  cy  t2  rolls r11 [5,2,3,4,6,6] r12 [2,3,4,6,2]      farkle
  cy  t3  roll  r13 [1,2,3,4,5,6]                      open (log cut off), 1 hot dice
"""

from __future__ import annotations

import datetime as dt
import math
from fractions import Fraction

import pytest

from pipeline.rules import Ruleset
from pipeline.stats import SECTIONS, TABLE_NAMES, Filters, compute
from pipeline.stats.fixtures import write_dataset

UTC = dt.timezone.utc
STANDARD = Ruleset.builtin("standard")
NO_PAIRS = Ruleset.from_value({"base": "standard", "three_pairs": None})

ROLLS = [  # (game, player, dice, scored)
    ("g1", "ana", [1, 5, 2, 3, 4, 6], True),
    ("g1", "ana", [6, 6, 6, 2], True),
    ("g1", "bo", [2, 2, 3, 3, 4, 6], False),
    ("g1", "ana", [1, 1, 5, 5, 2, 2], True),
    ("g1", "ana", [2, 3, 4, 6, 6, 5], True),
    ("g1", "bo", [1, 2, 3, 4, 6, 6], True),
    ("g1", "bo", [2, 3, 5, 4, 6], True),
    ("g1", "ana", [2, 3, 4, 6, 2, 3], False),
    ("g2", "ana", [3, 3, 4, 4, 6, 2], False),
    ("g2", "cy", [1, 1, 1, 4, 6, 6], True),
    ("g2", "cy", [5, 2, 3, 4, 6, 6], True),
    ("g2", "cy", [2, 3, 4, 6, 2], False),
    ("g2", "cy", [1, 2, 3, 4, 5, 6], True),
]
TURNS = [  # (game, player, turn, outcome, claimed, corrected, hot dice)
    ("g1", "ana", 1, "bank", 750, 750, 0),
    ("g1", "bo", 1, "farkle", 0, 0, 0),
    ("g1", "ana", 2, "bank", 1550, 1550, 1),
    ("g1", "bo", 2, "bank", 150, 0, 0),
    ("g1", "ana", 3, "farkle", 0, 0, 0),
    ("g2", "ana", 1, "farkle", 0, 0, 0),
    ("g2", "cy", 1, "bank", 300, 300, 0),
    ("g2", "cy", 2, "farkle", 0, 0, 0),
    ("g2", "cy", 3, "open", 0, 0, 1),
]
DECISIONS = [  # (game, player, dice left, turn points, choice, next roll farkled)
    ("g1", "ana", 4, 150, "roll", False),
    ("g1", "ana", 1, 750, "bank", None),
    ("g1", "ana", 6, 1500, "roll", False),
    ("g1", "ana", 5, 1550, "bank", None),
    ("g1", "bo", 5, 100, "roll", False),
    ("g1", "bo", 4, 150, "bank", None),
    ("g2", "cy", 3, 300, "bank", None),
    ("g2", "cy", 5, 50, "roll", True),
]


def tiny_tables() -> dict[str, list[dict]]:
    return {
        "games": [
            dict(
                game_id="g1",
                ruleset=STANDARD.to_json(),
                ruleset_name="standard",
                players=["ana", "bo"],
                complete=True,
                first_ts=dt.datetime(2026, 1, 10, 12, tzinfo=UTC),
            ),
            dict(
                game_id="g2",
                ruleset=NO_PAIRS.to_json(),
                ruleset_name="custom (base standard)",
                players=["ana", "cy"],
                complete=False,
                first_ts=dt.datetime(2026, 2, 5, 23, 30, tzinfo=UTC),
            ),
        ],
        "game_players": [
            dict(
                game_id="g1",
                player="ana",
                seat=1,
                claimed_total=2300,
                corrected_total=2300,
                won_claimed=True,
                won_corrected=True,
            ),
            dict(
                game_id="g1",
                player="bo",
                seat=2,
                claimed_total=150,
                corrected_total=0,
                won_claimed=False,
                won_corrected=False,
            ),
            dict(
                game_id="g2",
                player="ana",
                seat=1,
                claimed_total=0,
                corrected_total=0,
                won_claimed=False,
                won_corrected=False,
            ),
            dict(
                game_id="g2",
                player="cy",
                seat=2,
                claimed_total=300,
                corrected_total=300,
                won_claimed=False,
                won_corrected=False,
            ),
        ],
        "rolls": [
            dict(game_id=g, player=p, seq=i + 2, dice=d, dice_count=len(d), scored=s)
            for i, (g, p, d, s) in enumerate(ROLLS)
        ],
        "turns": [
            dict(game_id=g, player=p, turn=t, outcome=o, claimed_points=c, corrected_points=k, hot_dice=h)
            for g, p, t, o, c, k, h in TURNS
        ],
        "decisions": [
            dict(game_id=g, player=p, dice_left=d, turn_points=tp, choice=c, farkled=f)
            for g, p, d, tp, c, f in DECISIONS
        ],
        "findings": [
            dict(game_id="g1", player="bo", code="bank_below_opening", severity="error"),
            dict(game_id="g2", player=None, code="game_incomplete", severity="warning"),
            dict(game_id="g2", player="cy", code="missing_turn_end", severity="error"),
            dict(game_id="zz", player="ana", code="unknown_game", severity="error"),  # no such game
        ],
    }


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("tiny") / "ds", tiny_tables())


@pytest.fixture(scope="module")
def all_tables(tiny):
    return compute(tiny, sections=list(SECTIONS))  # the opt-in decisions-quality too


def rows(table, **match):
    return [r for r in table.to_pylist() if all(r[k] == v for k, v in match.items())]


def one(table, **match):
    found = rows(table, **match)
    assert len(found) == 1, (match, found)
    return found[0]


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def exact_faces_tail(counts: list[int]) -> float:
    """P(sum of squared face counts >= the observed one) for fair dice, over every split of
    the dice among the six faces (multinomial probabilities from log-factorials)."""
    n, observed = sum(counts), sum(c * c for c in counts)
    log_n = math.lgamma(n + 1) - n * math.log(6)
    total = 0.0

    def splits(left: int, faces: int):
        if faces == 1:
            yield (left,)
            return
        for c in range(left + 1):
            for rest in splits(left - c, faces - 1):
                yield (c, *rest)

    for split in splits(n, 6):
        if sum(c * c for c in split) >= observed:
            total += math.exp(log_n - sum(math.lgamma(c + 1) for c in split))
    return total


def sum_of_binomials_tail(k: int, parts: list[tuple[int, Fraction]]) -> Fraction:
    """P(X >= k) for X a sum of binomials, in exact fractions."""
    pmf = [Fraction(1)]
    for n, p in parts:
        part = [math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)]
        pmf = [sum(pmf[i] * part[j - i] for i in range(len(pmf)) if 0 <= j - i <= n) for j in range(len(pmf) + n)]
    return sum(pmf[k:], Fraction(0))


# ---- sections ----------------------------------------------------------------------------
def test_compute_returns_every_table(all_tables, tiny):
    assert list(all_tables) == list(TABLE_NAMES)
    assert "decision_quality" not in compute(tiny)  # opt-in: only when asked for
    assert sorted(t for ts in SECTIONS.values() for t in ts) == sorted(TABLE_NAMES)


def test_bust_rate_by_dice_left_overall(all_tables):
    bust = all_tables["bust_rate_by_dice_left"]
    # 6 dice: r1 r3 r4 r5 r6 r8 in g1 (standard, 5/216 each), r9 r10 r11 r13 in g2
    # (no three pairs: 5/162 each); farkles r3 r8 r9.
    six = one(bust, scope="overall", dice=6)
    assert (six["rolls"], six["farkles"]) == (10, 3)
    assert six["bust_rate"] == pytest.approx(0.3)
    exact6 = (6 * Fraction(5, 216) + 4 * Fraction(5, 162)) / 10
    assert six["exact_rate"] == pytest.approx(float(exact6))
    assert six["expected_farkles"] == pytest.approx(float(exact6 * 10))
    lo, hi = wilson(3, 10)
    assert (six["wilson_lo"], six["wilson_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    # 3 farkles where 0.26 were expected: the exact test over both rulesets' binomials,
    # P(at most as likely as 3) = P(X >= 3) here, Holm-adjusted over the 3 overall rows
    assert six["test"] == "poisson_binomial"
    assert six["p_value"] == pytest.approx(
        float(sum_of_binomials_tail(3, [(6, Fraction(5, 216)), (4, Fraction(5, 162))]))
    )
    assert six["off"] is True and six["p_adjusted"] < 0.05
    # 5 dice: r7 (g1) and r12 (g2), r12 farkled; 5 dice never make three pairs: 25/324 both
    five = one(bust, scope="overall", dice=5)
    assert (five["rolls"], five["farkles"]) == (2, 1)
    assert five["exact_rate"] == pytest.approx(25 / 324)
    # 4 dice: r2 only, scored; exact 17/108 lies inside [0, 79 %]
    four = one(bust, scope="overall", dice=4)
    assert (four["rolls"], four["farkles"], four["off"]) == (1, 0, False)
    assert four["wilson_lo"] == 0.0
    assert four["exact_rate"] == pytest.approx(17 / 108)
    var = 17 / 108 * (1 - 17 / 108)
    z = (0 - 17 / 108) / math.sqrt(var)
    assert four["z"] == pytest.approx(z)
    assert four["p_value"] == 1.0  # no count is less likely than 0 of 1 at 17/108 but 1 of 1 (binomtest's rule)
    assert {r["dice"] for r in rows(bust, scope="overall")} == {4, 5, 6}


def test_bust_rate_by_dice_left_per_player(all_tables):
    bust = all_tables["bust_rate_by_dice_left"]
    # ana, 6 dice: r1 r4 r5 r8 (g1) and r9 (g2), farkles r8 r9
    ana6 = one(bust, scope="player", player="ana", dice=6)
    assert (ana6["rolls"], ana6["farkles"]) == (5, 2)
    assert ana6["exact_rate"] == pytest.approx(float((4 * Fraction(5, 216) + Fraction(5, 162)) / 5))
    # bo: r3 (6, farkle), r6 (6), r7 (5)
    assert (one(bust, player="bo", dice=6)["rolls"], one(bust, player="bo", dice=6)["farkles"]) == (2, 1)
    assert (one(bust, player="bo", dice=5)["rolls"], one(bust, player="bo", dice=5)["farkles"]) == (1, 0)
    # cy: r10 r11 r13 (6, all scored), r12 (5, farkle), all in g2
    cy6 = one(bust, player="cy", dice=6)
    assert (cy6["rolls"], cy6["farkles"], cy6["wilson_lo"]) == (3, 0, 0.0)
    assert cy6["exact_rate"] == pytest.approx(5 / 162)
    assert (one(bust, player="cy", dice=5)["farkles"]) == 1


def test_turn_value_counts_farkles_as_zero(all_tables):
    tv = all_tables["turn_value"]
    # finished turns: 750, F, 1550, 0 (bo's unopened bank), F, F, 300, F; cy's open turn is out
    overall = one(tv, scope="overall")
    assert (overall["turns"], overall["banked_turns"], overall["farkled_turns"]) == (8, 4, 4)
    assert overall["points"] == 750 + 1550 + 0 + 300
    assert overall["mean_points"] == pytest.approx(2600 / 8)
    assert overall["median_points"] == 0  # sorted: 0 0 0 0 | 0 300 750 1550 -> (0 + 0) / 2
    assert overall["mean_banked_only"] == pytest.approx(2600 / 4)
    ana = one(tv, player="ana")  # 750, 1550, F, F
    assert (ana["turns"], ana["points"], ana["median_points"]) == (4, 2300, 375)  # (0 + 750) / 2
    assert ana["mean_points"] == pytest.approx(575)
    assert ana["mean_banked_only"] == pytest.approx(1150)
    cy = one(tv, player="cy")  # 300, F
    assert (cy["turns"], cy["median_points"], cy["mean_banked_only"]) == (2, 150, 300)
    bo = one(tv, player="bo")  # F, 0
    assert (bo["turns"], bo["points"], bo["banked_turns"], bo["mean_banked_only"]) == (2, 0, 1, 0)


def test_turn_value_buckets(all_tables):
    buckets = all_tables["turn_value_buckets"]
    overall = {(r["bucket"], r["turns"]) for r in rows(buckets, scope="overall")}
    assert overall == {("farkle", 4), ("0-250", 1), ("250-500", 1), ("750-1000", 1), ("1500-1750", 1)}
    assert all(r["scope_turns"] == 8 for r in rows(buckets, scope="overall"))
    b = one(buckets, scope="overall", bucket="1500-1750")
    assert (b["points_lo"], b["points_hi"], b["share"]) == (1500, 1750, 1 / 8)
    assert {(r["bucket"], r["turns"]) for r in rows(buckets, player="ana")} == {
        ("farkle", 2),
        ("750-1000", 1),
        ("1500-1750", 1),
    }


def test_bank_vs_roll_by_dice_left(all_tables):
    t = all_tables["bank_vs_roll_by_dice_left"]
    got = {
        r["dice_left"]: (r["decisions"], r["banks"], r["rolls"], r["rolled_farkles"]) for r in rows(t, scope="overall")
    }
    assert got == {1: (1, 1, 0, 0), 3: (1, 1, 0, 0), 4: (2, 1, 1, 0), 5: (3, 1, 2, 1), 6: (1, 0, 1, 0)}
    five = one(t, scope="overall", dice_left=5)
    assert five["bank_rate"] == pytest.approx(1 / 3)
    assert five["farkle_rate_after_roll"] == pytest.approx(1 / 2)
    assert one(t, scope="overall", dice_left=1)["farkle_rate_after_roll"] is None  # never rolled
    assert one(t, player="cy", dice_left=5)["rolled_farkles"] == 1


def test_bank_vs_roll_by_points(all_tables):
    t = all_tables["bank_vs_roll_by_points"]
    # turn points 150 100 150 50 -> 0-250; 300 -> 250-500; 750 -> 750-1000; 1500 1550 -> 1500-1750
    got = {r["bucket"]: (r["decisions"], r["banks"], r["rolls"], r["rolled_farkles"]) for r in rows(t, scope="overall")}
    assert got == {"0-250": (4, 1, 3, 1), "250-500": (1, 1, 0, 0), "750-1000": (1, 1, 0, 0), "1500-1750": (2, 1, 1, 0)}
    assert one(t, scope="overall", bucket="0-250")["bank_rate"] == pytest.approx(0.25)


def test_player_summary(all_tables):
    s = all_tables["player_summary"]
    ana = one(s, player="ana")
    assert (ana["games"], ana["complete_games"], ana["wins"], ana["win_rate"]) == (2, 1, 1, 1.0)
    assert (ana["turns"], ana["farkled_turns"], ana["points"]) == (4, 2, 2300)
    assert (ana["rolls"], ana["farkles"]) == (6, 2)
    assert ana["bust_rate"] == pytest.approx(2 / 6)
    assert (ana["hot_dice"], ana["hot_dice_per_100_turns"]) == (1, 25.0)
    assert (ana["banks"], ana["banks_below_300"], ana["findings"]) == (2, 0, 0)  # zz is not a game
    assert (ana["claimed_points"], ana["corrected_points"], ana["overclaimed_points"]) == (2300, 2300, 0)
    bo = one(s, player="bo")
    assert (bo["games"], bo["wins"], bo["win_rate"], bo["banks"], bo["banks_below_300"]) == (1, 0, 0.0, 1, 1)
    assert (bo["findings"], bo["claimed_points"], bo["corrected_points"], bo["overclaimed_points"]) == (1, 150, 0, 150)
    assert bo["mean_turn_value"] == 0
    cy = one(s, player="cy")  # g2 is incomplete: no win rate; the open turn's hot dice do not count
    assert (cy["games"], cy["complete_games"], cy["win_rate"], cy["turns"], cy["hot_dice"]) == (1, 0, None, 2, 0)
    assert (cy["rolls"], cy["farkles"], cy["findings"]) == (4, 1, 1)
    overall = one(s, scope="overall")
    assert (overall["games"], overall["complete_games"], overall["wins"], overall["win_rate"]) == (2, 1, 1, None)
    assert (overall["turns"], overall["rolls"], overall["farkles"], overall["findings"]) == (8, 13, 4, 2)
    assert (overall["claimed_points"], overall["corrected_points"]) == (2750, 2600)
    assert overall["hot_dice_per_100_turns"] == pytest.approx(100 / 8)


def test_player_findings_by_code(all_tables):
    f = all_tables["player_findings"]
    # game_incomplete names no player; unknown_game is in no game of the dataset
    assert {(r["player"], r["code"], r["findings"]) for r in rows(f, scope="player")} == {
        ("bo", "bank_below_opening", 1),
        ("cy", "missing_turn_end", 1),
    }
    assert {(r["code"], r["findings"]) for r in rows(f, scope="overall")} == {
        ("bank_below_opening", 1),
        ("missing_turn_end", 1),
    }


def test_dice_fairness(all_tables):
    d = all_tables["dice_fairness"]
    ana = one(d, player="ana")
    # ana's dice (r1 r2 r4 r5 r8 r9), counted by hand: 1s 3, 2s 8, 3s 6, 4s 5, 5s 4, 6s 8
    counts = [3, 8, 6, 5, 4, 8]
    assert [ana[f"face_{f}"] for f in range(1, 7)] == counts
    assert ana["dice"] == 34
    e = Fraction(34, 6)
    chi2 = sum((c - e) ** 2 for c in counts) / e
    assert ana["chi2"] == pytest.approx(float(chi2))
    # 34 dice: the exact test, P(fair dice split at least as unevenly), every split enumerated
    assert ana["test"] == "exact"
    assert ana["p_value"] == pytest.approx(exact_faces_tail(counts), rel=1e-9)
    overall = one(d, scope="overall")
    assert [overall[f"face_{f}"] for f in range(1, 7)] == [8, 16, 13, 12, 7, 18]
    assert overall["dice"] == 74


# ---- filters -----------------------------------------------------------------------------
def test_player_filter_keeps_only_that_player(tiny):
    t = compute(tiny, Filters(player="bo"))
    bust = t["bust_rate_by_dice_left"]
    assert {r["player"] for r in rows(bust, scope="player")} == {"bo"}
    assert {(r["dice"], r["rolls"], r["farkles"]) for r in rows(bust, scope="overall")} == {(6, 2, 1), (5, 1, 0)}
    summary = t["player_summary"]
    assert [r["player"] for r in summary.to_pylist()] == [None, "bo"]
    assert one(summary, scope="overall")["games"] == 1  # only g1 has bo


def test_rules_filter_matches_knob_for_knob(tiny):
    # the same ruleset written another way (playmonster base with three 1s back at 1000)
    same = Ruleset.from_value({"base": "playmonster", "three_ones": 1000, "three_pairs": None})
    t = compute(tiny, Filters(rules=same), ["bust", "players"])
    bust = t["bust_rate_by_dice_left"]
    assert {(r["dice"], r["rolls"], r["farkles"]) for r in rows(bust, scope="overall")} == {(6, 4, 1), (5, 1, 1)}
    assert {r["player"] for r in rows(t["player_summary"], scope="player")} == {"ana", "cy"}
    none = compute(tiny, Filters(rules=Ruleset.builtin("playmonster")), ["bust"])
    assert none["bust_rate_by_dice_left"].num_rows == 0


@pytest.mark.parametrize(
    "since, until, games",
    [
        (dt.date(2026, 2, 1), None, {"g2"}),
        (None, dt.date(2026, 1, 10), {"g1"}),  # until is inclusive: g1 started that day
        (None, dt.date(2026, 1, 9), set()),
        (dt.date(2026, 2, 5), dt.date(2026, 2, 5), {"g2"}),  # 23:30 UTC is still Feb 5
        (dt.date(2026, 1, 1), dt.date(2026, 12, 31), {"g1", "g2"}),
    ],
)
def test_date_filter(tiny, since, until, games):
    t = compute(tiny, Filters(since=since, until=until), ["players"])
    overall = rows(t["player_summary"], scope="overall")
    assert (overall[0]["games"] if overall else 0) == len(games)
    expected_turns = sum(1 for g, _p, _t, outcome, *_ in TURNS if g in games and outcome != "open")
    assert (overall[0]["turns"] if overall else 0) == expected_turns


def test_game_filter(tiny):
    t = compute(tiny, Filters(game="g1"), ["turns"])
    assert one(t["turn_value"], scope="overall")["turns"] == 5  # ana 3, bo 2
    assert {r["player"] for r in rows(t["turn_value"], scope="player")} == {"ana", "bo"}


def test_unknown_section_is_an_error(tiny):
    with pytest.raises(ValueError, match="unknown section"):
        compute(tiny, Filters(), ["nope"])


def test_empty_dataset_gives_empty_tables(tmp_path):
    ds = write_dataset(tmp_path / "empty", {})
    t = compute(ds)
    assert all(table.num_rows == 0 for table in t.values())


def test_unreadable_ruleset_leaves_exact_rate_null(tmp_path):
    tables = tiny_tables()
    tables["games"][1]["ruleset"] = '{"base": "nonsense"}'
    t = compute(write_dataset(tmp_path / "ds", tables), Filters(), ["bust"])
    bust = t["bust_rate_by_dice_left"]
    assert one(bust, scope="overall", dice=6)["exact_rate"] is None  # g2's rolls have no odds
    assert one(bust, scope="player", player="bo", dice=6)["exact_rate"] == pytest.approx(5 / 216)


def test_hive_partitions_and_several_files_are_read(tmp_path, all_tables):
    # the same rows, with rolls and turns split over hive-style partition directories
    from pipeline.stats.fixtures import write_manifest, write_table

    tables = tiny_tables()
    root = write_dataset(tmp_path / "ds", {k: v for k, v in tables.items() if k not in ("rolls", "turns")})
    for table in ("rolls", "turns"):
        (root / table / "part-0.parquet").unlink()
        for game in ("g1", "g2"):
            part = [r for r in tables[table] if r["game_id"] == game]
            write_table(root, table, part, part=f"bucket={game[-1]}/part-0.parquet")
    write_manifest(root)  # readers read the files the manifest lists
    t = compute(root)
    for name in ("bust_rate_by_dice_left", "turn_value", "player_summary", "dice_fairness"):
        assert_rows_close(t[name].to_pylist(), all_tables[name].to_pylist(), name)


def assert_rows_close(got: list[dict], want: list[dict], name: str) -> None:
    """Equal rows, floats to 1e-12: DuckDB sums in parallel, so the last bits of a float
    aggregate depend on how the files were split, not on the statistic."""
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert g.keys() == w.keys(), name
        for key in g:
            if isinstance(w[key], float) and g[key] is not None:
                assert g[key] == pytest.approx(w[key], rel=1e-12, abs=1e-12), (name, key)
            else:
                assert g[key] == w[key], (name, key)

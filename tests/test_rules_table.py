"""The per-ruleset lookup table: 923 multisets keyed by integer `counts_key`, its Arrow and
polars export, and the bench script that measures it against the recursive search."""

from __future__ import annotations

import re
import subprocess
import sys
from itertools import product
from math import comb, factorial
from pathlib import Path

import pyarrow as pa
import polars as pl
import pytest

from pipeline.rules import Ruleset, counts_key, dice_key, score_keep, score_table

ROOT = Path(__file__).resolve().parents[1]
STANDARD = Ruleset.from_value("standard")
PLAYMONSTER = Ruleset.from_value("playmonster")


def test_there_are_923_multisets_of_one_to_six_dice():
    # multisets of n dice from 6 faces: C(n + 5, 5); summed over n = 1..6
    assert sum(comb(n + 5, 5) for n in range(1, 7)) == 923


@pytest.mark.parametrize("rules", [STANDARD, PLAYMONSTER, Ruleset.from_value({"split_kinds": False})])
def test_table_has_one_row_per_multiset(rules):
    table = score_table(rules)
    assert len(table) == 923 == len(table.rows)
    assert len(table.value) == len(table.best) == len(table.farkle) == 923
    assert len({row.key for row in table.rows}) == 923


def test_counts_key_is_one_decimal_digit_per_face_count_ones_first():
    assert counts_key((3, 0, 0, 0, 2, 0)) == 300020  # 1,1,1,5,5
    assert dice_key([5, 1, 5, 1, 1]) == 300020
    assert dice_key([6]) == 1
    assert dice_key([1, 2, 3, 4, 5, 6]) == 111111
    assert dice_key([1] * 6) == 600000
    for counts in product(range(7), repeat=6):
        if 1 <= sum(counts) <= 6:
            assert counts_key(counts) == int("".join(map(str, counts)))


def test_table_keys_cover_exactly_the_multisets():
    expected = {int("".join(map(str, c))) for c in product(range(7), repeat=6) if 1 <= sum(c) <= 6}
    assert set(score_table(STANDARD).value) == expected


def test_table_rows_describe_their_dice():
    for row in score_table(STANDARD).rows:
        faces = [int(ch) for ch in row.dice]
        assert faces == sorted(faces) and row.n_dice == len(faces)
        assert dice_key(faces) == row.key
        assert row.all_score == (row.value is not None)
        assert row.is_farkle == (row.best_value == 0) == (row.best_keep is None)
        if row.best_keep is not None:
            keep = [int(ch) for ch in row.best_keep]
            assert all(keep.count(f) <= faces.count(f) for f in set(keep))  # a sub-multiset
            assert score_keep(keep, STANDARD) == row.best_value


def test_table_values_from_rules_md():
    table = score_table(STANDARD)
    assert table.value[dice_key([1, 1, 1, 1, 5, 5])] == 1500
    assert table.value[dice_key([1, 1, 1, 1])] == 1100
    assert table.best[dice_key([2, 2, 2, 5, 3, 6])] == 250
    assert table.farkle[dice_key([2, 2, 3, 3, 4, 6])]
    assert table.value[dice_key([2, 2, 3, 3, 4, 6])] is None
    assert score_table(PLAYMONSTER).value[dice_key([1, 1, 1])] == 300


def test_arrow_export():
    table = score_table(STANDARD)
    arrow = table.to_arrow()
    assert isinstance(arrow, pa.Table)
    assert arrow.num_rows == 923
    assert arrow.column_names[:2] == ["key", "dice"]
    assert pa.types.is_integer(arrow.schema.field("key").type)
    assert pa.types.is_integer(arrow.schema.field("value").type)
    assert pa.types.is_boolean(arrow.schema.field("is_farkle").type)
    rows = {r["key"]: r for r in arrow.to_pylist()}
    assert rows[300020]["value"] == 1100 and rows[300020]["dice"] == "11155"
    assert rows[dice_key([2, 2, 3, 3, 4, 6])]["value"] is None
    assert rows[dice_key([2, 2, 3, 3, 4, 6])]["is_farkle"] is True
    assert {k: r["value"] for k, r in rows.items()} == table.value
    assert {k: r["best_value"] for k, r in rows.items()} == table.best


def test_polars_export_joins_on_the_integer_key():
    df = score_table(STANDARD).to_polars()
    assert isinstance(df, pl.DataFrame) and df.height == 923
    assert df["key"].dtype.is_integer() and df["key"].n_unique() == 923
    keeps = pl.DataFrame({"key": [dice_key([1, 1, 5]), dice_key([3, 3, 3, 1]), dice_key([2, 3])]})
    joined = keeps.join(df.select("key", "value"), on="key", how="left")
    assert joined["value"].to_list() == [250, 400, None]
    # six-dice farkle rolls: 5/216 of 6^6 = 1080 ordered rolls, over the farkle multisets
    six = df.filter((pl.col("n_dice") == 6) & pl.col("is_farkle"))
    orderings = 0
    for dice in six["dice"].to_list():
        n = factorial(6)
        for face in set(dice):
            n //= factorial(dice.count(face))
        orderings += n
    assert orderings == 1080


def test_bench_script_prints_both_rates_and_the_ratio():
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "rules_table.py"),
            "--keeps",
            "3000",
            "--cold-keeps",
            "100",
            "--repeat",
            "1",
            "--rules",
            "standard",
            "--rules",
            '{"three_pairs": null}',
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout

    def rate(label: str) -> list[float]:
        return [float(m.replace(",", "")) for m in re.findall(label + r"\s+([\d,]+) keeps/s", out)]

    assert len(rate(r"table, dice_key \+ lookup")) == 2
    assert len(rate(r"score_keep, memo warm")) == 2
    assert all(r > 0 for r in rate(r"score_keep, memo cleared"))
    assert len(re.findall(r"ratio table/score_keep: [\d.]+", out)) == 2
    odds = re.findall(r"farkle_probability\(6\) = (\d+/\d+): ([\d.]+) ms", out)
    assert [o[0] for o in odds] == ["5/216", "5/162"]

"""`farkle-logs stats` through Typer's CliRunner, and `open_dataset`'s refusals.

Uses the hand-made dataset of test_stats.py; the figures checked here are worked out there.
"""
from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset_check import DatasetDamaged, DatasetError, open_dataset
from pipeline.stats import DEFAULT_SECTIONS, SECTIONS
from pipeline.stats.fixtures import write_dataset, write_manifest
from pipeline.tables import DATASET_VERSION
from tests.test_stats import tiny_tables

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["stats", *map(str, args)])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("cli") / "ds", tiny_tables())


def test_json_has_every_table_and_the_filters(tiny):
    result = run(tiny, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    # every table but the opt-in decisions-quality ones (asked for by --section)
    assert list(payload["tables"]) == [t for sec in DEFAULT_SECTIONS for t in SECTIONS[sec]]
    assert "decision_quality" not in payload["tables"]
    assert payload["filters"] == {"player": None, "game": None, "rules": None, "since": None, "until": None}
    six = [r for r in payload["tables"]["bust_rate_by_dice_left"] if r["scope"] == "overall" and r["dice"] == 6]
    assert (six[0]["rolls"], six[0]["farkles"]) == (10, 3)


def test_json_with_filters(tiny):
    result = run(tiny, "-f", "json", "--player", "cy", "--since", "2026-02-01", "--until", "2026-02-28",
                 "--rules", '{"three_pairs": null}', "--section", "turns")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload["tables"]) == ["turn_value", "turn_value_buckets"]
    assert payload["filters"]["player"] == "cy" and payload["filters"]["rules"]["three_pairs"] is None
    overall = [r for r in payload["tables"]["turn_value"] if r["scope"] == "overall"][0]
    assert (overall["turns"], overall["points"], overall["median_points"]) == (2, 300, 150)


def test_csv_is_one_table(tiny):
    result = run(tiny, "--format", "csv", "--section", "bust")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    overall = {int(r["dice"]): (int(r["rolls"]), int(r["farkles"])) for r in rows if r["scope"] == "overall"}
    assert overall == {4: (1, 0), 5: (2, 1), 6: (10, 3)}


def test_csv_of_one_table_by_name(tiny):
    result = run(tiny, "-f", "csv", "-s", "player_findings")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == '"scope","player","code","findings"'


def test_csv_of_several_tables_is_a_usage_error(tiny):
    result = run(tiny, "--format", "csv", "--section", "turns")
    assert result.exit_code == 2
    assert "csv holds one table" in result.stderr


def test_text_tables(tiny):
    result = run(tiny)
    assert result.exit_code == 0, result.output
    for title in ("Bust rate by dice left", "Points per turn", "Bank vs roll", "Players", "Dice faces"):
        assert title in result.stdout
    assert "banked" in result.stdout


def test_missing_dataset_exits_2(tmp_path):
    result = run(tmp_path / "nope")
    assert result.exit_code == 2
    assert "no such dataset" in result.stderr


def test_foreign_directory_exits_2(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    result = run(tmp_path)
    assert result.exit_code == 2
    assert "not a farkle-logs dataset" in result.stderr


def test_unknown_section_and_bad_dates_are_usage_errors(tiny):
    assert run(tiny, "--section", "nope").exit_code == 2
    assert run(tiny, "--since", "yesterday").exit_code == 2
    result = run(tiny, "--since", "2026-03-01", "--until", "2026-02-01")
    assert result.exit_code == 2 and "after" in result.stderr
    assert run(tiny, "--rules", "nonsense").exit_code == 2


def test_no_matching_rows_says_so(tiny):
    result = run(tiny, "--player", "nobody", "-f", "json")
    assert result.exit_code == 0
    assert "no rows match" in result.stderr
    assert all(rows == [] for rows in json.loads(result.stdout)["tables"].values())


# ---- open_dataset ----------------------------------------------------------------------------
def test_open_dataset_refuses_what_is_not_a_dataset(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset"):
        open_dataset(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatasetError, match="not a dataset directory"):
        open_dataset(tmp_path / "file")
    with pytest.raises(DatasetError, match="no _current.json"):
        open_dataset(tmp_path)
    pointer = tmp_path / "_current.json"
    pointer.write_text("{not json")
    with pytest.raises(DatasetDamaged, match="_current.json is unreadable.*dataset repair"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "something-else", "dataset_version": 2}))
    with pytest.raises(DatasetError, match="format 'something-else'"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION + 1}))
    with pytest.raises(DatasetError, match="newer farkle-logs"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION, "snapshot": 1,
                                   "manifest": "../elsewhere/manifest.json"}))
    with pytest.raises(DatasetDamaged, match="no manifest inside the dataset"):
        open_dataset(tmp_path)
    pointer.write_text(json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION, "snapshot": 1,
                                   "manifest": "manifest.json"}))
    with pytest.raises(DatasetDamaged, match="manifest.json .* is missing"):
        open_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION,
                                                        "snapshot": 1, "tables": {"events": ["../../etc/passwd"]}}))
    with pytest.raises(DatasetDamaged, match="not a list of file paths"):
        open_dataset(tmp_path)


def test_open_dataset_reads_the_files_the_manifest_lists(tmp_path):
    write_dataset(tmp_path, tiny_tables())
    (tmp_path / "rolls" / "stray.parquet").write_bytes(b"not parquet")  # not listed: never read
    ds = open_dataset(tmp_path)
    assert ds.table_files("rolls") == [tmp_path / "rolls" / "part-0.parquet"]
    assert run(tmp_path, "--section", "bust").exit_code == 0
    (tmp_path / "rolls" / "part-0.parquet").unlink()
    with pytest.raises(DatasetDamaged, match=r"1 file\(s\) its manifest lists are missing \(rolls/part-0.parquet\)"):
        open_dataset(tmp_path)


def test_open_dataset_accepts_a_plain_directory(tmp_path):
    write_manifest(tmp_path)
    ds = open_dataset(tmp_path)
    assert ds.version == DATASET_VERSION and not ds.has_files("rolls")

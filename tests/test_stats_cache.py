"""The on-disk cache of the solved policy tables (pipeline.stats.cache.policy_tables): written
once per ruleset and code version, then read instead of solving; damage is recomputed; a
ruleset the solver refuses is never cached, so every run still says it was not solved."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pipeline.rules import Ruleset
from pipeline.stats import cache
from pipeline.strategy import judge
from pipeline.strategy.solver import refusals

STANDARD_TEXT = Ruleset.builtin("standard").to_json()
OFF_GRID_TEXT = json.dumps({"base": "standard", "single_one": 7, "single_five": 3, "three_ones": 11})


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path))
    return tmp_path


def _no_solving(monkeypatch):
    monkeypatch.setattr(judge, "policy_tables", lambda texts: pytest.fail(f"solved again: {texts}"))


def test_solved_tables_are_written_then_read_instead_of_solving(cache_dir, monkeypatch):
    first = cache.policy_tables([STANDARD_TEXT, None])
    assert first["policy_values"].num_rows > 0 and first["keep_options"].num_rows > 0
    assert len(list(cache_dir.glob("policy-*.arrow"))) == 3  # one file per table
    _no_solving(monkeypatch)
    again = cache.policy_tables([STANDARD_TEXT])
    for name in cache.POLICY_TABLES:
        assert again[name].equals(first[name]), name


def test_damaged_files_are_recomputed(cache_dir, monkeypatch):
    fresh = cache.policy_tables([STANDARD_TEXT])
    values = next(cache_dir.glob("policy-*-policy_values.arrow"))
    values.write_bytes(b"not arrow at all")
    assert cache.policy_tables([STANDARD_TEXT])["policy_values"].equals(fresh["policy_values"])
    # a readable file of another shape is damage too, not a table to hand to the SQL
    other = pa.table({"x": [1, 2]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, other.schema) as writer:
        writer.write_table(other)
    values.write_bytes(sink.getvalue().to_pybytes())
    assert cache.policy_tables([STANDARD_TEXT])["policy_values"].equals(fresh["policy_values"])
    _no_solving(monkeypatch)  # and the rewritten file is used again
    assert cache.policy_tables([STANDARD_TEXT])["policy_values"].equals(fresh["policy_values"])


def test_a_refused_ruleset_is_not_cached_and_every_run_says_so(cache_dir):
    for _ in range(2):
        with refusals() as refused:
            tables = cache.policy_tables([OFF_GRID_TEXT, STANDARD_TEXT])
        assert len(refused) == 1 and "is not solved" in refused[0]
        assert set(tables["policy_tail"].column("ruleset").to_pylist()) == {STANDARD_TEXT}
    assert len(list(cache_dir.glob("policy-*.arrow"))) == 3  # standard's files only


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.policy_tables([STANDARD_TEXT])["policy_values"].num_rows > 0
    assert not list(tmp_path.rglob("*.arrow"))

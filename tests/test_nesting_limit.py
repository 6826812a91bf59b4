"""Deeply nested JSON (issue 11 item 1): one bad_json line, never a RecursionError that
kills the run; ruleset files and inline --rules JSON: exit 2 with a message."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.limits import MAX_JSON_DEPTH
from pipeline.model import BadLine, Event
from pipeline.reader import parse_line
from pipeline.rules import Ruleset, RulesetError
from pipeline.reader.rules_source import load_ruleset

ROOT = Path(__file__).resolve().parents[1]
STANDARD = ROOT / "sample_logs" / "standard.jsonl"
runner = CliRunner()
DEEP_ARRAY = b"[" * 5000 + b"]" * 5000
DEEP_OBJECT = b'{"a":' * 5000 + b"1" + b"}" * 5000
TOO_DEEP = f"nested too deeply: more than {MAX_JSON_DEPTH} levels of arrays and objects"


def roll_with_note(levels: int) -> bytes:
    """A valid roll whose extra field `note` makes the line `levels` deep in all."""
    note = "[" * (levels - 1) + "]" * (levels - 1)
    return ('{"game_id":"g1","seq":2,"type":"roll","player":"a","dice":[1],"note":' + note + "}").encode()


@pytest.mark.parametrize(
    "raw",
    [
        DEEP_ARRAY,
        DEEP_OBJECT,
        b'{"game_id":"g1","x":' + DEEP_ARRAY + b"}",
        b'{"game_id":"g","seq":1,"type":"game_start","players":["a"],"rules":' + DEEP_OBJECT + b"}",
    ],
)
def test_a_line_nested_5000_deep_is_one_bad_json_line(raw):
    bad = parse_line(raw, "log.jsonl", 3)
    assert isinstance(bad, BadLine)
    assert (bad.file, bad.line, bad.code) == ("log.jsonl", 3, "bad_json")
    assert bad.reason == "not valid JSON: " + TOO_DEEP


def test_the_depth_limit_is_exact_whatever_the_stack():
    # 128 levels (the object, then 127 nested arrays) is an event; 129 is not. Whether
    # Python's recursion limit is near must not matter, so the limit is checked, not hit.
    ok = parse_line(roll_with_note(MAX_JSON_DEPTH), "f", 1)
    assert isinstance(ok, Event) and ok.extra["note"] is not None
    over = parse_line(roll_with_note(MAX_JSON_DEPTH + 1), "f", 1)
    assert isinstance(over, BadLine) and over.reason == "not valid JSON: " + TOO_DEEP

    def deep_stack(n):
        return deep_stack(n - 1) if n else parse_line(roll_with_note(MAX_JSON_DEPTH + 1), "f", 1)

    assert deep_stack(600).reason == over.reason


def test_audit_and_ingest_keep_every_other_game(tmp_path):
    path = tmp_path / "log.jsonl"
    data = STANDARD.read_bytes()
    path.write_bytes(data + DEEP_ARRAY + b"\n" + DEEP_OBJECT + b"\n")
    lines = len(data.splitlines())
    alone = json.loads(runner.invoke(app, ["audit", str(STANDARD), "-f", "json"]).stdout)
    result = runner.invoke(app, ["audit", str(path), "-f", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    bad = [(f["line"], f["code"]) for f in report["findings"] if f["code"] == "bad_json"]
    assert bad == [(lines + 1, "bad_json"), (lines + 2, "bad_json")]
    assert len(report["findings"]) == len(alone["findings"]) + 2
    assert report["games"] == alone["games"]

    out = tmp_path / "ds"
    ingested = runner.invoke(app, ["ingest", str(path), "-o", str(out), "-f", "json"])
    summary = json.loads(ingested.stdout)
    assert ingested.exit_code == 1 and summary["rejects"] == 2 and summary["invariant_holds"]
    events = duckdb.sql(f"select count(*) from read_parquet('{out}/events/**/*.parquet')").fetchall()[0][0]
    assert events == lines
    reasons = duckdb.sql(f"select distinct reason from read_parquet('{out}/rejects/**/*.parquet')").fetchall()
    assert reasons == [("not valid JSON: " + TOO_DEEP,)]


@pytest.mark.parametrize(
    "name, text",
    [
        ("deep.json", '{"base": "standard", "opening": ' + "[" * 5000 + "]" * 5000 + "}"),
        ("deep_object.json", '{"a":' * 5000 + "1" + "}" * 5000),
        ("deep.toml", "opening = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("deep_table.toml", "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"),
    ],
)
def test_a_deeply_nested_ruleset_file_is_exit_2_with_a_message(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RulesetError, match="nested too deeply"):
        load_ruleset(str(path))
    result = runner.invoke(app, ["rules", "show", str(path)])
    assert result.exit_code == 2 and "nested too deeply" in result.output
    assert not isinstance(result.exception, RecursionError)


def test_deeply_nested_inline_rules_are_exit_2_with_a_message():
    for text in ("[" * 5000 + "]" * 5000, '{"base": "standard", "opening": ' + "[" * 5000 + "]" * 5000 + "}"):
        with pytest.raises(RulesetError, match="nested too deeply"):
            Ruleset.from_json_text(text)
        for command in (["rules", "show", text], ["audit", str(STANDARD), "--rules", text], ["score", "1", "-r", text]):
            result = runner.invoke(app, command)
            assert result.exit_code == 2 and "nested too deeply" in result.output, command


def test_a_ruleset_knob_with_a_nested_value_gets_a_short_message():
    value = {"opening": [[[[[[[[1]]]]]]]] * 1000}
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_value(value)
    assert "opening" in str(caught.value) and len(str(caught.value)) < 200


def test_ruleset_specs_that_name_no_possible_file_are_errors_not_crashes():
    # found by fuzzing: a NUL in a name ending in .toml; and a name too long for the OS
    for spec in ("\x01\x00<#.toml", "x" * 5000 + ".json", "[" * 5000):
        with pytest.raises(RulesetError):
            load_ruleset(spec)

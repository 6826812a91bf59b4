"""`audit` by the two-pass fast path prints exactly what the one-pass reference audit prints.

The reference path (FARKLE_LOGS_REPLAY=reference: every line parsed by the reader and
replayed by `Replayer`) is what `audit` always did; the fast path must give the same bytes
on stdout and stderr and the same exit code, for every output format, on logs with bad
lines, blank lines, injected errors, interleaved and split games, gzip and several files,
and when one large file is scanned as two byte ranges (the split point chosen small here).
"""
from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline import audit_fast
from pipeline.audit import audit_sources
from pipeline.cli.main import app
from pipeline.inputs import resolve
from pipeline.rules import Ruleset
from pipeline.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "jsonl", "csv")


def run(args: list[str], monkeypatch, reference: bool) -> tuple[int, str, str]:
    if reference:
        monkeypatch.setenv("FARKLE_LOGS_REPLAY", "reference")
    else:
        monkeypatch.delenv("FARKLE_LOGS_REPLAY", raising=False)
    result = CliRunner().invoke(app, ["audit", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_same_audit(args: list[str], monkeypatch) -> tuple[int, str]:
    for fmt in FORMATS:
        fast = run(["-f", fmt, *args], monkeypatch, reference=False)
        reference = run(["-f", fmt, *args], monkeypatch, reference=True)
        assert fast == reference, fmt
    return fast[0], fast[1]


def simulated(path: Path, games: int, seed: int, **kw) -> Path:
    simulate(path, games=games, seed=seed, **kw)
    return path


def test_sample_logs(monkeypatch):
    logs = sorted(str(p) for p in (ROOT / "sample_logs").iterdir() if p.name.endswith((".jsonl", ".gz")))
    for log in logs:
        assert_same_audit([log], monkeypatch)
    assert_same_audit(logs, monkeypatch)
    assert_same_audit([str(ROOT / "sample_logs")], monkeypatch)  # README and CSV lines: bad_json


def test_injected_errors_interleaved_games(tmp_path, monkeypatch):
    rules = (Ruleset.builtin("standard"), Ruleset.from_value({"base": "standard", "farkle_penalty": 500,
                                                              "opening": 350, "min_bank": 300}))
    log = simulated(tmp_path / "inj.jsonl", 60, 4, rules=rules, inject_rate=0.3, tables=4)
    code, _ = assert_same_audit([str(log)], monkeypatch)
    assert code == 1


def test_lost_turn_ends_and_zero_point_rulesets(tmp_path, monkeypatch):
    """Dropped turn-ending lines (the lost-end rule: implied ends, missing_turn_end) and
    rulesets whose knobs make combinations worth 0 (not combinations): same output."""
    rules = (Ruleset.from_value({"base": "standard", "single_five": 0, "three_pairs": 0}),
             Ruleset.from_value({"base": "standard", "single_one": 0, "three_ones": 0, "farkle_penalty": 300}),
             Ruleset.builtin("standard"))
    log = simulated(tmp_path / "lost.jsonl", 60, 6, rules=rules, inject_rate=0.6, tables=3,
                    inject_codes=("missing_turn_end", "seq_error", "non_scoring_kept", "false_farkle"))
    code, out = assert_same_audit([str(log)], monkeypatch)
    assert code == 1 and "missing_turn_end" in out


def mangled_log(path: Path, seed: int) -> Path:
    """A simulated log with blank lines, garbage, escapes, long ids and a cut-off game."""
    buffer = io.BytesIO()
    simulate(buffer, games=12, seed=seed, tables=3, inject_rate=0.2)
    lines = buffer.getvalue().decode().splitlines()
    rng = random.Random(seed)
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.02:
            out.append("")
        elif r < 0.03:
            out.append("   \r")
        elif r < 0.04:
            out.append(line[: len(line) // 2])  # cut off: bad_json
        elif r < 0.05:
            obj = json.loads(line)
            obj["seq"] = float(obj["seq"])  # 3.0 is an integer: valid, but not the fast decoder's
            out.append(json.dumps(obj))
        elif r < 0.06:
            # the same id, written with an escape: only the reader's path sees it is the same game
            out.append(json.dumps(json.loads(line)).replace('"game_id": "s', '"game_id": "\\u0073'))
        else:
            out.append(line)
        if r > 0.995:
            out.append(line)  # a repeat: seq_error
    out = out[: len(out) - rng.randrange(5)]  # the last game cut off
    path.write_text("\n".join(out) + ("\n" if seed % 2 else ""))
    return path


@pytest.mark.parametrize("seed", range(6))
def test_mangled_logs(tmp_path, monkeypatch, seed):
    assert_same_audit([str(mangled_log(tmp_path / "m.jsonl", seed))], monkeypatch)


def test_gzip_and_several_files(tmp_path, monkeypatch):
    a = mangled_log(tmp_path / "a.jsonl", 21)
    b = tmp_path / "b.jsonl.gz"
    b.write_bytes(gzip.compress(mangled_log(tmp_path / "b.jsonl", 22).read_bytes()))
    assert_same_audit([str(a), str(b)], monkeypatch)


@pytest.mark.parametrize("seed", [1, 2])
def test_two_ranges(tmp_path, monkeypatch, seed):
    """One file scanned as two byte ranges at once (the threshold lowered to reach it)."""
    monkeypatch.setattr(audit_fast, "PARALLEL_MIN_BYTES", 0)
    log = mangled_log(tmp_path / "big.jsonl", seed)
    assert_same_audit([str(log)], monkeypatch)
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"))
    lines = log.read_text().split("\n")
    sequential = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert list(found.bad_lines[0]) == list(sequential.bad_lines[0])
    assert found.events == sequential.events
    assert set(found.clean) <= set(sequential.clean) and len(lines) > 100


def test_clean_log_needs_no_second_pass(tmp_path):
    log = simulated(tmp_path / "clean.jsonl", 30, 8, tables=2)
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert not found.suspect and not any(found.bad_lines) and len(found.clean) == 30
    report = audit_sources(resolve([str(log)]).sources, trace=False)
    assert report.findings == [] and len(report.games) == 30


def test_bad_line_is_found_by_splitting_the_block(tmp_path):
    """One bad line in a block: the block is split until the line stands alone; every other
    line of the block still counts, and the bad line is reported with its own number."""
    buffer = io.BytesIO()
    simulate(buffer, games=3, seed=2)
    lines = buffer.getvalue().decode().splitlines()
    lines[40] = lines[40].replace('"dice":[', '"dice":[7,')[:200]
    log = tmp_path / "one_bad.jsonl"
    log.write_text("\n".join(lines) + "\n")
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert list(found.bad_lines[0]) == [41]
    assert found.events == len(lines) - 1

"""`audit` by the two-pass fast path prints exactly what the one-pass reference audit prints.

The reference path (FARKLE_LOGS_REPLAY=reference: every line parsed by the reader and
replayed by `Replayer`) is what `audit` always did, and what it does for small inputs; the
fast path (FARKLE_LOGS_REPLAY=fast here, whatever the size) must give the same bytes
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

from pipeline.audit import fast as audit_fast
from pipeline.audit.run import audit_sources
from pipeline.cli.main import app
from pipeline.reader.inputs import resolve
from pipeline.reader.split import line_start
from pipeline.rules import Ruleset
from pipeline.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "jsonl", "csv")


@pytest.fixture(autouse=True, scope="module")
def compiled() -> None:
    """The compiled code made ready first: a compile during a comparison (the first run after
    an edit of the rules of play) would add its note to the fast path's stderr alone."""
    from pipeline.ingest import warm

    warm.warm()


def run(args: list[str], monkeypatch, reference: bool) -> tuple[int, str, str]:
    # "fast": the compiled path even for these small logs (left alone, they take the reference)
    monkeypatch.setenv("FARKLE_LOGS_REPLAY", "reference" if reference else "fast")
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
    rules = (
        Ruleset.builtin("standard"),
        Ruleset.from_value({"base": "standard", "farkle_penalty": 500, "opening": 350, "min_bank": 300}),
    )
    log = simulated(tmp_path / "inj.jsonl", 60, 4, rules=rules, inject_rate=0.3, tables=4)
    code, _ = assert_same_audit([str(log)], monkeypatch)
    assert code == 1


def test_lost_turn_ends_and_zero_point_rulesets(tmp_path, monkeypatch):
    """Dropped turn-ending lines (the lost-end rule: implied ends, missing_turn_end) and
    rulesets whose knobs make combinations worth 0 (not combinations): same output."""
    rules = (
        Ruleset.from_value({"base": "standard", "single_five": 0, "three_pairs": 0}),
        Ruleset.from_value({"base": "standard", "single_one": 0, "three_ones": 0, "farkle_penalty": 300}),
        Ruleset.builtin("standard"),
    )
    log = simulated(
        tmp_path / "lost.jsonl",
        60,
        6,
        rules=rules,
        inject_rate=0.6,
        tables=3,
        inject_codes=("missing_turn_end", "seq_error", "non_scoring_kept", "false_farkle"),
    )
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
    """One file scanned as two byte ranges by two threads at once (the threshold lowered to reach it)."""
    monkeypatch.setattr(audit_fast, "PARALLEL_MIN_BYTES", 0)
    log = mangled_log(tmp_path / "big.jsonl", seed)
    assert_same_audit([str(log)], monkeypatch)
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"))
    lines = log.read_text().split("\n")
    sequential = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert list(found.bad_lines[0]) == list(sequential.bad_lines[0])
    assert found.events == sequential.events
    assert set(found.clean) <= set(sequential.clean) and len(lines) > 100


@pytest.mark.parametrize("seed", [3, 4])
def test_ranges_taken_over(tmp_path, monkeypatch, seed):
    """The two threads' regions of one file, played out one after the other: the first
    reads its region, then takes the back half of the helper's rest again and again (the
    helper not started yet), then the helper reads what is left to it. The ranges cover
    the file exactly, and the merged summary gives the reference's report."""
    from pipeline.audit.run import audit_stream
    from pipeline.reader import read_events

    monkeypatch.setattr(audit_fast, "BLOCK", 2048)
    monkeypatch.setattr(audit_fast, "STEAL_MIN_BYTES", 8192)
    log = mangled_log(tmp_path / "m.jsonl", seed)
    source = resolve([str(log)]).sources[0]
    rules = Ruleset.builtin("standard")
    size = log.stat().st_size
    middle = line_start(log, size // 3, size)
    shared = audit_fast.Positions([0, middle, middle, size])
    parts = audit_fast._scan_regions(source, 0, audit_fast._Regions(shared, 0, log), rules, 1 << 20)
    parts += audit_fast._scan_regions(source, middle, audit_fast._Regions(shared, 1, log), rules, 1 << 20)
    starts = sorted(start for start, _ in parts)
    assert len(parts) >= 4 and starts[0] == 0 and starts[1:-1] != [middle]
    found = audit_fast._merge(parts)
    sequential = audit_fast.scan([source], rules, parallel=False)
    assert list(found.bad_lines[0]) == list(sequential.bad_lines[0])
    assert found.events == sequential.events and found.starts == sequential.starts
    assert [(s, e, n) for s, e, _, n, _, _ in found.blocks[0]][-1][1] in (size, size - 1)
    report = audit_fast.replay_suspects([source], found, rules, trace=True).drain()
    reference = audit_stream(read_events(resolve([str(log)]).sources), rules)
    assert list(reference.findings) == report.findings
    assert reference.games == audit_fast.merged_results(found, report.games)
    assert reference.timelines == report.timelines


def test_second_pass_reads_only_the_blocks_of_suspect_games(tmp_path, monkeypatch):
    """Pass 2 reads the blocks pass 1 saw a suspect game or a bad line in, no others."""
    monkeypatch.setattr(audit_fast, "BLOCK", 4096)
    games = []
    for seed in range(3):
        buffer = io.BytesIO()
        simulate(buffer, games=4, seed=seed)
        games.append(buffer.getvalue().decode().replace('"game_id":"', f'"game_id":"{seed}-'))
    lines = "".join(games).splitlines()
    cut = len(games[0].splitlines()) + 5
    lines[cut] = lines[cut].replace('"seq":', '"seq":1000')  # a seq_error in the second block's game
    log = tmp_path / "three.jsonl"
    log.write_text("\n".join(lines) + "\n")
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert len(found.suspect) == 1
    text = log.read_bytes()
    chosen = found.blocks_to_replay(0, found.suspect)
    assert chosen and all(any(f'"{g}"'.encode() in text[s:e] for g in found.suspect) for s, e, _, _ in chosen)
    assert len(chosen) < len(found.blocks[0]) / 3
    lines[cut + 200] = "not json"
    log.write_text("\n".join(lines) + "\n")
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    more = found.blocks_to_replay(0, found.suspect)
    assert list(found.bad_lines[0]) == [cut + 201] and any(f <= cut + 201 < f + n for _, _, f, n in more)
    assert found.blocks_to_replay(0, set()) == [c for c in more if c[2] <= cut + 201 < c[2] + c[3]]


def test_clean_log_needs_no_second_pass(tmp_path):
    log = simulated(tmp_path / "clean.jsonl", 30, 8, tables=2)
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert not found.suspect and not any(found.bad_lines) and len(found.clean) == 30
    report = audit_sources(resolve([str(log)]).sources, trace=False)
    assert report.findings == [] and len(report.games) == 30


def test_bad_line_is_found_in_its_block(tmp_path):
    """One bad line in a block: the block's lines are decoded one by one; every other line
    of the block still counts, and the bad line is reported with its own number."""
    buffer = io.BytesIO()
    simulate(buffer, games=3, seed=2)
    lines = buffer.getvalue().decode().splitlines()
    lines[40] = lines[40].replace('"dice":[', '"dice":[7,')[:200]
    log = tmp_path / "one_bad.jsonl"
    log.write_text("\n".join(lines) + "\n")
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    assert list(found.bad_lines[0]) == [41]
    assert found.events == len(lines) - 1


def test_mostly_bad_lines(tmp_path, monkeypatch):
    """Three bad lines for every event (broken JSON, events of games never started,
    events with wrong fields, a ts off the pattern, a ruleset that is not one, JSON nested
    3,000 deep in a field the fast decoder ignores): the same
    output as the reference, and every bad line found by pass 1."""
    buffer = io.BytesIO()
    simulate(buffer, games=4, seed=5, tables=2)
    rng = random.Random(3)
    out = []
    for i, line in enumerate(buffer.getvalue().decode().splitlines()):
        out.append(line)
        for _ in range(3):
            out.append(
                rng.choice(
                    [
                        '{"game_id": "x", "seq": 1, "type": "roll", "dice": [1,2,%d' % i,
                        json.dumps(
                            {
                                "game_id": f"ghost-{rng.randrange(5)}",
                                "seq": 2,
                                "type": "roll",
                                "player": "a",
                                "dice": [1, 2, 3, 4, 5, 6],
                            }
                        ),
                        json.dumps({"game_id": "g", "seq": "x", "type": "bank"}),
                        json.dumps({"game_id": "g", "seq": 3, "type": "farkle", "player": "a", "ts": "yesterday"}),
                        json.dumps(
                            {
                                "game_id": f"r{i}",
                                "seq": 1,
                                "type": "game_start",
                                "players": ["a"],
                                "rules": {"base": "nope"},
                            }
                        ),
                        '{"game_id": "g", "seq": 1, "type": "farkle", "player": "a", "x": '
                        + "[" * 3000
                        + "]" * 3000
                        + "}",
                        '{"game_id": "g", "seq": 1, "deep": ' + '{"a":' * 3000 + "1" + "}" * 3001,
                    ]
                )
            )
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(out) + "\n")
    assert_same_audit([str(log)], monkeypatch)
    found = audit_fast.scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), parallel=False)
    ghosts = sum(1 for line in out if '"ghost-' in line)
    assert len(found.bad_lines[0]) == len(out) - found.events and found.events >= len(out) // 4 + ghosts


@pytest.mark.parametrize("two_threads", [False, True])
def test_mostly_bad_log_is_audited_in_one_reference_pass(tmp_path, monkeypatch, two_threads):
    """Once pass 1 has read MOSTLY_BAD_AFTER lines and most were bad, it gives up and the
    audit is the one-pass reference audit (cheaper for such a log): the same output, file
    problems told once; a log with few bad lines does not give up."""
    monkeypatch.setattr(audit_fast, "MOSTLY_BAD_AFTER", 200)
    if two_threads:
        monkeypatch.setattr(audit_fast, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(audit_fast, "BLOCK", 4096)  # small blocks: the check comes often
    buffer = io.BytesIO()
    simulate(buffer, games=4, seed=5, tables=2)
    out = []
    for i, line in enumerate(buffer.getvalue().decode().splitlines()):
        out.append(line)
        out.extend(['{"game_id": "x", "seq": %d, "type": "roll"' % i] * 2)
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(out) + "\n")
    gave_up = []
    scan = audit_fast.scan

    def spy(*args, **kw):
        try:
            return scan(*args, **kw)
        except audit_fast.MostlyBad:
            gave_up.append(True)
            raise

    monkeypatch.setattr(audit_fast, "scan", spy)
    assert_same_audit([str(log)], monkeypatch)
    assert len(gave_up) == len(FORMATS)
    with pytest.raises(audit_fast.MostlyBad):
        scan(resolve([str(log)]).sources, Ruleset.builtin("standard"), give_up=True)
    found = scan(resolve([str(log)]).sources, Ruleset.builtin("standard"))  # without give_up: the whole scan
    assert len(found.bad_lines[0]) == 2 * found.events
    gave_up.clear()
    assert_same_audit([str(mangled_log(tmp_path / "m.jsonl", 3))], monkeypatch)
    assert not gave_up


def test_line_limit_same_as_the_reader(tmp_path, monkeypatch):
    """Lines over --max-line-bytes are rejects by the fast path as by the reader: a long line
    carried across the block reader's reads (1.25 MiB, ending inside the second read), a
    short limit (no blocks), and a limit above the long line (blocks, the line decoded)."""
    lines = mangled_log(tmp_path / "m.jsonl", 3).read_text().split("\n")
    head = "\n".join(lines[:40]) + "\n"
    pad = audit_fast.BLOCK // 2 - len(head.encode()) - 100  # the long line starts half a block in
    filler = json.dumps({"game_id": "pad", "seq": 1, "type": "game_start", "players": ["x" * pad]})
    long = json.dumps({"game_id": "long", "seq": 1, "type": "game_start", "players": ["y" * (5 << 18)]})
    log = tmp_path / "long.jsonl"
    log.write_text(head + filler + "\n" + long + "\n" + "\n".join(lines[40:]))
    rejected = {}
    for limit in ([], ["--max-line-bytes", "300"], ["--max-line-bytes", str(2 << 20)]):
        _, out = assert_same_audit([*limit, str(log)], monkeypatch)  # csv, the last format
        rejected[tuple(limit[1:])] = {int(row.split(",")[3]) for row in out.splitlines()[1:] if ",bad_json," in row}
    assert {41, 42} & rejected[()] == {42}  # 1.25 MiB: over the default 1 MiB
    assert {41, 42} <= rejected[("300",)]
    assert not {41, 42} & rejected[(str(2 << 20),)]


def test_audit_command_does_not_import_pandas(tmp_path):
    """pyarrow would import pandas (about 0.4 s) only to ask whether a list is a pandas
    object; the audit command's process refuses it and still works, on both paths."""
    import os
    import subprocess
    import sys

    log = simulated(tmp_path / "s.jsonl", 5, 3, inject_rate=0.3)
    code = (
        "import sys\nfrom pipeline.cli import entry\nentry.AS_PROGRAM = True  # as main() marks the program\n"
        "code = entry._run()\n"
        "print('pandas' in sys.modules, code, file=sys.stderr)"
    )
    for fmt, path in zip(FORMATS, ("fast", "reference", "fast", "")):
        done = subprocess.run(
            [sys.executable, "-c", code, "audit", str(log), "-f", fmt],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "FARKLE_LOGS_REPLAY": path},
        )
        assert done.stderr.splitlines()[-1] == "False 1", done.stderr
        assert done.stdout

"""Issue 11's rule for ingest, as a property over seeded random logs (COORDINATION.md decision 5).

For logs from `simulate --inject` cut into interleaved files, with bad lines, blank lines,
exact repeats of lines, lines that conflict with another line's (game_id, seq), a file that
grows between runs, a last line cut in the middle and completed later, and a line rewritten
in place: whether the files are ingested in one run or over several, and with one or two
processes,
- every run's `lines = events + duplicates + rejects + blank`;
- the dataset's findings equal `audit`'s findings of the files as they are at the end, as
  multisets of (game_id, seq, file, line, player, code, claimed, expected);
- every table equals a one-run ingest of those files.
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from pipeline.audit.run import audit_stream
from pipeline.dataset.verify import check_dataset
from pipeline.ingest import ingest
from pipeline.reader.inputs import InputSource
from pipeline.reader import read_events
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from tests.test_ingest import everything
from tests.test_simulate import HOUSE_PENALTY

DEFAULT = Ruleset.builtin("standard")


def dataset_findings(ds: Path) -> Counter:
    rows = duckdb.sql(
        f"select game_id, seq, file, line, player, code, claimed, expected from read_parquet('{ds}/findings/*.parquet')"
    ).fetchall()
    return Counter(rows)


def audit_findings(paths: list[Path]) -> Counter:
    report = audit_stream(read_events([InputSource(str(p), path=p) for p in paths]), DEFAULT, trace=False)
    return Counter(
        (
            f.game_id,
            f.seq,
            f.file,
            f.line,
            f.player,
            f.code,
            None if f.claimed is None else float(f.claimed),
            None if f.expected is None else float(f.expected),
        )
        for f in report.findings
    )


def scenario(seed: int, tmp: Path) -> tuple[list[list[tuple[Path, bytes]]], list[Path]]:
    """Runs (each a list of (path, content) written just before that run) and the final files
    in first-appearance order."""
    rng = random.Random(seed)
    out = io.BytesIO()
    simulate(out, rng.randint(6, 14), seed, rules=[DEFAULT, HOUSE_PENALTY], inject_rate=0.5, tables=3)
    lines = out.getvalue().splitlines()
    for _ in range(rng.randint(1, 4)):  # hostile extras anywhere
        at = rng.randrange(len(lines))
        kind = rng.choice(["bad", "blank", "repeat", "conflict", "spaces"])
        if kind == "bad":
            lines.insert(at, b'{"game_id": "oops", "seq": ' + str(rng.randint(1, 9)).encode())
        elif kind == "blank":
            lines.insert(at, b"")
        elif kind == "spaces":
            lines.insert(at, b"   \t")
        elif kind == "repeat":
            lines.insert(rng.randrange(at, len(lines) + 1), lines[at])
        else:
            try:
                ev = json.loads(lines[at])
            except ValueError:
                continue
            if ev.get("type") == "roll":
                ev["dice"] = [rng.randint(1, 6) for _ in ev["dice"]]
                lines.insert(rng.randrange(at, len(lines) + 1), json.dumps(ev).encode())
    cuts = sorted(rng.sample(range(1, len(lines)), 2))
    a, b, c = lines[: cuts[0]], lines[cuts[0] : cuts[1]], lines[cuts[1] :]
    pa_, pb, pc_ = tmp / "a.jsonl", tmp / "b.jsonl", tmp / "c.jsonl"
    whole_a = b"\n".join(a) + b"\n"
    grown_at = rng.randrange(1, len(a) + 1)
    first_a = b"\n".join(a[:grown_at]) + b"\n"
    if rng.random() < 0.5 and len(a[grown_at - 1]) > 10:  # the last line was cut mid-way
        first_a = first_a[: -1 - len(a[grown_at - 1]) // 2]
    runs = [[(pa_, first_a), (pb, b"\n".join(b) + b"\n")], [(pa_, whole_a)], [(pc_, b"\n".join(c))]]
    if rng.random() < 0.5 and len(b) > 3:  # b rewritten in place: one line changed, the file shorter
        changed = list(b[:-1])
        changed[rng.randrange(len(changed))] = b'{"not": "the same line"}'
        runs[2].append((pb, b"\n".join(changed) + b"\n"))
    return runs, [pa_, pb, pc_]


@pytest.mark.parametrize("seed", range(6))
def test_one_run_or_several_give_the_dataset_audit_describes(tmp_path, seed):
    logs = tmp_path / "logs"
    logs.mkdir()
    runs, final = scenario(seed, logs)
    workers = 2 if seed % 3 == 0 else 1
    inc = tmp_path / "inc"
    for run in runs:
        for path, content in run:
            path.write_bytes(content)
        s = ingest([str(p) for p, _ in run], inc, DEFAULT, workers=workers)
        assert s.invariant_holds, s.to_dict()
    one = tmp_path / "one"
    s = ingest([str(p) for p in final], one, DEFAULT, workers=1)
    assert s.invariant_holds and s.duplicates == 0
    want = audit_findings(final)
    assert dataset_findings(one) == want
    assert dataset_findings(inc) == want
    drop_ingest = everything(inc)
    assert drop_ingest == everything(one)
    check = check_dataset(inc)  # the manifest's counts, net of superseded rows, match the tables
    assert not check.problems, check.problems  # (an event in two of the files is a copy check reports)

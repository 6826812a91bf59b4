"""The finding store gives back exactly what was put in, in order and grouped by game,
whether it kept the findings in memory or spilled them to disk (issue 11 item 10).

Small limits force the spill and many sorted runs, so the disk path runs on a few
hundred findings; the audit CLI's output must not change when its store spills.
"""

from __future__ import annotations

import random

import pytest

from pipeline.audit import finding_store
from pipeline.audit.finding_store import FindingStore
from pipeline.model import Finding


def findings(n: int, seed: int) -> list[Finding]:
    rng = random.Random(seed)
    games = [None, "g1", "g2", "g\x1b3", "g4", "g5"]
    return [
        Finding(
            rng.choice(games),
            rng.choice([None, i]),
            "a.jsonl",
            i + 1,
            rng.choice([None, "ann"]),
            rng.choice(["bad_json", "score_mismatch", "seq_error"]),
            rng.choice(["error", "warning"]),
            f"message {i}",
            rng.choice([None, 5, 2.5]),
            rng.choice([None, 7]),
            rng.choice([None, "t"]),
        )
        for i in range(n)
    ]


def grouped(items: list[Finding]) -> list[tuple]:
    groups: dict = {}
    for f in items:
        groups.setdefault(f.game_id, []).append(f)
    return [(g, len(fs), fs) for g, fs in groups.items()]


@pytest.mark.parametrize("limit", [1, 7, 50, 10_000])
def test_order_counts_and_groups(limit):
    items = findings(400, limit)
    store = FindingStore(limit=limit)
    for start in range(0, 400, 33):
        store.extend(items[start : start + 33])
    assert (store._spill is not None) == (limit < 400)
    assert len(store) == 400 and list(store) == items and store == items
    assert list(store) == items  # a second pass reads the same
    assert store.errors == sum(f.severity == "error" for f in items)
    assert store.by_code == {c: sum(f.code == c for f in items) for c in {f.code for f in items}}
    assert [(g, n, list(fs)) for g, n, fs in store.by_game()] == grouped(items)
    assert list(store) == items  # grouping left the spill readable
    store.close()


def test_many_runs_are_merged_in_steps(monkeypatch):
    """More sorted runs than may be open at once: they are merged into one run first."""
    monkeypatch.setattr(finding_store, "MAX_RUNS", 3)
    items = findings(200, 9)
    store = FindingStore(items, limit=10)  # 20 runs
    assert [(g, n, list(fs)) for g, n, fs in store.by_game()] == grouped(items)


def test_groups_left_unread_are_skipped():
    items = findings(300, 3)
    store = FindingStore(items, limit=20)
    seen = []
    for game_id, count, found in store.by_game():
        if len(seen) % 2:
            seen.append((game_id, count, [next(found)]))  # take one, leave the rest
        else:
            seen.append((game_id, count, []))  # take none
    expected = grouped(items)
    assert [(g, n) for g, n, _ in seen] == [(g, n) for g, n, _ in expected]
    assert [fs for _, _, fs in seen][1::2] == [fs[:1] for _, _, fs in expected][1::2]


def test_streamed_json_is_json_dumps_indented():
    """The streamed JSON writer gives the very text json.dumps(..., indent=2) gave."""
    import io
    import json

    from pipeline.audit.run import AuditReport
    from pipeline.cli.audit_render import write_json

    for n in (0, 1, 57):
        report = AuditReport(findings=FindingStore(findings(n, n), limit=10))
        buffer = io.StringIO()
        write_json(report, buffer)
        expected = json.dumps({"findings": [f.to_dict() for f in findings(n, n)], "games": []}, indent=2)
        assert buffer.getvalue() == expected


def test_empty_store():
    store = FindingStore(limit=1)
    assert not store and list(store) == [] and list(store.by_game()) == [] and store == []


def test_audit_output_unchanged_when_findings_spill(tmp_path, monkeypatch):
    """Every format prints the same bytes and exit code when the store spills every 3
    findings and the replayer hands them over every 2, as when nothing spills, on a log
    with many findings over many games, by the fast path and by the reference."""
    from tests.test_audit_fast import mangled_log, run

    log = str(mangled_log(tmp_path / "m.jsonl", 4))
    for reference in (False, True):
        for fmt in ("text", "json", "jsonl", "csv"):
            monkeypatch.setattr(finding_store, "LIMIT", 10**9)
            monkeypatch.setattr(finding_store, "DRAIN", 10**9)
            kept = run(["-f", fmt, log], monkeypatch, reference)
            monkeypatch.setattr(finding_store, "LIMIT", 3)
            monkeypatch.setattr(finding_store, "DRAIN", 2)
            spilled = run(["-f", fmt, log], monkeypatch, reference)
            assert kept == spilled, (fmt, reference)
            assert kept[0] == 1 and kept[1].count("\n") > 20


def test_json_output_is_json_dumps_indent_2_for_any_value():
    """audit's JSON writer builds each finding and game itself (audit_render._indented):
    the very text textwrap.indent(json.dumps(item, indent=2), "    ") gives, for nested
    dicts and lists, empty ones, escapes, floats, and (by falling back) keys that are not
    str and subclasses of the scalar types."""
    import enum
    import json
    import random
    import textwrap

    from pipeline.cli.audit_render import _indented

    rng = random.Random(4)

    def value(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.4:
            return rng.choice(
                [
                    0,
                    -5,
                    2**70,
                    1.5,
                    float("nan"),
                    float("inf"),
                    float("-inf"),
                    -0.0,
                    1e300,
                    True,
                    False,
                    None,
                    "",
                    'é\n"\\x',
                    "\u2028\ud800",
                    "abc",
                ]
            )
        if r < 0.7:
            return {rng.choice(["a", "b", "é", "", 'k"', "\x00"]): value(depth + 1) for _ in range(rng.randrange(4))}
        items = [value(depth + 1) for _ in range(rng.randrange(4))]
        return items if rng.random() < 0.5 else tuple(items)

    class Level(enum.IntEnum):
        ERROR = 1

    class Name(str):
        pass

    items = [{"x": value(), "y": value()} for _ in range(5000)]
    items += [
        {1: 2},
        {"a": {2: 3}},
        {"a": {True: 1}},
        {},
        {"a": []},
        {"a": {}},
        {"a": Level.ERROR},
        {"a": Name("x")},
        {Name("k"): 1},
    ]
    for item in items:
        assert _indented(item) == textwrap.indent(json.dumps(item, indent=2), "    ")

"""sample_logs/: rebuilt byte for byte from the simulator, small, and audited as README.md says."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.simulate.samples import build

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
LOGS = sorted(p.name for p in SAMPLES.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz", ".csv")))


def test_committed_samples_are_what_the_generator_writes(tmp_path):
    facts = build(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == LOGS
    for name in written:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), (
            f"{name}: run python -m pipeline.simulate.samples sample_logs"
        )
    assert facts["disputed_winner"] == {"claimed": "bo", "corrected": "ana"}


def test_each_sample_is_small():
    for path in SAMPLES.iterdir():
        assert path.stat().st_size < 1_000_000, path.name


def audit(*names: str, sheet: str | None = None):
    inputs = pytest.importorskip("pipeline.reader.inputs", reason="pipeline.reader.inputs is not there yet")
    reader = pytest.importorskip("pipeline.reader", reason="the reader is not there yet")
    auditing = pytest.importorskip("pipeline.audit.run", reason="pipeline.audit.run is not there yet")
    sources = inputs.resolve_inputs([str(SAMPLES / n) for n in names])
    kw = {}
    if sheet is not None:
        kw["sheet"] = (sheet, (SAMPLES / sheet).read_text())
    report = auditing.audit_stream(reader.read_events(sources), **kw)
    rows = [(Path(f.file).name if f.file else None, f.line, f.game_id, f.seq, f.code) for f in report.findings]
    return rows, report.games


@pytest.mark.parametrize(
    "names",
    [
        ("standard.jsonl",),
        ("playmonster.jsonl",),
        ("house_doubling.jsonl",),
        ("house_penalty.jsonl",),
        ("more_games.jsonl.gz",),
        ("split_game-1.jsonl", "split_game-2.jsonl"),
    ],
)
def test_clean_samples_audit_clean(names):
    rows, games = audit(*names)
    assert rows == []
    assert games and all(g.complete for g in games)


def test_the_tie_in_standard_jsonl():
    _, games = audit("standard.jsonl")
    tie = next(g for g in games if g.game_id == "s517-g000000")
    assert tie.winner_claimed == tie.winner_corrected == ["chen", "quin"]


def test_disputed_game_has_one_cross_roll_meld_that_changes_the_winner():
    rows, games = audit("disputed_game.jsonl", sheet="disputed_game.scoresheet.csv")
    assert rows == [("disputed_game.jsonl", 178, "s814-g000000", 178, "cross_roll_meld")]
    (game,) = games
    assert (game.winner_claimed, game.winner_corrected) == (["bo"], ["ana"])
    assert (game.claimed["bo"], game.corrected["bo"]) == (11050, 10550)


def test_bad_lines_give_exactly_three_findings():
    rows, _ = audit("bad_lines.jsonl")
    assert rows == [
        ("bad_lines.jsonl", 10, None, None, "bad_json"),
        ("bad_lines.jsonl", 23, "s300-g000000", 22, "bad_event"),
        ("bad_lines.jsonl", 43, "s300-g000000", 41, "bad_event"),
    ]


def test_split_game_parts_alone():
    first, _ = audit("split_game-1.jsonl")
    assert [(r[3], r[4]) for r in first] == [(122, "missing_turn_end"), (122, "game_incomplete")]
    second, _ = audit("split_game-2.jsonl")
    assert len(second) == 121 and {r[4] for r in second} == {"unknown_game"}

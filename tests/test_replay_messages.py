"""Finding messages a referee can read aloud (issue 13): each names what happened in words,
and keeps the facts (seq, claimed, expected) that the finding's fields carry.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from tests.gamelog import Log, audit
from tests.test_simulate_inject import audit as audit_bytes


def only(out):
    (f,) = [f for f in out.findings if f.severity == "error"]
    return f


def test_keeping_more_of_a_face_than_the_roll_had_says_how_many():
    log = Log()
    log.roll("ana", [1, 1, 2, 3, 4, 6]).keep("ana", [1, 1, 1], 1000).bank("ana", 1000, 1000)
    assert only(audit(log)).message == "seq 3: kept 1,1,1 from the roll [1,1,2,3,4,6]: kept three 1s, the roll had two"


def test_keeping_a_face_the_roll_did_not_have():
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 2, 2, 3, 4, 6]).keep("ana", [1, 5], 150).bank("ana", 150, 150)
    assert only(audit(log)).message.endswith(": kept a 5, the roll had none")


def test_wrong_dice_count_says_die_for_one():
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 5, 5, 5, 2, 3]).keep("ana", [1, 5, 5, 5], 600).roll("ana", [4])
    (f,) = [f for f in audit(log).findings if f.code == "wrong_dice_count"]
    assert f.message == "seq 4: ana rolled 1 die [4], but 2 were left to roll"
    log = Log(rules={"base": "standard", "opening": 0})
    log.roll("ana", [1, 5, 5, 5, 5, 3]).keep("ana", [1, 5, 5, 5, 5], 1100).roll("ana", [4, 6])
    (f,) = [f for f in audit(log).findings if f.code == "wrong_dice_count"]
    assert f.message == "seq 4: ana rolled 2 dice [4,6], but 1 was left to roll"


def test_non_scoring_kept_names_the_dice_that_score_nothing():
    log = Log()
    log.roll("ana", [1, 2, 4, 6, 6, 6]).keep("ana", [1, 2, 4, 6, 6, 6], 700).bank("ana", 700, 700)
    f = only(audit(log))
    assert f.message == "seq 3: kept 1,2,4,6,6,6 and claimed 700, but a 2 and a 4 score nothing"
    assert (f.claimed, f.expected) == (700, None)


def test_penalty_error_explains_the_streak():
    log = Log(players=("ana",), rules={"base": "standard", "farkle_penalty": 500, "penalty_after": 3})
    log.bust("ana", total=0).bust("ana", total=0).bust("ana", total=0)
    f = only(audit(log))
    assert f.message == (
        "seq 7: the farkle gives ana a total of 0, but this is ana's 3rd farkle in a row, "
        "which costs 500: 0 - 500 = -500"
    )


def test_seq_gap_names_the_missing_seqs():
    log = Log().roll("ana", [6, 6, 6, 2, 3, 4]).keep("ana", [6, 6, 6], 600, seq=4).bank("ana", 600, 600)
    assert only(audit(log)).message == "seq 4 comes after seq 2: seq 3 is missing"


def test_wrong_player_with_no_turn_open_keeps_its_short_form():
    log = Log(players=("ana", "bo", "cy")).opening_turn("cy")
    assert only(audit(log)).message == "seq 2: cy rolls but it is ana's turn"


@pytest.fixture(scope="module")
def injected_findings():
    data, manifest = io.BytesIO(), io.StringIO()
    rules = [Ruleset.builtin("standard"), Ruleset.from_value({"farkle_penalty": 500, "min_bank": 300})]
    simulate(data, 250, 21, rules=rules, players=(2, 4), inject_rate=1.0, manifest=manifest)
    return audit_bytes(data.getvalue())


def test_every_injected_finding_reads_as_a_sentence_with_its_facts(injected_findings):
    codes = {f.code for f in injected_findings}
    assert len(codes) >= 20  # the simulator plants every code of a log
    for f in injected_findings:
        text = f.message
        assert "  " not in text and not text.endswith(" "), text
        if f.seq is not None and f.code not in ("bad_json", "bad_event"):
            assert text.startswith(f"seq {f.seq}"), text
        for number in (f.claimed, f.expected):
            if number is not None and f.code != "seq_error":
                assert str(number) in text, (f.code, number, text)
        assert "?" not in text and "not in that roll" not in text, text


def test_messages_in_json_output_are_strings(injected_findings):
    assert all(isinstance(json.loads(json.dumps(f.to_dict()))["message"], str) for f in injected_findings)


def _shape(message: str) -> str:
    """A message with its names and numbers blanked, so a run's message and the doc's example
    compare on their words."""
    from pipeline.simulate.game import PLAYER_NAMES

    text = re.sub(r"\b(" + "|".join(PLAYER_NAMES) + r")\b", "P", message)
    text = re.sub(r"\d+", "N", text)
    return re.sub(r"N(,N)+", "N", text)


def test_the_documented_examples_are_what_the_audit_says(injected_findings):
    """docs/audit.md, "What the findings say": one example per code, each the shape of a
    message the audit gives on the simulator's injected mistakes."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "audit.md").read_text(encoding="utf-8")
    section = doc.split("## What the findings say", 1)[1].split("\n## ", 1)[0]
    examples = dict(re.findall(r"^\| `(\w+)` \| `([^`]+)`", section, re.M))
    assert len(examples) >= 20
    shapes: dict[str, set[str]] = {}
    for f in injected_findings:
        shapes.setdefault(f.code, set()).add(_shape(f.message))
    for code, example in examples.items():
        assert _shape(example) in shapes.get(code, set()), (code, example, sorted(shapes.get(code, ()))[:5])

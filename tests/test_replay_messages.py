"""Finding messages a referee can read aloud (issue 13): each names what happened in words,
and keeps the facts (seq, claimed, expected) that the finding's fields carry.
"""
from __future__ import annotations

import io
import json

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
    assert f.message == ("seq 7: the farkle gives ana a total of 0, but this is ana's 3rd farkle in a row, "
                         "which costs 500: 0 - 500 = -500")


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

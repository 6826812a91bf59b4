"""The simulator drops turn-ending lines (issue 15) and the audit finds every one.

`inject` plants "a lost turn end" two ways: the line is dropped and the seqs close over it
(missing_turn_end on the next player's roll), or it is dropped with its seq (seq_error on
that roll, which comes first in the precedence table). The manifest says which, and the
real reader + replay engine must find exactly the manifest. (The simulator's own checker is
held to the engine on the hand-built lost-end logs in tests/test_replay_lost_turn_end.py.)
"""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest

from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from tests.test_simulate_inject import HOUSE_PENALTY, audit as audit_bytes

DROPPED = "line was lost before this roll"


def run(code: str, games: int, seed: int, rules):
    data, manifest = io.BytesIO(), io.StringIO()
    simulate(data, games, seed, rules=rules, players=(2, 5), inject_rate=1.0, inject_codes=[code], manifest=manifest)
    return data.getvalue(), [json.loads(line) for line in manifest.getvalue().splitlines()]


@pytest.mark.parametrize("rules", [[Ruleset.builtin("standard")], [HOUSE_PENALTY]], ids=["standard", "penalty"])
def test_dropped_turn_ends_are_each_found_as_missing_turn_end(rules):
    data, manifest = run("missing_turn_end", 60, 31, rules)
    dropped = [m for m in manifest if m["what"].endswith(DROPPED)]
    assert len(dropped) >= 15, Counter(m["what"] for m in manifest)
    assert {m["what"].split("'s ")[1].split()[0] for m in dropped} == {"bank", "farkle"}
    # a dropped end plants one finding: its game still has its game_end
    dropped_games = {m["game_id"] for m in dropped}
    assert not any(m["game_id"] in dropped_games and m["code"] == "game_incomplete" for m in manifest)
    want = Counter((m["game_id"], m["seq"], m["code"], m["line"]) for m in manifest)
    got = Counter((f.game_id, f.seq, f.code, f.line) for f in audit_bytes(data))
    assert got == want


def test_a_turn_end_dropped_with_its_seq_is_seq_error_on_the_next_roll():
    data, manifest = run("seq_error", 80, 32, [Ruleset.builtin("standard")])
    lost = [m for m in manifest if m["what"].endswith("was lost")]
    assert len(lost) >= 5
    want = Counter((m["game_id"], m["seq"], m["code"], m["line"]) for m in manifest)
    findings = audit_bytes(data)
    assert Counter((f.game_id, f.seq, f.code, f.line) for f in findings) == want
    lines = data.splitlines()
    for m in lost:  # the finding sits on a six-dice roll by the next player
        event = json.loads(lines[m["line"] - 1])
        assert event["type"] == "roll" and len(event["dice"]) == 6

"""A tiny builder for hand-written game logs, so each replay test reads like the game it is.

Lines go through the real reader (`parse_line`), so tests exercise the same path as the
CLI. `seq` is numbered automatically; pass `seq=` to write a wrong one on purpose.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.reader.parse import parse_line
from pipeline.replay import audit_items
from pipeline.rules import Ruleset


class Log:
    def __init__(
        self,
        game_id: str = "g1",
        players=("ana", "bo"),
        rules: Any = "standard",
        file: str = "t.jsonl",
        start: bool = True,
        **extra,
    ):
        self.game_id = game_id
        self.file = file
        self.lines: list[str] = []
        self.seq = 0
        if start:
            fields = {"players": list(players)}
            if rules is not None:
                fields["rules"] = rules
            self.event("game_start", **fields, **extra)

    def event(self, type: str, seq: int | None = None, game_id: str | None = None, **fields) -> "Log":
        if seq is None:
            self.seq += 1
            seq = self.seq
        else:
            self.seq = seq
        obj = {"game_id": game_id or self.game_id, "seq": seq, "type": type, **fields}
        self.lines.append(json.dumps(obj))
        return self

    def raw(self, text: str) -> "Log":
        self.lines.append(text)
        return self

    def roll(self, player, dice, **kw):
        return self.event("roll", player=player, dice=list(dice), **kw)

    def keep(self, player, dice, points, **kw):
        return self.event("keep", player=player, dice=list(dice), points=points, **kw)

    def bank(self, player, points, total, **kw):
        return self.event("bank", player=player, points=points, total=total, **kw)

    def farkle(self, player, total=None, **kw):
        if total is not None:
            kw["total"] = total
        return self.event("farkle", player=player, **kw)

    def end(self, winner, scores, **kw):
        return self.event("game_end", winner=winner, scores=scores, **kw)

    # -- common turns ---------------------------------------------------------------
    def opening_turn(self, player, total_before=0):
        """A clean 600-point turn: roll, keep three 6s, bank."""
        return self.roll(player, [6, 6, 6, 2, 3, 4]).keep(player, [6, 6, 6], 600).bank(player, 600, total_before + 600)

    def bust(self, player, **kw):
        return self.roll(player, [2, 2, 3, 3, 4, 6]).farkle(player, **kw)

    def items(self):
        out = []
        for i, text in enumerate(self.lines, 1):
            item = parse_line(text.encode(), self.file, i)
            if item is not None:
                out.append(item)
        return out


def audit(*logs: Log, rules: Ruleset | None = None, trace: bool = False):
    items = [item for log in logs for item in log.items()]
    return audit_items(items, rules, trace=trace)


def codes(out, *, include_warnings: bool = False):
    """(seq, code) of every finding, in order; warnings only when asked."""
    return [(f.seq, f.code) for f in out.findings if include_warnings or f.severity == "error"]

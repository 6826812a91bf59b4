"""An audit with its games, results, timelines and findings on disk gives the same report.

Past their limits the Replayer spills game states (pipeline.replay.state.GameSpill), and the
audit keeps results, timelines and findings on disk (pipeline/audit/game_stores.py,
finding_store.py). Here the limits are a handful, so a log of a few dozen interleaved,
mangled games crosses every one of them many times; what comes out must equal the report
with every limit out of reach: the same findings in the same order, results, timelines and
text. (The memory these limits bound: tests/test_hostile_memory.py.)
"""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.audit import fast as audit_fast
from pipeline.audit import finding_store
from pipeline.audit.game_stores import DiskGames, GameStore, Timelines
from pipeline.audit.run import audit_sources, audit_stream
from pipeline.cli.audit_render import as_json, print_text
from pipeline.reader import read_events
from pipeline.reader.inputs import resolve
from pipeline.replay import Replayer
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from tests.mangled_games import mangle

RULES = Ruleset.builtin("standard")


def messy_log(path: Path, seed: int) -> Path:
    """Interleaved games (some with planted errors, some mangled or cut off), bad lines
    naming games, lines of games never started and lines after a game's end."""
    buffer = io.BytesIO()
    simulate(buffer, games=40, seed=seed, tables=6, inject_rate=0.4)
    lines = buffer.getvalue().decode().splitlines()
    rng = random.Random(seed)
    by_game: dict[str, list[dict]] = {}
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:  # a planted bad_json
            continue
        by_game.setdefault(event["game_id"], []).append(event)
    mangled = {g: mangle(ev, rng, max_edits=3, cut_off=True) for g, ev in list(by_game.items())[:8]}
    out = []
    for line in lines:
        found = re.search(r'"game_id": ?"([^"]*)"', line)
        game = found.group(1) if found else ""
        if game in mangled:
            if mangled[game]:
                out.append(mangled[game].pop(0))
            continue
        out.append(line)
        r = rng.random()
        if r < 0.01:
            out.append(f'{{"game_id":"{game}","seq":"x","type":"roll"}}')  # a bad line of a known game
        elif r < 0.015:
            out.append(f'{{"game_id":"ghost-{rng.randrange(5)}","seq":1,"type":"roll","player":"a","dice":[1]}}')
        elif r < 0.02:
            out.append(line[: len(line) // 2])
    for game in list(by_game)[8:12]:  # play after the end
        out.append(json.dumps({**by_game[game][-1], "seq": by_game[game][-1]["seq"] + 1, "type": "roll"}))
    path.write_text("\n".join(out) + "\n")
    return path


def text_of(report) -> str:
    """print_text's output as written to a file."""
    buffer = io.StringIO()
    print_text(report, SimpleNamespace(stream=buffer, color=False))  # type: ignore[arg-type]
    return buffer.getvalue()


@pytest.mark.parametrize("seed", [1, 2])
def test_replayer_with_a_spill_gives_what_it_gives_in_memory(tmp_path, seed):
    items = list(read_events(resolve([str(messy_log(tmp_path / "m.jsonl", seed))]).sources))
    whole = Replayer(RULES, trace=True, records=True)
    spilled = Replayer(RULES, trace=True, records=True, spill=DiskGames(), max_games=4)
    for item in items:
        whole.feed(item)
        spilled.feed(item)
    assert spilled._spilled > 0  # games really went to disk and came back
    whole.finish()
    outputs = []
    for _ in spilled.finish_steps(every=3):
        outputs.append(spilled.drain())
    outputs.append(spilled.drain())
    a = whole.drain()
    for name in ("findings", "games", "turns", "rolls", "decisions"):
        assert [x for o in outputs for x in getattr(o, name)] == getattr(a, name), name
    timelines = {}
    for o in outputs:
        timelines.update(o.timelines)
    assert timelines == a.timelines


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("path", ["reference", "fast", "fast past MANY_GAMES"])
def test_audit_past_every_limit_gives_the_same_report(tmp_path, monkeypatch, seed, path):
    log = messy_log(tmp_path / "m.jsonl", seed)
    expected = audit_stream(read_events(resolve([str(log)]).sources), RULES)  # every limit out of reach
    expected_json, expected_text = as_json(expected), text_of(expected)
    tiny_limits(monkeypatch, many_games=10 if path == "fast past MANY_GAMES" else 10**6)
    if path == "reference":
        got = audit_stream(read_events(resolve([str(log)]).sources), RULES)
    else:
        got = audit_sources(resolve([str(log)]).sources, RULES, jit=False)
    assert got.findings._spill is not None and len(got.games) > 3
    assert got.games._db is not None and (got.timelines._db is not None or len(got.timelines) < 2)
    assert as_json(got) == expected_json
    assert text_of(got) == expected_text
    got.close()


def tiny_limits(monkeypatch, many_games: int) -> None:
    """Every limit a handful; pass 1 of the fast audit gives up past `many_games` games."""
    monkeypatch.setattr(finding_store, "LIMIT", 7)
    monkeypatch.setattr(finding_store, "DRAIN", 3)
    monkeypatch.setattr(finding_store, "MAX_RUNS", 3)
    monkeypatch.setattr(audit_fast, "MANY_GAMES", many_games)
    monkeypatch.setattr(GameStore, "__init__", _held(GameStore.__init__, 3))
    monkeypatch.setattr(Timelines, "__init__", _held(Timelines.__init__, 2))
    original = Replayer.__init__

    def small(self, *args, **kwargs):
        if kwargs.get("spill") is not None:
            kwargs["max_games"] = 4
        original(self, *args, **kwargs)

    monkeypatch.setattr(Replayer, "__init__", small)


def _held(init, held: int):
    def patched(self, *args, **kwargs):
        kwargs["held"] = held
        init(self, *args, **kwargs)

    return patched


def test_stores_read_like_the_list_and_dict_they_replace():
    from pipeline.model import GameResult

    results = [GameResult(f"g{i}", ("a",), RULES, {"a": i}, {"a": i}, ["a"], ["a"], True) for i in range(10)]
    store = GameStore(results[:5], held=3)
    store.extend(results[5:])
    assert store == results and len(store) == 10 and list(store) == results
    assert store.get("g1") == results[1] and store.get("g9") == results[9] and store.get("nope") is None
    timelines = Timelines(held=2)
    for i in range(5):
        timelines[f"g\ud800{i}"] = [[i]]  # a lone surrogate (a JSON escape allows one in an id)
    assert timelines == {f"g\ud800{i}": [[i]] for i in range(5)}
    assert timelines.get("g\ud8003") == [[3]] and timelines.get("x") is None
    store.close()
    timelines.close()

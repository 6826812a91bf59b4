"""`warm` compiles what ingest and audit run, with the argument types they run it with, and
`ready` says so when numba is compiling (the first run after an install)."""

from __future__ import annotations

import numba
import pytest
from numba.core import event
from typer.testing import CliRunner

from pipeline.audit.run import audit_sources
from pipeline.cli.main import app
from pipeline.ingest import ingest, scan, warm
from pipeline.reader.inputs import resolve
from pipeline.replay.fast import compiled
from pipeline.simulate import simulate


class Compiles(event.Listener):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_start(self, e) -> None:
        self.seen.append(str(e.data["dispatcher"].py_func.__name__))

    def on_end(self, e) -> None:
        pass


def test_after_warm_the_fast_paths_compile_nothing(tmp_path):
    """Whatever numba compiles for ingest and audit, `warm` compiled already: a signature
    it missed would be compiled during the user's first large run, unannounced."""
    log = tmp_path / "g.jsonl"
    simulate(str(log), 20, 4, inject_rate=0.3, tables=2)
    warm.warm()
    assert set(scan._COMPILED) == {"scan_lines", "gather_text"}
    assert all(f.signatures for f in scan._COMPILED.values()) and compiled.replay_events().signatures
    listener = Compiles()
    with event.install_listener("numba:compile", listener):
        report = audit_sources(resolve([str(log)]).sources, fast_min_bytes=0)
        ingest([str(log)], tmp_path / "ds", workers=1, fast_min_bytes=0)
    assert listener.seen == [] and report.findings.errors


def test_ready_announces_a_compile_once(monkeypatch):
    def compiling(jit: bool = True, replay: bool = True) -> None:  # two functions numba has never seen: two compiles
        numba.njit(lambda x: x + 1)(1)
        numba.njit(lambda x: x * 2)(2.0)

    said = []
    monkeypatch.setattr(warm, "warm", compiling)
    assert warm.ready(on_compile=lambda: said.append(warm.WHAT)) is True
    assert said == [warm.WHAT]
    monkeypatch.setattr(warm, "warm", lambda jit=True, replay=True: None)  # everything loaded from the cache
    assert warm.ready(on_compile=lambda: said.append("again")) is False and said == [warm.WHAT]
    monkeypatch.setattr(warm, "warm", lambda jit=True, replay=True: pytest.fail("warmed without jit"))
    assert warm.ready(jit=False, on_compile=lambda: said.append("no jit")) is False and len(said) == 1


def test_warm_command(monkeypatch):
    from pipeline.cli import warm_cmd

    calls = []
    monkeypatch.setattr(warm, "warm", lambda jit=True, replay=True: calls.append(jit))
    monkeypatch.setattr(warm_cmd, "_warm_two_player_judge", lambda: calls.append("judge"))
    result = CliRunner().invoke(app, ["warm"])
    assert result.exit_code == 0 and calls == [True, "judge"]
    assert "compiled already" in result.stdout
    monkeypatch.setenv("FARKLE_LOGS_NO_JIT", "1")
    result = CliRunner().invoke(app, ["warm"])
    assert result.exit_code == 0 and calls == [True, "judge"] and "nothing to compile" in result.stdout


def test_after_warm_judging_two_player_games_compiles_nothing(tmp_path):
    """The two-player judge (decisions-quality, the report, one turn's chances for --coach
    and advise) is warmed by running it: judging another dataset then compiles nothing."""
    from pipeline.rules import Ruleset
    from pipeline.solved import tables as race_tables
    from pipeline.stats import compute

    assert CliRunner().invoke(app, ["warm"]).exit_code == 0
    log = tmp_path / "two.jsonl"
    simulate(str(log), 3, 9, players=(2, 2))
    ingest([str(log)], tmp_path / "ds", workers=1)
    listener = Compiles()
    with event.install_listener("numba:compile", listener):
        tables = compute(tmp_path / "ds", sections=["decisions-quality"])
        race_tables.race(Ruleset.builtin("standard")).turn(500, 1000).roll(0, 6)
    assert listener.seen == [] and tables["decision_quality"].num_rows


def test_a_compile_is_announced_on_stderr_and_the_bar(capsys):
    from pipeline.cli.common import JUDGE_COMPILE, compiles_announced

    labels = []
    with compiles_announced(lambda amount=0, **kw: labels.append(kw.get("label"))):
        numba.njit(lambda x: x - 3)(4)
        numba.njit(lambda x: x - 4)(5)
    assert labels == [JUDGE_COMPILE] and capsys.readouterr().err.count("note: compiling the two-player judge") == 1


def test_a_first_judging_compiles_in_a_child_and_this_process_only_loads(tmp_path):
    """With numba's cache empty (an install not warmed), `compile_apart` compiles the judge in
    a child process: afterwards the cache holds it, and making the judge here compiles
    nothing (the compiler's memory went with the child). Run in a fresh interpreter, as
    numba reads its cache directory once."""
    import json
    import os
    import subprocess
    import sys

    script = """
import json
from numba.core import event
from pipeline.rules import Ruleset
from pipeline.solved import judge
from pipeline.strategy import race

class Seen(event.Listener):
    def __init__(self): self.names = []
    def on_start(self, e): self.names.append(getattr(e.data["dispatcher"], "__name__", None))
    def on_end(self, e): pass

before = race.judge_compiled()
announced, loading = Seen(), Seen()
with event.install_listener("numba:compile", announced):
    judge.compile_apart()
after = race.judge_compiled()
with event.install_listener("numba:compile", loading):
    made = judge.judge_for(Ruleset.builtin("standard").to_json())
print(json.dumps({"before": before, "after": after, "announced": announced.names,
                  "loading": loading.names, "judge": not isinstance(made, str)}))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), FARKLE_LOGS_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"before": False, "after": True, "announced": [None], "loading": [], "judge": True}


def test_with_the_judge_compiled_no_child_is_started(monkeypatch):
    import subprocess

    from pipeline.solved import judge
    from pipeline.strategy import race

    monkeypatch.setattr(race, "judge_compiled", lambda: True)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a child started with the judge compiled"))
    listener = Compiles()
    with event.install_listener("numba:compile", listener):
        judge.compile_apart()
    assert listener.seen == []


def test_a_child_that_fails_leaves_the_compile_to_this_process(monkeypatch):
    """The child's exit status is not checked: a child killed or failing costs the run
    nothing, the judge then compiles in place as it did before."""
    import subprocess

    from pipeline.solved import judge
    from pipeline.strategy import race

    calls = []

    def fails(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, 1)

    monkeypatch.setattr(race, "judge_compiled", lambda: False)
    monkeypatch.setattr(subprocess, "run", fails)
    judge.compile_apart()  # no exception
    assert calls and calls[0][1:] == ["-m", "pipeline.solved.judge"]

    def hangs(args, **kwargs):
        calls.append(kwargs["timeout"])
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", hangs)
    judge.compile_apart()  # killed after its time: no exception either
    assert calls[-1] == judge.CHILD_COMPILE_SECONDS

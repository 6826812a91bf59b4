"""Routing (pipeline.engines.Routing) is read from the environment in one place and reaches
the library as arguments: the path it names is the path taken, in this process and in the
workers, and no other module reads the variables."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.engines import Routing
from pipeline.ingest import ingest
from pipeline.simulate import simulate
from tests.test_ingest import everything

VARIABLES = ("FARKLE_LOGS_REPLAY", "FARKLE_LOGS_NO_JIT", "FARKLE_LOGS_WORKERS")


def test_the_environment_is_read_into_one_routing():
    assert Routing.from_environment(environ={}) == Routing()
    routed = Routing.from_environment(
        "spark",
        "local[2]",
        environ={"FARKLE_LOGS_REPLAY": "reference", "FARKLE_LOGS_NO_JIT": "1", "FARKLE_LOGS_WORKERS": "3"},
    )
    assert routed == Routing("spark", "local[2]", reference=True, jit=False, workers=3)
    assert Routing.from_environment(environ={"FARKLE_LOGS_WORKERS": "many"}).workers is None
    assert Routing().fast_min_bytes > 1 << 20  # small inputs take the paths without compiled code
    assert Routing.from_environment(environ={"FARKLE_LOGS_REPLAY": "fast"}) == Routing(fast_min_bytes=0)


def test_only_the_seam_reads_the_routing_variables():
    pipeline = Path(__file__).resolve().parents[1] / "pipeline"
    readers = {
        str(p.relative_to(pipeline))
        for p in pipeline.rglob("*.py")
        if any(f'"{name}"' in p.read_text(encoding="utf-8") for name in VARIABLES)
    }
    assert readers == {"engines/__init__.py"}


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "games.jsonl"
    simulate(str(path), 12, 5, inject_rate=0.3)
    return path


def _no(what: str):
    def refuse(*args, **kwargs):
        raise AssertionError(f"{what} ran")

    return refuse


def test_reference_routing_never_takes_the_fast_paths(log, tmp_path, monkeypatch):
    from pipeline.audit import fast as audit_fast
    from pipeline.replay.fast import arrow

    monkeypatch.setenv("FARKLE_LOGS_REPLAY", "fast")
    fast_out = CliRunner().invoke(app, ["audit", str(log), "-f", "jsonl"])
    monkeypatch.setattr(audit_fast, "scan", _no("the fast audit"))
    monkeypatch.setattr(arrow, "replay_table", _no("the fast replay"))
    monkeypatch.setenv("FARKLE_LOGS_REPLAY", "reference")
    reference_out = CliRunner().invoke(app, ["audit", str(log), "-f", "jsonl"])
    assert reference_out.exit_code == fast_out.exit_code == 1, reference_out.output
    assert reference_out.stdout == fast_out.stdout
    ingest([str(log)], tmp_path / "ref", workers=1, reference=True)  # the workers' Config carries it too
    monkeypatch.undo()
    ingest([str(log)], tmp_path / "fast", workers=1)
    assert everything(tmp_path / "ref") == everything(tmp_path / "fast")


def test_without_jit_nothing_is_compiled(log, tmp_path, monkeypatch):
    from pipeline.ingest import scan
    from pipeline.replay.fast import compiled

    monkeypatch.setattr(scan, "_COMPILED", {})
    monkeypatch.setattr(scan, "_compile", _no("the scan's compile"))
    monkeypatch.setattr(compiled, "_COMPILED", None)
    monkeypatch.setattr(compiled, "_compile", _no("the kernel's compile"))
    monkeypatch.setenv("FARKLE_LOGS_NO_JIT", "1")
    monkeypatch.setenv("FARKLE_LOGS_REPLAY", "fast")  # the fast paths, as plain Python
    assert CliRunner().invoke(app, ["audit", str(log)]).exit_code == 1
    out = CliRunner().invoke(app, ["ingest", str(log), "--out", str(tmp_path / "ds")])
    assert out.exit_code == 1, out.output
    monkeypatch.delenv("FARKLE_LOGS_NO_JIT")
    monkeypatch.delenv("FARKLE_LOGS_REPLAY")
    with pytest.raises(AssertionError, match="compile ran"):
        ingest([str(log)], tmp_path / "jit", workers=1)


def test_small_inputs_need_no_compiled_code(log, tmp_path, monkeypatch):
    """Below Routing.fast_min_bytes the commands take the paths without compiled code: numba
    is not even imported (a first run compiles nothing), and the dataset and the audit are
    those of the compiled paths."""
    import os
    import subprocess
    import sys

    from tests.test_ingest import everything

    program = (
        "import sys\nfrom pipeline.cli import entry\nentry.AS_PROGRAM = True\ncode = entry._run()\n"
        "print('numba' in sys.modules, code, file=sys.stderr)"
    )
    outputs = {}
    for path in ("", "fast"):
        env = {**os.environ, "FARKLE_LOGS_REPLAY": path}
        for args in (["ingest", str(log), "--out", str(tmp_path / f"ds-{path}")], ["audit", str(log), "-f", "json"]):
            done = subprocess.run(
                [sys.executable, "-c", program, *args], capture_output=True, text=True, check=False, env=env
            )
            assert done.stderr.splitlines()[-1] == f"{path == 'fast'} 1", done.stderr
            outputs[path, args[0]] = done.stdout
    assert everything(tmp_path / "ds-") == everything(tmp_path / "ds-fast")
    assert outputs["", "audit"] == outputs["fast", "audit"] and '"findings"' in outputs["", "audit"]

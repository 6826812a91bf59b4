"""CI's short fuzzing run: every target of tests/fuzz/targets.py for a fixed budget
($FUZZ_SECONDS, default 12 s each), two at a time, each in its own process (atheris, or
hypothesis where atheris is not installed). A target fails on any exception that is not
the tool's own error; the failing input is saved and named in the failure. `make fuzz`
runs the same targets longer."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fuzz.run import TARGET_NAMES
from tests.fuzz.targets import TARGETS, seeds

ROOT = Path(__file__).resolve().parents[2]
SECONDS = int(os.environ.get("FUZZ_SECONDS", "12"))


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    artifacts = tmp_path_factory.mktemp("fuzz-artifacts")

    def run(target: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "tests.fuzz.run", target, "--seconds", str(SECONDS), "--artifacts", str(artifacts)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SECONDS * 4 + 120,
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(TARGET_NAMES, pool.map(run, TARGET_NAMES)))


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_fuzz_target_finds_nothing(fuzz_runs, target):
    done = fuzz_runs[target]
    assert done.returncode == 0, f"fuzz target {target} failed:\n{done.stderr[-6000:]}"


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_seed_corpus_passes(target):
    corpus = seeds(target)
    assert corpus, target
    for data in corpus:
        TARGETS[target](data)


def test_a_target_reports_what_is_not_the_tools_own_error(monkeypatch):
    # The harness must fail on a real bug: break the reader and the lines target says so.
    from pipeline.reader import lines as lines_module
    from tests.fuzz import targets

    monkeypatch.setattr(targets, "iter_lines", lambda src, limit: iter([(1, b"wrong")]))
    with pytest.raises(AssertionError):
        targets.lines(b"\x05a\nb\n")
    assert lines_module.iter_lines is not None

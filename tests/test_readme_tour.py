"""The README's short tour runs as written, line by line, from a scratch folder outside the
repository (its first line makes one), and writes nothing anywhere else."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tour_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## A short tour") :]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)[:1]
    return [line for line in block.splitlines() if line.strip()]


def test_the_tour_runs_from_a_scratch_folder(tmp_path):
    lines = tour_lines()
    assert lines[0].startswith('cd "$(mktemp -d)"')
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # this farkle-logs
        "TMPDIR": str(tmp_path),  # mktemp -d: inside this test's folder
        "FARKLE_LOGS_CACHE_DIR": str(tmp_path / "cache"),
    }
    repository_before = sorted(p.name for p in ROOT.iterdir())
    elsewhere = tmp_path / "elsewhere"  # the folder the user starts in: not the repository
    elsewhere.mkdir()
    scratch = Path(
        subprocess.run(["bash", "-c", f"{lines[0]}\npwd"], cwd=elsewhere, env=env, capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    assert scratch.parent == tmp_path and scratch.is_dir()
    outputs = {}
    for line in lines[1:]:
        done = subprocess.run(["bash", "-c", line], cwd=scratch, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode in (0, 1), f"{line}\nexited {done.returncode}:\n{done.stderr[-2000:]}"
        outputs[line.split("#")[0].strip()] = done
    written = {p.name for p in scratch.iterdir()}
    assert {"samples", "games.jsonl.gz", "truth.jsonl", "data", "report.html"} <= written
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert sorted(p.name for p in ROOT.iterdir()) == repository_before
    assert "1050 = three 1s 1000" in outputs["farkle-logs score 1 1 1 5"].stdout
    disputed = next(v for k, v in outputs.items() if "--scoresheet samples/disputed_game" in k)
    assert (
        disputed.returncode == 1
        and "cross_roll_meld" in disputed.stdout
        and "rows of 1 game checked" in disputed.stdout
    )

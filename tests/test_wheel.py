"""The wheel is the product: built from the source, installed into a fresh virtualenv, it runs
the main job (simulate → ingest → audit → stats, every section → report) from outside the
repository, so nothing it needs may be read from beside the source tree.

The fresh virtualenv has no system site-packages and gets the wheel alone (`--no-deps`); its
dependencies come from this test run's own site-packages through a `.pth` line. That is
offline, takes a second instead of the minutes that reinstalling numba, pyarrow, duckdb and
polars would, and tests exactly the versions the rest of the suite tests. A path in a `.pth`
file is only appended to `sys.path` (the `.pth` files inside it are not run), so the
editable install of this checkout stays out of the fresh interpreter: a test asserts that
`pipeline` is imported from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What the build reads: the package, the stats layer at the top, the build configuration.
SOURCES = ("pipeline", "sql", "pyproject.toml", "setup.py", "README.md")
SECTIONS = (
    "bust",
    "turns",
    "decisions",
    "players",
    "dice",
    "decisions-quality",
    "ratings",
    "rating-history",
    "head-to-head",
    "trends",
)
GAMES = 40

pytestmark = pytest.mark.wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "farkle-logs"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    dist = work / "dist"
    # An absolute path: a bare directory name would be looked up on the package index.
    _ok([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(dist)])  # fmt: skip
    (built,) = dist.glob("farkle_logs-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The fresh virtualenv's bin directory, the wheel installed in it."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    _ok([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _ok([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)])
    site = Path(_ok([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = dict.fromkeys(sysconfig.get_paths()[kind] for kind in ("purelib", "platlib"))
    (site / "_farkle_logs_test_deps.pth").write_text("".join(f"{path}\n" for path in ours))
    return venv / "bin"


def _ok(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd[:4]} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_wheel_holds_every_file_read_at_run_time(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"pipeline/sql/{p.name}" for p in (ROOT / "sql").glob("*.sql")}
    wanted |= {f"pipeline/report/sql/{p.name}" for p in (ROOT / "pipeline/report/sql").glob("*.sql")}
    wanted |= {"pipeline/engines/spark/log4j2.properties", "pipeline/py.typed"}
    # the shipped two-player tables and the headlines `rules show` reads beside them
    wanted |= {f"pipeline/solved/data/{p.name}" for p in (ROOT / "pipeline/solved/data").glob("*.*")}
    assert {"pipeline/solved/data/standard.npz", "pipeline/solved/data/standard.json"} <= wanted
    assert len(wanted) > 40
    assert wanted - names == set()


def test_the_installed_wheel_runs_the_main_job(installed, tmp_path):
    cwd = tmp_path / "work"  # not the repository: nothing may come from beside the source tree
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["FARKLE_LOGS_CACHE_DIR"] = str(tmp_path / "cache")

    def run(*args: str, expect: int = 0) -> subprocess.CompletedProcess:
        done = subprocess.run([str(installed / "farkle-logs"), *args], cwd=cwd, env=env, capture_output=True, text=True)
        assert done.returncode == expect, f"{args} exited {done.returncode}, wanted {expect}:\n{done.stderr[-3000:]}"
        return done

    where = subprocess.run(
        [str(installed / "python"), "-c", "import pipeline; print(pipeline.__file__)"],
        cwd=cwd, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), where

    run("simulate", "--games", str(GAMES), "--players", "2-3", "--seed", "7", "--inject", "0.3",
        "--manifest", "truth.jsonl", "-o", "games.jsonl.gz")  # fmt: skip
    planted = {(r["game_id"], r["code"]) for r in map(json.loads, (cwd / "truth.jsonl").read_text().splitlines())}
    assert planted

    # The planted errors are findings (exit 1); one planted bad_event line is a reject.
    ingested = run("ingest", "games.jsonl.gz", "--out", "data", expect=1)
    assert ingested.stdout.split("\ngames")[1].split()[0] == str(GAMES), ingested.stdout

    audited = run("audit", "games.jsonl.gz", "--format", "jsonl", expect=1)
    found = {(r["game_id"], r["code"]) for r in map(json.loads, audited.stdout.splitlines())}
    assert found == planted

    for section in SECTIONS:
        out = json.loads(run("stats", "data", "--section", section, "--format", "json").stdout)
        assert out["tables"] and all(rows for rows in out["tables"].values()), (section, out)
        if section == "players":
            (overall,) = [row for row in out["tables"]["player_summary"] if row["scope"] == "overall"]
            assert overall["games"] == GAMES

    # exploring the dataset: the games, the stored findings (the audit's), a read-only query
    games = json.loads(run("games", "data", "--format", "json").stdout)
    assert len(games) == GAMES
    stored = json.loads(run("findings", "data", "--format", "json").stdout)
    assert {(r["game_id"], r["code"]) for r in stored if r["game_id"] is not None} == found
    (count,) = json.loads(run("sql", "data", "select count(*) as n from game_players", "--format", "json").stdout)
    assert count["n"] == sum(len(g["players"]) for g in games)

    run("report", "data", "-o", "report.html")
    page = (cwd / "report.html").read_text(encoding="utf-8")
    for heading in (
        "Overview",
        "Standings",
        "Rating over time",
        "Head to head",
        "Bust rate by dice left",
        "Decision quality",
        "Players",
        "Audit findings",
        "Player by player",
    ):
        assert f"<h2>{heading}" in page, heading
    assert page.rstrip().endswith("</html>")

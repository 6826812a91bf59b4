"""Every command is documented (sqlite-utils' lesson): the README tour names each one."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli.main import app

ROOT = Path(__file__).resolve().parent.parent


def command_names() -> list[str]:
    group = typer.main.get_command(app)
    return sorted(group.commands)


def test_every_command_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    names = command_names()
    assert {"ingest", "audit", "stats", "report", "score", "rules", "simulate"} <= set(names)
    missing = [n for n in names if f"farkle-logs {n}" not in readme]
    assert missing == []


def test_readme_shows_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme


def test_docs_linked_from_the_readme_exist():
    readme = (ROOT / "README.md").read_text()
    import re

    for link in re.findall(r"\]\((docs/[^)]+|schemas/[^)]+)\)", readme):
        path, _, anchor = link.partition("#")
        assert (ROOT / path).exists(), link
        if anchor:  # a heading of that file, as GitHub makes its anchor
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(encoding="utf-8"), re.M)
            anchors = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in anchors, link


def test_python_dash_m_runs_the_cli():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "score", "1", "1", "1", "5"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "1050" in result.stdout

"""Long commands show a progress bar on a terminal, and nothing when their stderr is piped.

Each command runs as the installed program with stderr on a pseudo terminal (the pty
module), stdout on a pipe: what reaches the terminal is searched for the bar's stage names
and its done/total. The same command piped prints no bar, and its stdout is the same.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import pytest

from pipeline.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
FARKLE = [sys.executable, "-m", "pipeline.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, what stderr's terminal showed, escape codes removed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # 160 columns
    out = tempfile.TemporaryFile()  # not a pipe: a full pipe would stall the program while this reads the terminal
    proc = subprocess.Popen(
        FARKLE + args,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=slave,
        env={**os.environ, **(env or {}), "TERM": "xterm"},
    )
    os.close(slave)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other side closed: the program is done
            break
        if not chunk:
            break
        shown += chunk
    code = proc.wait()
    os.close(master)
    out.seek(0)
    return code, out.read().decode(), ANSI.sub("", shown.decode(errors="replace")).replace("\r", "\n")


def piped(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(FARKLE + args, capture_output=True, text=True, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "games.jsonl"
    simulate(str(path), 150, 7, inject_rate=0.2)
    return path


@pytest.fixture(scope="module")
def dataset(log, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("progress-ds") / "ds"
    assert piped(["ingest", str(log), "--out", str(out)]).returncode in (0, 1)
    return out


BAR = re.compile(r"[━╸╺]")  # rich's bar


@pytest.mark.parametrize("replay", ["", "fast"])  # the path small inputs take, and the compiled one
def test_audit_shows_its_stage_and_total_on_a_terminal_only(log, replay):
    size = log.stat().st_size / 1e6
    code, out, shown = on_terminal(["audit", str(log), "-f", "json"], {"FARKLE_LOGS_REPLAY": replay})
    assert code == 1 and BAR.search(shown)
    assert re.search(rf"replaying games .* [\d.]+/{size:.1f} MB \d+%", shown), shown[-2000:]
    quiet = piped(["audit", str(log), "-f", "json"], {"FARKLE_LOGS_REPLAY": replay})
    assert quiet.returncode == 1 and quiet.stdout == out
    assert not BAR.search(quiet.stderr) and "replaying" not in quiet.stderr and "MB" not in quiet.stderr


def test_ingest_shows_reading_then_replaying(log, tmp_path):
    code, out, shown = on_terminal(["ingest", str(log), "--out", str(tmp_path / "a"), "-f", "json"])
    assert code in (0, 1) and BAR.search(shown)
    size = log.stat().st_size / 1e6
    assert re.search(rf"reading the logs .* [\d.]+/{size:.1f} MB \d+%", shown), shown[-2000:]
    events = json.loads(out)["events"]  # lines less the rejects
    assert re.search(rf"replaying games .* [\d,]+/{events:,} events \d+%", shown), shown[-2000:]
    assert "writing the snapshot" in shown
    quiet = piped(["ingest", str(log), "--out", str(tmp_path / "b"), "-f", "json"])
    assert not BAR.search(quiet.stderr) and "replaying" not in quiet.stderr
    assert out.count('"events"') == quiet.stdout.count('"events"') == 1


def test_stats_and_report_count_their_tables(dataset, tmp_path):
    code, _, shown = on_terminal(["stats", str(dataset), "--section", "decisions-quality", "-f", "json"])
    assert code == 0 and re.search(r"computing [a-z ]+ .* \d/\d tables \d+%", shown), shown[-2000:]
    assert "opening the dataset and solving its rulesets" in shown
    code, _, shown = on_terminal(["report", str(dataset), "-o", str(tmp_path / "r.html")])
    assert code == 0 and re.search(r"computing [a-z ]+ .* \d+/\d\d tables \d+%", shown), shown[-2000:]
    assert "drawing the charts" in shown
    for args in (["stats", str(dataset), "--section", "decisions-quality"], ["report", str(dataset), "-o", "-"]):
        args = args if args[-1] != "-" else [*args[:-1], str(tmp_path / "q.html")]
        quiet = piped(args)
        assert quiet.returncode == 0 and not BAR.search(quiet.stderr) and "tables" not in quiet.stderr


@pytest.mark.parametrize(
    "args, stage",
    [
        (["games"], "listing the games"),
        (["players"], "listing the players"),
        (["sql", "--", "select 1"], "running the query"),
    ],
)
def test_explore_commands_show_their_stage(dataset, args, stage):
    command = [args[0], str(dataset), *args[1:]]
    code, out, shown = on_terminal(command)
    assert code == 0 and re.search(rf"{stage} .* \d/\d (queries|steps)", shown), shown[-2000:]
    quiet = piped(command)
    assert quiet.stdout == out and stage not in quiet.stderr and not BAR.search(quiet.stderr)


def test_simulate_counts_games(tmp_path):
    code, _, shown = on_terminal(["simulate", "--games", "30", "--seed", "3", "--out", str(tmp_path / "s.jsonl")])
    assert code == 0 and re.search(r"simulating .* \d+/30 games \d+%", shown), shown[-2000:]


def test_done_and_time_texts():
    from pipeline.cli.common import done_text, time_text

    assert done_text(12_300_000, 74_000_000, "bytes") == "12.3/74.0 MB 17%"
    assert done_text(2_500_000_000, None, "bytes") == "2.5 GB"
    assert done_text(1204, 3000, "games") == "1,204/3,000 games 40%"
    assert done_text(0, None, "") == ""
    assert time_text(5.2, None, None) == "0:05"
    assert time_text(5.2, 61.6, 100) == "about 1:02 left"

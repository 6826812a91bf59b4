"""audit's text: never a broken word, in a file or on a narrow terminal, and its tables.

A referee greps the text an audit wrote to a file: a code split over two lines
(`missing_turn_en` / `d`) is a finding grep cannot see. Tables are drawn by `Listing`
(pipeline/cli/text.py), whose cells are never folded; message lines wrap at spaces only on
a terminal, and a word longer than the line stays whole.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.text import Listing, cell_width, rule_text, wrap
from tests.dataset_helpers import ROOT
from tests.gamelog import Log

LONG_NAME = "the_player_with_a_very_long_name_" + "x" * 30
LONG_GAME = "league-2024-spring-division-one-round-07-table-03-" + "g" * 20


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    """One game with lost turn ends of both kinds: after a keep (an implied bank) and after
    a roll that scored nothing (an implied farkle), each revealed by a six-dice roll of the
    next player (missing_turn_end), under a long game id and a long player name."""
    g = Log(game_id=LONG_GAME, players=(LONG_NAME, "bo"))
    g.roll(LONG_NAME, [1, 5, 2, 3, 4, 6]).keep(LONG_NAME, [1], 100)  # the bank line is lost
    g.roll("bo", [2, 2, 3, 3, 4, 6])  # ... and bo's roll scores nothing: the farkle line is lost
    g.roll(LONG_NAME, [1, 1, 1, 2, 3, 4]).keep(LONG_NAME, [1, 1, 1], 1000).bank(LONG_NAME, 1000, 1100)
    path = tmp_path_factory.mktemp("text") / "lost.jsonl"
    path.write_text("\n".join(g.lines) + "\n")
    return path


def audit(path: Path, *args: str, columns: int | None = None) -> str:
    env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "audit", str(path), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return proc.stdout.decode("utf-8")


@pytest.mark.parametrize("columns", [None, 30, 60])
def test_no_code_id_name_or_number_is_broken(log, columns):
    """Written to a file (no width), or on terminals 30 and 60 columns wide."""
    text = audit(log, columns=columns)
    findings = json.loads(audit(log, "-f", "json"))["findings"]
    lost = [f for f in findings if f["code"] == "missing_turn_end"]
    assert len(lost) == 2
    lines = text.splitlines()
    for f in lost:  # each finding's row of the timeline holds its seq and its whole code
        assert [line for line in lines if re.match(rf"\s*{f['seq']}\s.*\smissing_turn_end$", line)], f
    for word in (LONG_NAME, LONG_GAME, "bank (implied)", "farkle (implied)", "1100", "game_incomplete"):
        assert any(word in line for line in lines), word
    for line in lines:  # no line is the tail of a folded cell
        assert line.strip() not in ("d", "(implied)", "end", "ete")
    if columns is None:  # a file: one line per message, none wrapped
        for f in findings:
            assert any(line.strip() == f["message"] for line in lines)


def test_message_lines_wrap_at_spaces_on_a_terminal(log):
    text = audit(log, columns=40)
    findings = json.loads(audit(log, "-f", "json"))["findings"]
    joined = " ".join(line.strip() for line in text.splitlines())
    for f in findings:
        assert f["message"] in joined  # wrapped at spaces: joined again with one space, it is whole


def test_a_word_longer_than_the_line_stays_whole():
    lines = wrap(f"see {LONG_GAME} at line 5", 30, "  ", "    ")
    assert lines == ["  see", f"    {LONG_GAME}", "    at line 5"]


def test_listing_lays_out_like_the_plain_tables():
    table = Listing(("seq", True), ("player", False), ("finding", False), title="turns")
    table.add_row(7, "ana", None)
    table.add_section()
    table.add_row(12, "bo\x1b[31m", "cross_roll_meld", style="bold red")
    assert table.render() == (
        "turns\n"
        "seq  player      finding\n"
        "────────────────────────────────\n"
        "  7  ana\n"
        "\n"
        " 12  bo\\x1b[31m  cross_roll_meld\n"
    )
    colored = table.render(color=True)
    assert "\x1b[1;31m 12  bo\\x1b[31m  cross_roll_meld\x1b[0m" in colored and "\x1b[1m" in colored


def test_rules_centre_a_title_and_give_a_long_one_its_own_line():
    assert rule_text("summary", 21) == "────── summary ──────\n"
    assert rule_text("summary", 22) == "────── summary ───────\n"  # as rich: the odd one on the right
    long = rule_text(LONG_GAME, 40)
    assert long.splitlines() == ["─" * 40, LONG_GAME]
    wrapped = rule_text(f"game {LONG_GAME}: 2 findings", 40, wrap_width=40)
    assert wrapped.splitlines()[1:] == ["game", f"  {LONG_GAME}:", "  2 findings"]


def test_cell_width_counts_wide_characters_twice():
    assert cell_width("ana") == 3 and cell_width("名人") == 4 and cell_width("e\u0301") == 1

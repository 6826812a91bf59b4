"""Finding codes come from one registry (`pipeline.model.Code`) and nowhere else.

log-format.md's Findings table is transcribed once below; the registry is held to it, and
the engine, the fast kernel, the injector and the docs' tables are held to the registry, so
a code cannot exist in one of them and not in another.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from pipeline.dataset import batches
from pipeline.model import (
    FINDING_CODES,
    LOG_CODES,
    PRECEDENCE,
    SCORESHEET,
    WARNING_CODES,
    Code,
    severity_of,
)
from pipeline.simulate import INJECTABLE, NOT_INJECTABLE
from tests.gamelog import Log, audit

ROOT = Path(__file__).resolve().parent.parent

#: log-format.md, "Findings": the rows and their codes in precedence order, and the order in
#: which its text lists the codes (sheet codes from "Scoresheets").
SPEC_ROWS = {
    "any line": ["bad_json", "bad_event", "unknown_game", "seq_error", "play_after_game_over", "wrong_player"],
    "roll": ["missing_turn_end", "missed_farkle", "missing_keep", "wrong_dice_count"],
    "keep": ["missed_farkle", "kept_not_rolled", "non_scoring_kept", "cross_roll_meld", "scoring_error"],
    "bank": [
        "missed_farkle",
        "missing_keep",
        "cross_roll_meld",
        "bank_mismatch",
        "bank_below_opening",
        "bank_below_minimum",
        "total_mismatch",
    ],
    "farkle": ["false_farkle", "penalty_error"],
    "game_end": ["final_score_mismatch", "wrong_winner"],
    "end of input": ["missing_turn_end", "game_incomplete"],
    "scoresheet": ["sheet_points_mismatch", "sheet_total_mismatch", "sheet_extra_turn", "sheet_missing_turn"],
}


def test_the_registry_is_log_format_md():
    assert {row: [c.value for c in codes] for row, codes in PRECEDENCE.items()} == SPEC_ROWS
    assert set(FINDING_CODES) == {c for codes in SPEC_ROWS.values() for c in codes}
    assert len(FINDING_CODES) == len(set(FINDING_CODES)) == 27
    assert WARNING_CODES == {"game_incomplete"}  # "severity: error, except game_incomplete, a warning"
    assert severity_of("game_incomplete") == "warning" and severity_of(Code.SEQ_ERROR) == "error"
    assert Code.MISSED_FARKLE.rows == ("roll", "keep", "bank")
    assert all(code.rows for code in Code) and all(code.meaning for code in Code)


def test_codes_are_numbered_for_the_kernel_and_are_their_strings():
    assert [code.id for code in Code] == list(range(1, len(Code) + 1))  # 0 is "no code"
    assert Code("seq_error") is Code.SEQ_ERROR and Code.SEQ_ERROR == "seq_error"
    assert json.dumps([Code.BAD_JSON]) == '["bad_json"]' and f"{Code.BAD_JSON}" == "bad_json"


def test_findings_are_plain_strings_in_records_json_and_tables():
    log = Log()
    log.raw("{nope")
    log.roll("ana", [1, 2, 3, 4, 6, 6]).keep("ana", [1], 200).bank("ana", 200, 200)
    out = audit(log)
    assert [f.code for f in out.findings] == ["bad_json", "scoring_error", "bank_below_opening", "game_incomplete"]
    assert all(type(f.code) is str and type(f.severity) is str for f in out.findings)
    table = batches.findings_table(out.findings)
    assert str(table.schema.field("code").type) == "string"
    assert table.column("code").to_pylist() == [f.code for f in out.findings]


def _markdown_table(text: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _codes_in(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def test_docs_audit_md_tables_are_the_registry():
    text = (ROOT / "docs" / "audit.md").read_text()
    rows = _markdown_table(text, "| row | codes, in precedence order |")
    assert {row: _codes_in(codes) for row, codes in rows} == SPEC_ROWS
    meanings = _markdown_table(text, "| code | severity | meaning |")
    assert meanings == [[f"`{c.value}`", c.severity, c.meaning] for c in Code]
    examples = _markdown_table(text, "| code | example |")
    assert [_codes_in(code)[0] for code, _ in examples] == [c.value for c in LOG_CODES]


def test_docs_simulate_md_lists_the_injectable_codes():
    text = (ROOT / "docs" / "simulate.md").read_text()
    planted = _markdown_table(text, "| code | what is done to the log")
    assert [_codes_in(code)[0] for code, _ in planted] == list(INJECTABLE)
    assert set(INJECTABLE) | set(NOT_INJECTABLE) == set(FINDING_CODES)
    assert set(NOT_INJECTABLE) == {c.value for c in Code if SCORESHEET in c.rows}
    not_injectable = text[text.index("Not injectable:") :].split(".")[0]
    assert set(_codes_in(not_injectable)) == set(NOT_INJECTABLE)


def _codes_named(*paths: str) -> set[Code]:
    """The members `Code.X` that these source files name."""
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Code":
                found.add(Code[node.attr])  # a name that is not a member fails here
    return found


def test_the_reference_engine_gives_every_log_code():
    """bad_json and bad_event are the reader's (a BadLine carries them); every other code of
    a log has its place in the engine."""
    assert _codes_named("pipeline/replay/engine.py") == set(LOG_CODES) - {Code.BAD_JSON, Code.BAD_EVENT}


def test_the_fast_path_gives_up_with_every_log_code():
    """Every code the reference can give a game has a place where the fast path gives the
    game up with that code (the kernel, or the runner for what the kernel cannot see), so a
    new code without one fails here instead of the fast audit calling such a game clean.
    The exceptions are the reader's codes (bad lines never reach the kernel) and
    cross_roll_meld, which the kernel records as the wrong claim it sees (scoring_error,
    bank_mismatch)."""
    named = _codes_named("pipeline/replay/fast/kernel.py", "pipeline/replay/fast/runner.py")
    assert named == set(LOG_CODES) - {Code.BAD_JSON, Code.BAD_EVENT, Code.CROSS_ROLL_MELD}


def test_the_scoresheet_codes_are_the_scoresheet_row():
    assert {code for code in Code if code not in LOG_CODES} == set(PRECEDENCE[SCORESHEET])

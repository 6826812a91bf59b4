"""Fuzz targets: bytes in, and an exception out only when the tool is wrong.

Each target feeds one entry point of the input side and checks what must hold for any
input: nothing raises but the tool's own errors (RulesetError for a ruleset, the documented
UnicodeDecodeError of a scoresheet that is not UTF-8), and where a simple reference exists
the result is compared with it (line splitting, fast path against reference check, the line
invariant of the audit). `run.py` drives them with atheris (coverage-guided) or hypothesis.

Targets stay cheap per input (no solver, no Parquet) so a short budget still explores.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import msgspec

from pipeline.audit.run import audit_stream
from pipeline.reader.inputs import InputSource
from pipeline.model import BadLine, Event
from pipeline.reader import LongLine, iter_lines, parse_line, read_events
from pipeline.reader.validate import check_object
from pipeline.rules import Ruleset, RulesetError, score_keep
from pipeline.reader.rules_source import load_ruleset, load_ruleset_file
from pipeline.audit.scoresheet import compare_sheet, parse_sheet

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
_RULESET_DIR = Path(tempfile.mkdtemp(prefix="farkle-fuzz-"))
atexit.register(shutil.rmtree, _RULESET_DIR, True)


# ---- the line reader ---------------------------------------------------------------------
def reference_lines(data: bytes, limit: int) -> list[tuple[int, object]]:
    """log-format.md's line rules, the slow and obvious way (plain input, no BOM)."""
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    out = []
    for number, raw in enumerate(pieces, start=1):
        if len(raw) > limit:
            out.append((number, ("long", len(raw))))
        elif raw and not raw.isspace():
            out.append((number, raw))
    return out


def lines(data: bytes) -> None:
    """Bytes as a file, plain or gzip (the first byte picks the line limit and the form)."""
    if not data:
        return
    limit = 1 + data[0] % 64
    body = data[1:]
    src = InputSource("<fuzz>", stream=io.BytesIO(body))
    got = []
    for number, raw in iter_lines(src, limit):
        if type(raw) is LongLine:
            assert raw.size > limit and raw == b"", raw
            got.append((number, ("long", raw.size)))
        else:
            assert 0 < len(raw) <= limit and not raw.isspace(), raw
            got.append((number, raw))
    numbers = [n for n, _ in got]
    assert numbers == sorted(set(numbers)), numbers
    assert src.lines >= (numbers[-1] if numbers else 0)
    assert src.raw_bytes == len(body)
    if src.gzip:
        assert src.sha256 is not None or src.problem is not None
        return
    assert src.problem is None, src.problem
    text = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
    assert got == reference_lines(text, limit), (got, reference_lines(text, limit))


# ---- the event validator -----------------------------------------------------------------
def event(data: bytes) -> None:
    """One line: an Event, a BadLine or None (blank); the fast path agrees with the reference."""
    result = parse_line(data, "fuzz.jsonl", 7)
    if result is None:
        assert not data.strip(), data
        return
    assert type(result) in (Event, BadLine), result
    assert (result.file, result.line) == ("fuzz.jsonl", 7)
    if type(result) is BadLine:
        assert result.code in ("bad_json", "bad_event") and result.reason, result
        return
    obj = msgspec.json.decode(data)  # it parsed, so it decodes
    reference = check_object(obj, data, "fuzz.jsonl", 7)
    assert type(reference) is Event, reference
    for field in (
        "game_id",
        "seq",
        "type",
        "ts",
        "player",
        "dice",
        "points",
        "total",
        "players",
        "rules",
        "winner",
        "scores",
        "extra",
        "turn_points",
        "reason",
    ):
        assert getattr(result, field) == getattr(reference, field), field


# ---- ingest's splitter and bulk parse ---------------------------------------------------------
def block(data: bytes) -> None:
    """Bytes as a plain file, through ingest's stages 1-2: the splitter numbers the lines as
    the reference does (blocks read back from the file as a worker reads them), and the
    bulk parse (compiled scan, msgspec, reference) gives the reference's events and bad
    lines. The first byte picks the line limit."""
    from pipeline.reader.split import split_source
    from tests.test_ingest_parse import assert_same  # parse_block against the reference

    if not data:
        return
    limit = 1 + data[0] % 256
    body = data[1:]
    path = _RULESET_DIR / "block.jsonl"
    path.write_bytes(body)
    text = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
    want = [(n, ("long", None)) if type(r) is tuple else (n, r) for n, r in reference_lines(text, limit)]
    # blocks of one read each, then blocks ended by their count of lines (1 to 5)
    for block_bytes, block_lines in ((1, 1 << 16), (1 << 20, 1 + data[0] % 5)):
        got = []
        for piece in split_source(InputSource(str(path), path=path), 0, block_bytes, limit, block_lines):
            assert piece.detached().attached() == piece
            assert piece.lines <= 2 * block_lines + len(piece.long_lines) or block_bytes == 1
            got += [(b.line, ("long", None)) for b in piece.long_lines]
            for i, raw in enumerate(piece.data.split(b"\n")[:-1]):
                if len(raw) > limit:  # a line over the cap inside a block: parse_block rejects it
                    got.append((piece.first_line + i, ("long", None)))
                elif raw and not raw.isspace():
                    got.append((piece.first_line + i, raw))
            assert_same(piece.data.split(b"\n")[:-1], str(path), piece.first_line)
        assert got == want, (got, want)


# ---- the ruleset parser ------------------------------------------------------------------
def _checked(ruleset: Ruleset) -> None:
    assert Ruleset.from_value(ruleset.to_dict()) == ruleset
    assert Ruleset.from_value(json.loads(ruleset.to_json())) == ruleset
    for dice in ((1, 1, 1), (1, 2, 3, 4, 5, 6)):
        points = score_keep(list(dice), ruleset)
        assert points is None or 0 <= points <= 8 * 100_000 * 6, (dice, points)


def ruleset(data: bytes) -> None:
    """Bytes as inline --rules text, as a .json and a .toml file, and (if JSON) as a value."""
    text = data.decode("utf-8", "replace")
    for load in (lambda: Ruleset.from_json_text(text), lambda: load_ruleset(text)):
        try:
            _checked(load())
        except RulesetError:
            pass
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        value = None
    if value is not None:
        try:
            _checked(Ruleset.from_value(value))
        except RulesetError:
            pass
    for suffix in (".json", ".toml"):
        path = _RULESET_DIR / f"r{os.getpid()}{suffix}"
        path.write_bytes(data)
        try:
            _checked(load_ruleset_file(path))
        except RulesetError:
            pass


# ---- a whole audit -----------------------------------------------------------------------
def audit(data: bytes) -> None:
    """A short log audited through the library: every bad line gets its finding."""
    src = InputSource("<fuzz>", stream=io.BytesIO(data))
    items = list(read_events([src], max_line_bytes=4096))
    report = audit_stream(iter(items), trace=True)
    bad = sum(1 for i in items if type(i) is BadLine)
    own = sum(1 for f in report.findings if f.code in ("bad_json", "bad_event"))
    assert own == bad, (own, bad)
    assert report.events == sum(1 for i in items if type(i) is Event)
    for f in report.findings:
        assert f.file == "<fuzz>" and f.code and f.severity in ("error", "warning"), f
    from pipeline.cli.audit_render import as_csv, as_json

    assert len(json.loads(as_json(report))["findings"]) == len(report.findings)
    as_csv(report)
    with _tiny_limits():  # game states, results, timelines and findings all on disk: the same report
        spilled = audit_stream(iter(items), trace=True)
    assert as_json(spilled) == as_json(report)
    assert _text(spilled) == _text(report)
    spilled.close()
    report.close()


@contextlib.contextmanager
def _tiny_limits():
    from pipeline.audit import finding_store
    from pipeline.audit.game_stores import GameStore, Timelines
    from pipeline.replay import Replayer

    saved = (finding_store.LIMIT, finding_store.DRAIN, finding_store.MAX_RUNS)
    defaults = [(f, dict(f.__kwdefaults__)) for f in (Replayer.__init__, GameStore.__init__, Timelines.__init__)]
    finding_store.LIMIT, finding_store.DRAIN, finding_store.MAX_RUNS = 3, 2, 2
    Replayer.__init__.__kwdefaults__["max_games"] = 2
    GameStore.__init__.__kwdefaults__["held"] = 2
    Timelines.__init__.__kwdefaults__["held"] = 1
    try:
        yield
    finally:
        finding_store.LIMIT, finding_store.DRAIN, finding_store.MAX_RUNS = saved
        for function, kwdefaults in defaults:
            function.__kwdefaults__ = kwdefaults


def _text(report) -> str:
    from types import SimpleNamespace

    from pipeline.cli.audit_render import print_text

    buffer = io.StringIO()
    print_text(report, SimpleNamespace(stream=buffer, color=False))  # type: ignore[arg-type]
    return buffer.getvalue()


# ---- the scoresheet parser ---------------------------------------------------------------
_DISPUTED = None


def _disputed():
    """The replayed turns of sample_logs/disputed_game.jsonl, once."""
    global _DISPUTED
    if _DISPUTED is None:
        from pipeline.replay import Replayer

        src = InputSource(str(SAMPLES / "disputed_game.jsonl"), path=SAMPLES / "disputed_game.jsonl")
        replayer = Replayer(None, records=True)
        for item in read_events([src]):
            replayer.feed(item)
        replayer.finish()
        out = replayer.drain()
        _DISPUTED = (out.turns, [g.game_id for g in out.games])
    return _DISPUTED


def scoresheet(data: bytes) -> None:
    """A scoresheet CSV checked against the disputed sample game."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return  # the CLI reports it: "cannot read scoresheet …" (exit 2)
    rows, problems = parse_sheet(text, "sheet.csv")
    for p in problems:
        assert p.line >= 1 and p.reason, p
    turns, games = _disputed()
    findings = compare_sheet(rows, turns, games, "sheet.csv")
    for f in findings:
        assert f.code.startswith("sheet_"), f


TARGETS = {"lines": lines, "event": event, "block": block, "ruleset": ruleset, "audit": audit, "scoresheet": scoresheet}


# ---- seed corpus -------------------------------------------------------------------------
def seeds(target: str) -> list[bytes]:
    """Starting inputs from sample_logs/: whole short logs, single lines, rulesets, sheets."""
    logs = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".jsonl", ".gz"))
    text_lines = [line for p in logs if p.suffix == ".jsonl" for line in p.read_bytes().splitlines()]
    if target == "lines":
        return [bytes([n]) + b"\n".join(text_lines[i : i + 6]) for n, i in ((20, 0), (63, 40), (5, 300))] + [
            b"\x10" + (SAMPLES / "more_games.jsonl.gz").read_bytes()[:3000]
        ]
    if target == "block":
        return [bytes([n]) + b"\n".join(text_lines[i : i + 12]) for n, i in ((255, 0), (200, 40), (90, 300))]
    if target == "event":
        kinds: dict[bytes, bytes] = {}
        for line in text_lines:  # one line of each kind, and every line of bad_lines.jsonl
            kinds.setdefault(line.split(b'"type":')[-1][:12], line)
        return list(kinds.values()) + (SAMPLES / "bad_lines.jsonl").read_bytes().splitlines()[:80]
    if target == "ruleset":
        found = {
            b'"standard"',
            b'{"base": "playmonster", "n_of_a_kind": "linear", "split_kinds": false}',
            b'{"partial_straights": {"12345": 500, "23456": 750}, "three_pairs": null}',
            b'base = "playmonster"\nsix_kind = 10000\n[partial_straights]\n"12345" = 500\n',
        }
        for line in text_lines:
            if b'"game_start"' in line:
                try:
                    found.add(json.dumps(json.loads(line)["rules"]).encode())
                except (ValueError, KeyError):
                    pass
        return sorted(found)
    if target == "audit":
        return [b"\n".join(p.read_bytes().splitlines()[:40]) for p in logs if p.suffix == ".jsonl"]
    if target == "scoresheet":
        sheet = (SAMPLES / "disputed_game.scoresheet.csv").read_bytes()
        return [sheet, b"\n".join(sheet.splitlines()[:8])]
    raise KeyError(target)

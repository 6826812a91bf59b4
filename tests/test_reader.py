"""The reader: one line → Event/BadLine (parse_line), and files → numbered lines (iter_lines).

Expected values are written out by hand from log-format.md, not computed by the reader.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sys
import zlib

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.reader.inputs import InputSource
from pipeline.model import BadLine, Event, FileProblem
from pipeline.reader import lines as lines_module
from pipeline.reader import parse_line, read_events, read_lines
from pipeline.reader.validate import check_object
from pipeline.rules import Ruleset


def enc(obj) -> bytes:
    return json.dumps(obj).encode()


def ev(kind: str, **fields) -> dict:
    return {"game_id": "g1", "seq": 4, "type": kind, **fields}


VALID = {
    "game_start": ev("game_start", players=["ana", "bo"]),
    "roll": ev("roll", player="ana", dice=[1, 5, 2, 3, 4, 6]),
    "keep": ev("keep", player="ana", dice=[1, 5], points=150),
    "bank": ev("bank", player="ana", points=750, total=750),
    "farkle": ev("farkle", player="bo"),
    "game_end": ev("game_end", winner="ana", scores={"ana": 10050, "bo": 800}),
}


def parse(obj_or_raw, file="log.jsonl", line=7):
    raw = obj_or_raw if isinstance(obj_or_raw, bytes) else enc(obj_or_raw)
    return parse_line(raw, file, line)


def reference(raw: bytes, file="log.jsonl", line=7):
    """The slow path on its own, to hold the fast path to it."""
    return check_object(msgspec.json.decode(raw), raw, file, line)


# ---- valid events --------------------------------------------------------------------------
def test_log_format_example_reads_as_events():
    text = b"""\
{"game_id":"g1","seq":1,"type":"game_start","players":["ana","bo"],"rules":"standard"}
{"game_id":"g1","seq":2,"type":"roll","player":"ana","dice":[1,5,2,3,4,6]}
{"game_id":"g1","seq":3,"type":"keep","player":"ana","dice":[1,5],"points":150}
{"game_id":"g1","seq":4,"type":"roll","player":"ana","dice":[6,6,6,2]}
{"game_id":"g1","seq":5,"type":"keep","player":"ana","dice":[6,6,6],"points":600}
{"game_id":"g1","seq":6,"type":"bank","player":"ana","points":750,"total":750}
{"game_id":"g1","seq":7,"type":"roll","player":"bo","dice":[2,2,3,3,4,6]}
{"game_id":"g1","seq":8,"type":"farkle","player":"bo"}
"""
    records = [parse_line(raw, "ex.jsonl", n) for n, raw in enumerate(text.splitlines(), 1)]
    assert all(type(r) is Event for r in records)
    assert [r.seq for r in records] == list(range(1, 9))
    assert [r.line for r in records] == list(range(1, 9))
    start = records[0]
    assert start.players == ("ana", "bo")
    assert start.rules == Ruleset.builtin("standard") and start.rules_raw == "standard"
    assert records[1].dice == (1, 5, 2, 3, 4, 6) and records[1].player == "ana"
    assert (records[2].dice, records[2].points) == ((1, 5), 150)
    assert (records[5].points, records[5].total) == (750, 750)
    assert records[7].total is None and records[7].type == "farkle"


def test_every_field_lands_where_the_model_says():
    e = parse(ev("bank", player="ana", points=-50, total=-300, ts="2026-01-02T03:04:05.25+01:00"))
    assert e == Event(
        "g1", 4, "bank", "log.jsonl", 7, ts="2026-01-02T03:04:05.25+01:00", player="ana", points=-50, total=-300
    )
    end = parse(ev("game_end", winner=["ana", "bo"], scores={"ana": 10000, "bo": 10000}))
    assert end.winner == ("ana", "bo") and end.scores == {"ana": 10000, "bo": 10000}
    assert parse(VALID["game_end"]).winner == "ana"
    assert parse(ev("farkle", player="bo", total=-500)).total == -500
    start = parse(VALID["game_start"])
    assert start.rules is None and start.rules_raw is None


def test_ruleset_object_is_validated_and_kept_raw():
    raw_rules = {"base": "playmonster", "n_of_a_kind": "doubling", "opening": 1000}
    e = parse(ev("game_start", players=["ana"], rules=raw_rules))
    assert e.rules == Ruleset.from_value(raw_rules)
    assert e.rules.three_ones == 300 and e.rules.opening == 1000
    assert e.rules_raw == raw_rules


def test_json_schema_integers_3_point_0_is_3():
    e = parse(ev("keep", seq=3.0, player="ana", dice=[1.0, 5], points=150.0))
    assert type(e) is Event
    assert e.seq == 3 and type(e.seq) is int
    assert e.dice == (1, 5) and all(type(d) is int for d in e.dice)
    assert e.points == 150 and type(e.points) is int
    end = parse(ev("game_end", winner="ana", scores={"ana": 1e3}))
    assert end.scores == {"ana": 1000} and type(end.scores["ana"]) is int


def test_unknown_and_foreign_fields_go_to_extra_untouched():
    e = parse(
        ev(
            "roll",
            player="ana",
            dice=[1],
            points="not checked here",
            total=None,
            note={"deep": [1, 2.5, None]},
            winner=7,
        )
    )
    assert type(e) is Event
    assert e.points is None and e.total is None and e.winner is None
    assert e.extra == {"points": "not checked here", "total": None, "note": {"deep": [1, 2.5, None]}, "winner": 7}
    start = parse(ev("game_start", players=["ana"], player="ana"))
    assert start.player is None and start.extra == {"player": "ana"}


def test_duplicate_keys_keep_the_last_like_every_json_parser():
    raw = b'{"game_id":"g1","seq":1,"seq":2,"type":"farkle","player":"bo"}'
    assert parse(raw).seq == 2
    assert parse(raw) == reference(raw)


# ---- bad_event: every reason of log-format.md, each naming its field ---------------------------
BAD_EVENTS = [
    # (line object, words the reason must contain, game_id, seq, player)
    (ev("keep", player="ana", dice=[1, 7], points=150), "die 7 in 'dice' is outside 1..6", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=[0]), "die 0 in 'dice' is outside 1..6", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=[1, True]), "die true in 'dice' is not an integer", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=[2.5]), "die 2.5 in 'dice' is not an integer", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=["1"]), "die '1' in 'dice' is not an integer", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=[]), "'dice' is empty", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=[1] * 7), "'dice' has 7 dice", "g1", 4, "ana"),
    (ev("roll", player="ana", dice=5), "'dice' must be a list", "g1", 4, "ana"),
    (ev("keep", player="ana", dice=[1, 5]), "missing field 'points' for a keep", "g1", 4, "ana"),
    (ev("keep", player="ana", dice=[1, 5], points="150"), "'points' must be an integer, got '150'", "g1", 4, "ana"),
    (ev("keep", player="ana", dice=[1, 5], points=True), "'points' must be an integer, got true", "g1", 4, "ana"),
    (ev("keep", player="ana", dice=[1, 5], points=150.5), "'points' must be an integer, got 150.5", "g1", 4, "ana"),
    (ev("roll", player="ana"), "missing field 'dice' for a roll", "g1", 4, "ana"),
    (ev("roll", dice=[1]), "missing field 'player' for a roll", "g1", 4, None),
    (ev("roll", player=3, dice=[1]), "'player' must be a non-empty string, got 3", "g1", 4, None),
    (ev("roll", player="", dice=[1]), "'player' must be a non-empty string", "g1", 4, None),
    (ev("bank", player="ana", points=750), "missing field 'total' for a bank", "g1", 4, "ana"),
    (ev("bank", player="ana", points=750, total=None), "'total' must be an integer, got null", "g1", 4, "ana"),
    (ev("bank", player="ana", points=2**63, total=0), "'points' must be an integer", "g1", 4, "ana"),
    (ev("farkle", player="bo", total="0"), "'total' must be an integer", "g1", 4, "bo"),
    (ev("farkle"), "missing field 'player' for a farkle", "g1", 4, None),
    (ev("rol", player="ana", dice=[1]), "unknown type 'rol'", "g1", 4, "ana"),
    (ev(7, player="ana"), "unknown type 7", "g1", 4, "ana"),
    (ev(["roll"], player="ana"), "unknown type [\"roll\"]", "g1", 4, "ana"),
    ({"game_id": "g1", "seq": 4, "player": "ana"}, "missing field 'type'", "g1", 4, "ana"),
    ({"seq": 4, "type": "farkle", "player": "bo"}, "missing field 'game_id'", None, 4, "bo"),
    (ev("farkle", game_id="", player="bo"), "'game_id' must be a non-empty string", None, 4, "bo"),
    (ev("farkle", game_id=12, player="bo"), "'game_id' must be a non-empty string, got 12", None, 4, "bo"),
    ({"game_id": "g1", "type": "farkle", "player": "bo"}, "missing field 'seq'", "g1", None, "bo"),
    # a bad line keeps its seq whenever it is a JSON integer, 0 and negative ones too (log-format.md)
    (ev("farkle", seq=0, player="bo"), "'seq' must be an integer >= 1, got 0", "g1", 0, "bo"),
    (ev("farkle", seq=-3, player="bo"), "'seq' must be an integer >= 1", "g1", -3, "bo"),
    (ev("farkle", seq="4", player="bo"), "'seq' must be an integer >= 1, got '4'", "g1", None, "bo"),
    (ev("farkle", seq=True, player="bo"), "'seq' must be an integer >= 1, got true", "g1", None, "bo"),
    (ev("farkle", seq=4.5, player="bo"), "'seq' must be an integer >= 1, got 4.5", "g1", None, "bo"),
    (ev("farkle", player="bo", ts="2026-01-02T03:04:05"), "'ts' is not an RFC 3339 date-time", "g1", 4, "bo"),
    (ev("farkle", player="bo", ts="2026-01-02T03:04:05"), "'ts' is not an RFC 3339", "g1", 4, "bo"),
    (ev("farkle", player="bo", ts="2026-02-30T03:04:05Z"), "'ts' is not an RFC 3339", "g1", 4, "bo"),
    (ev("farkle", player="bo", ts="yesterday"), "'ts' is not an RFC 3339", "g1", 4, "bo"),
    (ev("farkle", player="bo", ts=1767225600), "'ts' is not an RFC 3339", "g1", 4, "bo"),
    (ev("farkle", player="bo", ts=None), "'ts' is not an RFC 3339", "g1", 4, "bo"),
    (ev("game_start"), "missing field 'players' for a game_start", "g1", 4, None),
    (ev("game_start", players=[]), "'players' must be a non-empty list", "g1", 4, None),
    (ev("game_start", players="ana"), "'players' must be a non-empty list", "g1", 4, None),
    (ev("game_start", players=["ana", "bo", "ana"]), "'players' names 'ana' twice", "g1", 4, None),
    (ev("game_start", players=["ana", ""]), "each name in 'players' must be a non-empty string", "g1", 4, None),
    (ev("game_start", players=["ana", 2]), "each name in 'players' must be a non-empty string, got 2", "g1", 4, None),
    (ev("game_start", players=["ana"], rules="house"), "invalid 'rules': unknown ruleset 'house'", "g1", 4, None),
    (
        ev("game_start", players=["ana"], rules={"base": "standard", "jokers": 2}),
        "invalid 'rules': unknown knob 'jokers'",
        "g1",
        4,
        None,
    ),
    (ev("game_start", players=["ana"], rules={"opening": -5}), "invalid 'rules': knob 'opening'", "g1", 4, None),
    (ev("game_start", players=["ana"], rules={"n_of_a_kind": "tripling"}), "knob 'n_of_a_kind'", "g1", 4, None),
    (ev("game_start", players=["ana"], rules=None), "invalid 'rules'", "g1", 4, None),
    (ev("game_start", players=["ana"], rules=5), "invalid 'rules'", "g1", 4, None),
    (ev("game_end", scores={"ana": 1}), "missing field 'winner' for a game_end", "g1", 4, None),
    (ev("game_end", winner="ana"), "missing field 'scores' for a game_end", "g1", 4, None),
    (ev("game_end", winner=[], scores={}), "'winner' is an empty list", "g1", 4, None),
    (ev("game_end", winner=5, scores={}), "'winner' must be a non-empty string or a list of names", "g1", 4, None),
    (ev("game_end", winner=["ana", 5], scores={}), "each name in 'winner'", "g1", 4, None),
    (ev("game_end", winner="ana", scores=[["ana", 1]]), "'scores' must be an object", "g1", 4, None),
    (ev("game_end", winner="ana", scores={"ana": "10"}), "'scores' value for 'ana' must be an integer", "g1", 4, None),
    (ev("game_end", winner="ana", scores={"": 10}), "'scores' has an empty player name", "g1", 4, None),
]


@pytest.mark.parametrize("obj, words, game_id, seq, player", BAD_EVENTS, ids=[words for _, words, *_ in BAD_EVENTS])
def test_bad_event_reason_names_the_field(obj, words, game_id, seq, player):
    raw = enc(obj)
    bad = parse_line(raw, "log.jsonl", 7)
    assert type(bad) is BadLine
    assert bad.code == "bad_event"
    assert words in bad.reason
    assert (bad.file, bad.line) == ("log.jsonl", 7)
    assert (bad.game_id, bad.seq, bad.player) == (game_id, seq, player)
    assert bad.raw == raw.decode()
    assert bad == reference(raw)


@pytest.mark.parametrize(
    "raw, kind",
    [(b"[1, 2]", "array"), (b'"roll"', "string"), (b"42", "number"), (b"null", "null"), (b"true", "boolean")],
)
def test_a_json_value_that_is_not_an_object_is_bad_event(raw, kind):
    bad = parse(raw)
    assert (bad.code, bad.game_id, bad.seq, bad.player) == ("bad_event", None, None, None)
    assert f"a JSON {kind} is not an event" in bad.reason


# ---- bad_json ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, words",
    [
        (b'{"game_id":"g1","seq":1,"type":"keep","player":"a","dice":[1],"points":NaN}', "NaN is not a JSON number"),
        (
            b'{"game_id":"g1","seq":1,"type":"bank","player":"a","points":Infinity,"total":1}',
            "Infinity is not a JSON number",
        ),
        (b'{"game_id":"g1","seq":-Infinity}', "-Infinity is not a JSON number"),
        (b'{"game_id":"g1","seq":1,"type":"farkle","player":"a"} trailing', "trailing characters"),
        (b'{"game_id":"g1","seq":1,"type":"farkle","player":"a"}{"x":1}', "trailing characters"),
        (b'{"game_id":"g1","seq":1,', "ends in the middle of a value"),
        (b"{'game_id': 'g1'}", "not valid JSON"),
        (b'{"game_id":"g1","seq":1,"type":"farkle","player":"a",}', "not valid JSON"),
        (b'{"seq": 1e999}', "too large"),
        (b"farkle happened", "not valid JSON"),
    ],
)
def test_not_strict_json_is_bad_json(raw, words):
    bad = parse(raw)
    assert type(bad) is BadLine and bad.code == "bad_json"
    assert bad.reason.startswith("not valid JSON: ") and words in bad.reason
    assert (bad.game_id, bad.seq, bad.player) == (None, None, None)
    assert bad.raw == raw.decode()


def test_invalid_utf8_is_bad_json_that_says_so_and_keeps_the_text():
    raw = b'{"game_id":"g1","seq":1,"type":"farkle","player":"b\xf6"}'
    bad = parse(raw)
    assert bad.code == "bad_json" and "invalid UTF-8" in bad.reason and "0xf6" in bad.reason
    assert bad.raw == '{"game_id":"g1","seq":1,"type":"farkle","player":"b\ufffd"}'
    # bad UTF-8 outside a string, and an encoded surrogate, are just as invalid
    assert "invalid UTF-8" in parse(b'{"a":1}\xff').reason
    assert "invalid UTF-8" in parse(b'{"a":"\xed\xa0\x80"}').reason


def test_text_lines_are_accepted_too():
    assert parse_line(enc(VALID["roll"]).decode(), "f", 1) == parse(VALID["roll"], "f", 1)
    assert parse_line('{"seq": NaN}', "f", 1).reason == "not valid JSON: NaN is not a JSON number (byte 8)"
    bad = parse_line('{"game_id":"g1","seq":1,"type":"rol"}\r\n', "f", 1)
    assert bad.code == "bad_event" and bad.raw == '{"game_id":"g1","seq":1,"type":"rol"}'
    assert parse_line("  ", "f", 1) is None


@pytest.mark.parametrize("raw", [b"", b" ", b"\t  ", b"\r", b"  \r\n"])
def test_blank_line_is_nothing(raw):
    assert parse_line(raw, "f", 1) is None


def test_crlf_and_surrounding_spaces_are_fine():
    assert type(parse(enc(VALID["roll"]) + b"\r")) is Event
    assert type(parse(b"  " + enc(VALID["roll"]) + b"\t")) is Event


# ---- the fast path never decides differently from the reference ------------------------------
SAMPLES = (
    [enc(obj) for obj in VALID.values()]
    + [enc(obj) for obj, *_ in BAD_EVENTS]
    + [
        enc(ev("game_start", players=["ana"], rules={"base": "standard", "partial_straights": {"12345": 500}})),
        enc(ev("roll", player="ana", dice=[6] * 6, ts="2024-02-29T23:59:59.999999Z")),
        enc(ev("roll", player="ana", dice=[6] * 6, ts="2026-01-02T03:04:05z")),
        enc(ev("roll", player="ana", dice=[6] * 6, ts="2026-01-02T03:04:05Z\n")),
        enc(ev("bank", player="ana", points=2**63 - 1, total=-(2**63))),
        enc(ev("bank", player="ana", points=0, total=-(2**63) - 1)),
        enc(ev("farkle", player="bo", extra_field=1)),
        enc(ev("game_end", winner=["ana"], scores={})),
    ]
)


@pytest.mark.parametrize("raw", SAMPLES)
def test_fast_path_agrees_with_the_reference(raw):
    assert parse(raw) == reference(raw)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(list(VALID)), data=st.data())
def test_fast_path_agrees_with_the_reference_on_mutated_events(kind, data):
    obj = dict(VALID[kind])
    values = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 8),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=3),
        st.lists(st.integers(0, 7), max_size=8),
        st.sampled_from(["2026-01-02T03:04:05Z", "standard", "ana", "roll"]),
    )
    for key in data.draw(st.lists(st.sampled_from(sorted(obj) + ["ts", "rules", "total", "x"]), max_size=3)):
        if data.draw(st.booleans()):
            obj.pop(key, None)
        else:
            obj[key] = data.draw(values)
    raw = enc(obj)
    assert parse(raw) == reference(raw)


# ---- reading files ---------------------------------------------------------------------------
def source_for(path) -> InputSource:
    return InputSource(str(path), path=path)


def lines_of(source: InputSource) -> list[tuple[int, bytes]]:
    return list(lines_module.iter_lines(source))


ROLL = enc(VALID["roll"])
FARKLE = enc(VALID["farkle"])


def test_blank_lines_are_skipped_but_numbered_and_counted(tmp_path):
    data = b"\n" + ROLL + b"\n   \n\t\r\n" + FARKLE + b"\n\n"
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    src = source_for(path)
    assert lines_of(src) == [(2, ROLL), (5, FARKLE)]
    assert (src.lines, src.blank_lines) == (6, 4)
    assert (src.raw_bytes, src.data_bytes) == (len(data), len(data))
    assert src.sha256 == hashlib.sha256(data).hexdigest()
    assert src.gzip is False and src.problem is None


def test_last_line_without_newline_is_read(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(ROLL + b"\n" + FARKLE)
    src = source_for(path)
    assert lines_of(src) == [(1, ROLL), (2, FARKLE)]
    assert src.lines == 2


def test_empty_file_reads_nothing_and_is_no_problem(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    src = source_for(path)
    assert list(read_events([src])) == []
    assert (src.lines, src.blank_lines, src.raw_bytes, src.problem) == (0, 0, 0, None)
    assert src.sha256 == hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize("name", ["log.jsonl.gz", "log.jsonl", "log"])
def test_gzip_is_recognised_by_its_magic_bytes_whatever_the_name(tmp_path, name):
    data = ROLL + b"\n\n" + FARKLE + b"\n"
    packed = gzip.compress(data)
    path = tmp_path / name
    path.write_bytes(packed)
    src = source_for(path)
    records = list(read_events([src]))
    assert [(r.type, r.line, r.file) for r in records] == [("roll", 1, str(path)), ("farkle", 3, str(path))]
    assert src.gzip is True
    assert (src.raw_bytes, src.data_bytes, src.lines, src.blank_lines) == (len(packed), len(data), 3, 1)
    assert src.sha256 == hashlib.sha256(packed).hexdigest()  # the bytes as stored


def test_a_plain_file_named_gz_is_read_as_plain(tmp_path):
    path = tmp_path / "mislabelled.jsonl.gz"
    path.write_bytes(ROLL + b"\n")
    src = source_for(path)
    assert lines_of(src) == [(1, ROLL)] and src.gzip is False


def test_concatenated_gzip_members_and_zero_padding_are_read_through(tmp_path):
    path = tmp_path / "cat.gz"
    path.write_bytes(gzip.compress(ROLL + b"\n") + gzip.compress(FARKLE + b"\n") + b"\0" * 10)
    src = source_for(path)
    assert lines_of(src) == [(1, ROLL), (2, FARKLE)]
    assert src.problem is None


def numbered_log(n: int) -> bytes:
    return b"".join(enc(ev("roll", seq=i, player="ana", dice=[1, 2, 3])) + b"\n" for i in range(1, n + 1))


def test_truncated_gzip_yields_the_good_prefix_then_a_file_problem(tmp_path):
    data = numbered_log(3000)
    packed = gzip.compress(data)
    cut = packed[: len(packed) // 2]
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(cut)
    src = source_for(path)
    problems: list[FileProblem] = []
    records = list(read_events([src], on_problem=problems.append))
    # every record is a complete, valid line of the original, in order, from line 1
    assert records and all(type(r) is Event for r in records)
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    assert [r.line for r in records] == [r.seq for r in records]
    # what zlib can recover from the cut stream, line by line, is exactly what came out
    recoverable = zlib.decompressobj(wbits=31).decompress(cut)
    assert len(records) == recoverable.count(b"\n")
    assert problems == [src.problem]
    assert src.problem.file == str(path)
    assert src.problem.line == len(records) + 1
    assert "truncated" in src.problem.reason and f"line {len(records) + 1}" in src.problem.reason
    assert src.sha256 == hashlib.sha256(cut).hexdigest()
    assert src.lines == len(records)


def test_corrupt_gzip_does_not_crash_and_names_where_it_broke(tmp_path):
    data = numbered_log(20000)
    packed = bytearray(gzip.compress(data, compresslevel=1))
    middle = len(packed) // 2
    packed[middle : middle + 64] = bytes(64)
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(bytes(packed))
    src = source_for(path)
    records = list(read_events([src]))
    assert src.problem is not None and src.problem.line is not None
    assert "gzip" in src.problem.reason
    good = [r for r in records if type(r) is Event]
    assert good and [r.seq for r in good[:100]] == list(range(1, 101))
    assert src.problem.line > good[-1].line
    assert src.sha256 == hashlib.sha256(bytes(packed)).hexdigest()  # drained past the break


def test_garbage_after_a_gzip_member_is_a_file_problem(tmp_path):
    path = tmp_path / "tail.gz"
    path.write_bytes(gzip.compress(ROLL + b"\n") + b"not gzip at all")
    src = source_for(path)
    assert lines_of(src) == [(1, ROLL)]
    assert src.problem.line == 2 and "corrupt" in src.problem.reason


def test_a_10_mb_line_is_read_whole_under_a_raised_limit(tmp_path):
    # The default limit (1 MiB) rejects such a line: tests/test_reliability_input.py.
    note = "x" * (10 * 1024 * 1024)
    big = enc(ev("roll", player="ana", dice=[1], note=note))
    path = tmp_path / "big.jsonl"
    path.write_bytes(ROLL + b"\n" + big + b"\n" + FARKLE + b"\n")
    records = list(read_events([source_for(path)], max_line_bytes=16 << 20))
    assert [r.line for r in records] == [1, 2, 3]
    assert records[1].extra["note"] == note
    garbage = tmp_path / "garbage.jsonl.gz"
    garbage.write_bytes(gzip.compress(b"{" * (10 * 1024 * 1024) + b"\n" + FARKLE))
    bad, farkle = read_events([source_for(garbage)], max_line_bytes=16 << 20)
    assert bad.code == "bad_json" and len(bad.raw) == 10 * 1024 * 1024 and farkle.line == 2


def test_utf8_bom_at_the_start_is_ignored(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + ROLL + b"\n" + FARKLE + b"\n")
    assert lines_of(source_for(path)) == [(1, ROLL), (2, FARKLE)]


def test_invalid_utf8_spoils_only_its_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(ROLL + b"\n" + b'{"game_id":"g1","seq":5,"type":"farkle","player":"J\xf6rg"}\n' + FARKLE + b"\n")
    first, bad, last = read_events([source_for(path)])
    assert (first.type, last.type) == ("roll", "farkle")
    assert bad.code == "bad_json" and bad.line == 2 and "UTF-8" in bad.reason


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(st.sampled_from([b"\n", b"a", b"  ", b"{}", b"\r\n", b"x" * 50]), max_size=60),
    chunk=st.integers(1, 64),
    packed=st.booleans(),
)
def test_lines_survive_any_chunk_boundary(pieces, chunk, packed):
    """With tiny read and inflate steps, a line split across chunks comes out whole."""
    data = b"".join(pieces)
    src = InputSource("x", stream=io.BytesIO(gzip.compress(data) if packed else data))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lines_module, "CHUNK", chunk)
        patch.setattr(lines_module, "INFLATE_STEP", chunk)
        got = lines_of(src)
    expected_lines = data.split(b"\n")
    if expected_lines[-1] == b"":
        expected_lines.pop()
    expected = [(n, raw) for n, raw in enumerate(expected_lines, 1) if raw.strip()]
    assert got == expected
    assert src.lines == len(expected_lines)
    assert src.blank_lines == len(expected_lines) - len(expected)
    assert src.data_bytes == len(data) and src.problem is None


# ---- stdin and several sources ----------------------------------------------------------------
def test_stdin_stream_is_read_once(monkeypatch):
    data = ROLL + b"\n" + gzip.compress(b"")[:0] + FARKLE + b"\n"

    class FakeStdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", FakeStdin)
    src = InputSource("<stdin>")
    records = list(read_events([src]))
    assert [(r.file, r.line, r.type) for r in records] == [("<stdin>", 1, "roll"), ("<stdin>", 2, "farkle")]
    assert src.sha256 == hashlib.sha256(data).hexdigest()
    assert not FakeStdin.buffer.closed  # stdin belongs to the process, not to the reader
    assert list(read_events([src])) == []  # a second read finds nothing and says why
    assert "only once" in src.problem.reason and src.problem.line is None


def test_gzip_on_stdin():
    src = InputSource("<stdin>", stream=io.BytesIO(gzip.compress(ROLL + b"\n")))
    assert lines_of(src) == [(1, ROLL)] and src.gzip is True


def test_sources_are_read_in_order_and_problems_reported_in_place(tmp_path):
    a, gone, b = tmp_path / "a.jsonl", tmp_path / "gone.jsonl", tmp_path / "b.jsonl.gz"
    a.write_bytes(ROLL + b"\n")
    b.write_bytes(gzip.compress(b"\n" + FARKLE + b"\n"))
    seen: list = []
    for record in read_events([source_for(a), source_for(gone), source_for(b)], on_problem=seen.append):
        seen.append(record)
    assert [(type(r).__name__, r.file, r.line) for r in seen] == [
        ("Event", str(a), 1),
        ("FileProblem", str(gone), None),
        ("Event", str(b), 2),
    ]
    assert "cannot read" in seen[1].reason


def test_read_lines_gives_file_line_and_raw_bytes(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n" + ROLL + b"\nnot json\n")
    assert list(read_lines([source_for(path)])) == [(str(path), 2, ROLL), (str(path), 3, b"not json")]

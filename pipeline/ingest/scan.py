"""Stage 2's bulk decoder: turn lines → integer columns and byte spans, in one compiled pass.

Most lines of a log are flat objects of a few known keys (a roll, keep, bank or farkle):
`{"game_id":"g1","seq":7,"ts":"…","type":"roll","player":"ana","dice":[1,5,3]}`. This scan
reads such a line straight from the block's bytes into columns: seq, points and total as
integers, dice as up to six digits, the type as a code, and each text value as its span in
the block (the strings are cut out afterwards, in bulk). It is written in the subset of
Python that numba compiles and runs at C speed (about 3x faster than Arrow's JSON reader,
which it replaced: that reader was the largest cost of ingest).

It accepts only a strict subset of JSON, and marks every other line for the next decoder
(msgspec, then the reference `parse_line`), which decides what the line is:
- an object of the keys game_id, seq, ts, type, player, dice, points, total, turn_points,
  each at most once, in any order, with JSON whitespace (space, tab, CR) between tokens;
- text values without a backslash or a control character (so the bytes are the value; the
  block is known to be valid UTF-8), and type one of the four turn types;
- integers written as JSON integers (no fraction or exponent, no leading zero) of at most
  18 digits; dice a list of at most six one-digit integers;
- nothing after the closing brace but whitespace.
What this subset cannot judge (seq >= 1, non-empty names, faces 1-6, which fields a type
may have, the ts format) is checked on the columns by the caller, as for any decoder, so
this path accepts only what the reference accepts, with the same values.
"""

from __future__ import annotations


import numpy as np

from pipeline.rules.jit import import_numba

# keys, as the byte strings the scan compares against (index = key id)
KEYS = (b"game_id", b"seq", b"ts", b"type", b"player", b"dice", b"points", b"total", b"turn_points")
GAME_ID, SEQ, TS, TYPE, PLAYER, DICE, POINTS, TOTAL, TURN_POINTS = range(len(KEYS))
TYPES = (b"roll", b"keep", b"bank", b"farkle")  # type codes 0-3, the order of parse.TURN_TYPES
MAX_DIGITS = 18  # an integer this long always fits int64

# columns of `spans` (start, end) and of `ints`
SP_GAME, SP_TS, SP_PLAYER = 0, 2, 4
IN_SEQ, IN_POINTS, IN_TOTAL, IN_TURN_POINTS = 0, 1, 2, 3


def _table(words: tuple[bytes, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Words as a zero-padded byte matrix and their lengths (what the compiled code reads)."""
    width = max(map(len, words))
    matrix = np.zeros((len(words), width), np.uint8)
    for i, w in enumerate(words):
        matrix[i, : len(w)] = np.frombuffer(w, np.uint8)
    return matrix, np.array([len(w) for w in words], np.int64)


KEY_BYTES, KEY_LENS = _table(KEYS)
TYPE_BYTES, TYPE_LENS = _table(TYPES)


def _match(buf, start, end, words, lens) -> int:
    """The index of the word equal to buf[start:end], or -1."""
    n = end - start
    for w in range(len(lens)):
        if lens[w] == n:
            same = True
            for j in range(n):
                if buf[start + j] != words[w, j]:
                    same = False
                    break
            if same:
                return w
    return -1


def _space(buf, i, end) -> int:
    while i < end and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
        i += 1
    return i


def _text_end(buf, i, end) -> int:
    """`buf[i]` opens a JSON string: the index of its closing quote, or -1 if it holds a
    backslash or a control character (or does not close)."""
    i += 1
    while i < end:
        c = buf[i]
        if c == 34:
            return i
        if c == 92 or c < 32:
            return -1
        i += 1
    return -1


def _line(buf, i, end, key_bytes, key_lens, type_bytes, type_lens, row, spans, ints, has, kinds, dice, ndice) -> bool:
    """Decode the line buf[i:end] into row `row` of the outputs; False if it is outside
    the subset (the outputs of that row are then meaningless)."""
    i = _space(buf, i, end)
    if i >= end or buf[i] != 123:  # {
        return False
    i += 1
    seen = 0
    while True:
        i = _space(buf, i, end)
        if i >= end or buf[i] != 34:
            return False
        close = _text_end(buf, i, end)
        if close < 0:
            return False
        key = _match(buf, i + 1, close, key_bytes, key_lens)
        if key < 0 or seen & (1 << key):
            return False
        seen |= 1 << key
        i = _space(buf, close + 1, end)
        if i >= end or buf[i] != 58:  # :
            return False
        i = _space(buf, i + 1, end)
        if i >= end:
            return False
        if key == 0 or key == 2 or key == 3 or key == 4:  # game_id, ts, type, player: text
            if buf[i] != 34:
                return False
            close = _text_end(buf, i, end)
            if close < 0:
                return False
            if key == 3:
                code = _match(buf, i + 1, close, type_bytes, type_lens)
                if code < 0:
                    return False
                kinds[row] = code
            else:
                column = 0 if key == 0 else (2 if key == 2 else 4)
                spans[row, column] = i + 1
                spans[row, column + 1] = close
            i = close + 1
        elif key == 5:  # dice: [d, d, ...], one-digit integers, at most six
            if buf[i] != 91:  # [
                return False
            i = _space(buf, i + 1, end)
            count = 0
            if i < end and buf[i] == 93:  # ]
                i += 1
            else:
                while True:
                    if i >= end or buf[i] < 48 or buf[i] > 57 or count == 6:
                        return False
                    dice[row, count] = buf[i] - 48
                    count += 1
                    i = _space(buf, i + 1, end)
                    if i >= end:
                        return False
                    if buf[i] == 93:
                        i += 1
                        break
                    if buf[i] != 44:  # ,
                        return False
                    i = _space(buf, i + 1, end)
            ndice[row] = count
        else:  # seq, points, total, turn_points: a JSON integer
            negative = buf[i] == 45  # -
            if negative:
                i += 1
            first = i
            value = 0
            while i < end and 48 <= buf[i] <= 57:
                value = value * 10 + (int(buf[i]) - 48)  # int(): in plain Python buf[i] is a uint8
                i += 1
            digits = i - first
            if digits == 0 or digits > MAX_DIGITS or (digits > 1 and buf[first] == 48):
                return False
            if i < end and (buf[i] == 46 or buf[i] == 101 or buf[i] == 69):  # . e E
                return False
            column = 0 if key == 1 else (1 if key == 6 else (2 if key == 7 else 3))
            ints[row, column] = -value if negative else value
            has[row, column] = True
        i = _space(buf, i, end)
        if i >= end:
            return False
        if buf[i] == 44:  # ,
            i += 1
            continue
        if buf[i] == 125:  # }
            break
        return False
    if (seen & 0b1011) != 0b1011:  # game_id, seq and type are required
        return False
    return _space(buf, i + 1, end) == end


def scan_lines(
    buf, starts, ends, key_bytes, key_lens, type_bytes, type_lens, ok, spans, ints, has, kinds, dice, ndice
) -> None:
    """Decode every line [starts[k], ends[k]) of `buf`; ok[k] says whether line k was in
    the subset. The outputs are preset: spans -1 (absent), has False, ndice -1 (absent)."""
    for row in range(len(starts)):
        ok[row] = _line(
            buf,
            starts[row],
            ends[row],
            key_bytes,
            key_lens,
            type_bytes,
            type_lens,
            row,
            spans,
            ints,
            has,
            kinds,
            dice,
            ndice,
        )


def gather_text(buf, starts, ends, offsets, out) -> None:
    """Copy the spans [starts[k], ends[k]) one after another into `out`, with Arrow string
    offsets (absent spans, start -1, are empty)."""
    at = 0
    for k in range(len(starts)):
        offsets[k] = at
        s = starts[k]
        if s >= 0:
            for j in range(s, ends[k]):
                out[at] = buf[j]
                at += 1
    offsets[len(starts)] = at


_COMPILED: dict[str, object] = {}


def compiled(name: str, jit: bool = True):
    """The numba-compiled `scan_lines` or `gather_text` (plain Python with `jit` False or
    without numba: slower, the same results). Compiled on first use and cached on disk, like
    the replay kernel."""
    if not jit:
        return globals()[name]
    f = _COMPILED.get(name)
    if f is None:
        f = _COMPILED[name] = _compile(name)
    return f


def compiled_functions() -> list[object]:
    """The compiled functions made so far in this process (numba dispatchers: their
    `stats` say whether each came from the on-disk cache or was compiled here)."""
    return list(_COMPILED.values())


def _compile(name: str):
    plain = globals()[name]
    try:
        numba = import_numba()
    except ImportError:  # pragma: no cover - numba is a dependency
        return plain
    import types

    jit = numba.njit(cache=True, nogil=True)
    namespace = dict(globals())
    for helper in ("_match", "_space", "_text_end", "_line"):
        f = globals()[helper]
        namespace[helper] = jit(types.FunctionType(f.__code__, namespace, helper, f.__defaults__))
    f = globals()[name]
    return jit(types.FunctionType(f.__code__, namespace, name, f.__defaults__))

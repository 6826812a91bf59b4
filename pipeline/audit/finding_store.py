"""An audit's findings, in order, in bounded memory: kept in memory up to a limit, then
spilled to a temporary file, and read back in order or grouped by game.

A log of millions of bad lines has millions of findings; held as objects they took
gigabytes. The renderers only ever walk them in order (json, jsonl,
csv) or by game in order of each game's first finding (text), so this store keeps the
counts the summaries need as findings arrive (per code, never per game), and beyond
`limit` writes them to disk in order. Grouping the spilled findings by game is two external
sorts, each in runs of `limit` merged from disk: by (game, position), which gives each
game's first position and count, then by (that first position, position). Nothing held
grows with the number of findings or of games.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from itertools import islice
from typing import IO, Iterable, Iterator

from pipeline.model import Finding

LIMIT = 50_000  # findings held in memory before spilling; also the size of a sorted run
CHUNK = 1_000  # findings per pickled record on disk
MAX_RUNS = 64  # sorted runs open at once while grouping; more are merged into one first
DRAIN = 10_000  # a replayer's findings are moved to the store once it holds this many


def _row(f: Finding) -> tuple:
    return (f.game_id, f.seq, f.file, f.line, f.player, f.code, f.severity, f.message, f.claimed, f.expected, f.ts)


class FindingStore:
    def __init__(self, findings: Iterable[Finding] = (), *, limit: int | None = None):
        self.limit = LIMIT if limit is None else limit
        self._memory: list[Finding] = []
        self._spill: IO[bytes] | None = None
        self._spilled = 0
        self.errors = 0
        self.by_code: dict[str, int] = {}
        self.extend(findings)

    # ---- adding ---------------------------------------------------------------------------
    def append(self, f: Finding) -> None:
        self.extend((f,))

    def extend(self, findings: Iterable[Finding]) -> None:
        memory, by_code = self._memory, self.by_code
        for f in findings:
            memory.append(f)
            if f.severity == "error":
                self.errors += 1
            by_code[f.code] = by_code.get(f.code, 0) + 1
            if len(memory) >= self.limit:
                self._flush()

    def _flush(self) -> None:
        if not self._memory:
            return
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="farkle-logs-findings-")
        rows = [_row(f) for f in self._memory]
        for start in range(0, len(rows), CHUNK):
            pickle.dump(rows[start : start + CHUNK], self._spill, protocol=pickle.HIGHEST_PROTOCOL)
        self._spilled += len(rows)
        self._memory.clear()  # in place: extend() holds this list

    # ---- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._spilled + len(self._memory)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[Finding]:
        """Every finding, in the order added."""
        if self._spill is not None:
            for rows in _chunks(self._spill):
                for row in rows:
                    yield Finding(*row)
        yield from list(self._memory)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, FindingStore)):
            return list(self) == list(other)
        return NotImplemented

    def by_game(self) -> Iterator[tuple[str | None, int, Iterator[Finding]]]:
        """(game id, its number of findings, its findings in order) per game, games in the
        order of their first finding. Each game's iterator must be used up before the next."""
        if self._spill is None:
            groups: dict[str | None, list[Finding]] = {}
            for f in self._memory:
                groups.setdefault(f.game_id, []).append(f)
            for game_id, found in groups.items():
                yield game_id, len(found), iter(found)
            return
        # (the first position of the game, -1, its count) sorts before the game's own rows
        merged = heapq.merge(*self._runs(self._with_first_positions()))
        item = next(merged, None)
        while item is not None:
            first, _, count = item
            item = next(merged, None)

            def group(first: int = first) -> Iterator[Finding]:
                nonlocal item
                while item is not None and item[0] == first:
                    yield Finding(*item[2])
                    item = next(merged, None)

            findings = group()
            game_id = item[2][0] if item is not None else None  # its first row follows its count
            yield game_id, count, findings
            for _ in findings:  # whatever the caller left of this game
                pass

    def _rows(self) -> Iterator[tuple]:
        source = (row for chunk in _chunks(self._spill) for row in chunk)  # type: ignore[arg-type]
        return _concat(source, (_row(f) for f in self._memory))

    def _with_first_positions(self) -> Iterator[tuple]:
        """(game's first position, position, row) of every finding, and one (game's first
        position, -1, its count) per game, from the rows sorted by (game, position)."""
        keyed = ((_game_key(row[0]), position, row) for position, row in enumerate(self._rows()))
        by_game = heapq.merge(*self._runs(keyed))
        current: tuple | None = None
        first = count = 0
        for key, position, row in by_game:
            if key != current:
                if current is not None:
                    yield (first, -1, count)
                current, first, count = key, position, 0
            count += 1
            yield (first, position, row)
        if current is not None:
            yield (first, -1, count)

    def _runs(self, items: Iterable[tuple]) -> list[Iterator[tuple]]:
        """`items` as runs of `limit`, each sorted and written to disk; at most MAX_RUNS open."""
        runs: list[Iterator[tuple]] = []
        items = iter(items)
        while batch := list(islice(items, self.limit)):
            batch.sort(key=lambda k: (k[0], k[1]))
            runs.append(_run_reader(_write_run(batch)))
            if len(runs) >= MAX_RUNS:  # keep the open files few: merge these into one run
                runs = [_run_reader(_write_run(heapq.merge(*runs)))]
        return runs

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None


def _game_key(game_id: str | None) -> tuple[bool, str]:
    """A game id as a sort key (None, the lines of no readable game, is a game too)."""
    return (game_id is not None, game_id or "")


def _concat(*parts: Iterable) -> Iterator:
    for part in parts:
        yield from part


def _chunks(fh: IO[bytes]) -> Iterator[list]:
    """The pickled chunks of a file, from its start; the position is restored after each read."""
    end = fh.seek(0, 2)
    offset = 0
    while offset < end:
        fh.seek(offset)
        rows = pickle.load(fh)
        offset = fh.tell()
        yield rows
    fh.seek(end)


def _write_run(rows: Iterable[tuple]) -> IO[bytes]:
    run = tempfile.TemporaryFile(prefix="farkle-logs-run-")
    rows = iter(rows)
    while chunk := list(islice(rows, CHUNK)):
        pickle.dump(chunk, run, protocol=pickle.HIGHEST_PROTOCOL)
    return run


def _run_reader(fh: IO[bytes]) -> Iterator[tuple]:
    with fh:
        fh.seek(0)
        while True:
            try:
                rows = pickle.load(fh)
            except EOFError:
                return
            yield from rows

"""What an audit keeps per game, out of memory once there are many: the replay's game
states, the games' results and their timelines.

A log of millions of games (a million one-line games gzip to 2.6 MB) used to hold all of them
as Python objects, about 3 KB a game: an audit took gigabytes. Each store here holds up to a
limit in memory and puts the rest in a private SQLite database on disk
(`sqlite3.connect("")`: a temporary file SQLite creates and deletes itself, with a page cache
of a few MB), values pickled, keys the game ids. The finding store
(pipeline/audit/finding_store.py) does the same for findings.

- `DiskGames`: the Replayer's spill (pipeline.replay.state.GameSpill): game states by id,
  read back when a line of the game comes, and in order at the end of input.
- `GameStore`: the results, in order, looked up by game id (the text output shows each
  game's result beside its findings).
- `Timelines`: the turns involved in each game's findings, by game id.
"""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
from typing import Any, Iterable, Iterator

from pipeline.model import GameResult

RESULTS_HELD = 20_000  # results kept in memory; past them, all go to disk in order
TIMELINES_HELD = 5_000  # timelines kept in memory; past them, to disk
BATCH = 2_000  # rows written to the database at a time


def _key(game_id: str) -> bytes:
    """A game id as a database key: its UTF-8, lone surrogates (a JSON escape allows them) kept."""
    return game_id.encode("utf-8", "surrogatepass")


def _database() -> sqlite3.Connection:
    db = sqlite3.connect("")  # "": a private database in a temporary file, removed when closed
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")
    db.execute("pragma cache_size = -4096")  # 4 MiB of pages in memory
    return db


class _MaybeThere:
    """The ids put in a DiskGames, as a Bloom filter (4 probes, 16 bits an id at capacity):
    a line of a game that never went to disk (every new game of a log of millions) costs no
    query. Grown from the database's keys when full; never forgets (a game taken back just
    costs a query if asked for again)."""

    def __init__(self, capacity: int = 1 << 16):
        self.capacity = capacity
        self.bits = bytearray(capacity * 2)  # 16 bits an id
        self.size = len(self.bits) * 8
        self.added = 0

    def _positions(self, game_id: str) -> list[int]:
        h = hash(game_id) & 0xFFFFFFFFFFFFFFFF  # a process's own hash: the filter never leaves it
        step, size = (h >> 32) | 1, self.size
        return [h % size, (h + step) % size, (h + 2 * step) % size, (h + 3 * step) % size]

    def add(self, game_id: str) -> None:
        bits = self.bits
        for p in self._positions(game_id):
            bits[p >> 3] |= 1 << (p & 7)
        self.added += 1

    def __contains__(self, game_id: str) -> bool:
        bits = self.bits
        for p in self._positions(game_id):
            if not bits[p >> 3] & (1 << (p & 7)):
                return False
        return True


class DiskGames:
    """The Replayer's games out of memory (pipeline.replay.state.GameSpill), in SQLite."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self._count = 0
        self._maybe = _MaybeThere()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = _database()
            self._db.execute("create table games (key blob primary key, ord integer, state blob)")
            self._db.execute("create index games_ord on games (ord)")
        return self._db

    def put(self, game_id: str, order: int, state: bytes) -> None:
        self.db.execute("insert into games values (?, ?, ?)", (_key(game_id), order, state))
        self._count += 1
        if self._maybe.added >= self._maybe.capacity:
            self._grow()
        self._maybe.add(game_id)

    def _grow(self) -> None:
        maybe = _MaybeThere(self._maybe.capacity * 2)
        for (key,) in self.db.execute("select key from games"):
            maybe.add(key.decode("utf-8", "surrogatepass"))
        self._maybe = maybe

    def take(self, game_id: str) -> bytes | None:
        if not self._count or game_id not in self._maybe:
            return None
        key = _key(game_id)
        row = self.db.execute("select state from games where key = ?", (key,)).fetchone()
        if row is None:
            return None
        self.db.execute("delete from games where key = ?", (key,))
        self._count -= 1
        return row[0]

    def take_in_order(self) -> Iterator[tuple[int, bytes]]:
        if not self._count:
            return
        cursor = self.db.execute("select ord, state from games order by ord")
        while rows := cursor.fetchmany(BATCH):
            yield from rows
        self.db.execute("delete from games")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            self._count = 0


class GameStore:
    """Game results in the order added: held in memory up to `held`, then in SQLite, and
    found by game id (`get`). Iterates like the list it replaces and compares equal to one."""

    def __init__(self, games: Iterable[GameResult] = (), *, held: int = RESULTS_HELD):
        self.held = held
        self._memory: list[GameResult] = []
        self._index: dict[str, GameResult] | None = None  # of _memory, made when first asked
        self._db: sqlite3.Connection | None = None
        self._stored = 0
        self._rulesets: list[Any] = []  # a result's ruleset is stored as its number here
        self._number: dict[int, int] = {}  # id(ruleset) -> number (the list keeps it alive)
        self.extend(games)

    def _dumps(self, game: GameResult) -> bytes:
        number = self._number.get(id(game.ruleset))
        if number is None:
            number = self._number[id(game.ruleset)] = len(self._rulesets)
            self._rulesets.append(game.ruleset)
        values = [getattr(game, name) for name in _RESULT_FIELDS]
        values[_RESULT_RULES] = number
        return pickle.dumps(values, pickle.HIGHEST_PROTOCOL)

    def _loads(self, data: bytes) -> GameResult:
        values = pickle.loads(data)
        values[_RESULT_RULES] = self._rulesets[values[_RESULT_RULES]]
        return GameResult(*values)

    def append(self, game: GameResult) -> None:
        self.extend((game,))

    def extend(self, games: Iterable[GameResult]) -> None:
        for game in games:
            self._memory.append(game)
            if self._index is not None:
                self._index[game.game_id] = game
            if len(self._memory) >= self.held:
                self._flush()

    def _flush(self) -> None:
        if self._db is None:
            self._db = _database()
            self._db.execute("create table results (pos integer primary key, key blob, value blob)")
            self._db.execute("create index results_key on results (key)")
        rows = ((self._stored + i, _key(g.game_id), self._dumps(g)) for i, g in enumerate(self._memory))
        self._db.executemany("insert into results values (?, ?, ?)", rows)
        self._stored += len(self._memory)
        self._memory = []
        self._index = None

    def __iter__(self) -> Iterator[GameResult]:
        if self._db is not None:
            cursor = self._db.execute("select value from results order by pos")
            while rows := cursor.fetchmany(BATCH):
                for (value,) in rows:
                    yield self._loads(value)
        yield from list(self._memory)

    def __len__(self) -> int:
        return self._stored + len(self._memory)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, GameStore)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    def get(self, game_id: str | None) -> GameResult | None:
        """The result of game `game_id` (the first, if it was added twice), or None."""
        if game_id is None:
            return None
        if self._db is not None:
            row = self._db.execute(
                "select value from results where key = ? order by pos limit 1", (_key(game_id),)
            ).fetchone()
            if row is not None:
                return self._loads(row[0])
        if self._index is None:
            self._index = {}
            for g in reversed(self._memory):
                self._index[g.game_id] = g
        return self._index.get(game_id)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


_RESULT_FIELDS = [f.name for f in dataclasses.fields(GameResult)]
_RESULT_RULES = _RESULT_FIELDS.index("ruleset")


class Timelines:
    """Each game's timeline (the turns involved in its findings) by game id: a dict up to
    `held` games, then SQLite. Reads like the dict it replaces (`get`, `values`, ==)."""

    def __init__(self, timelines: dict[str, Any] | None = None, *, held: int = TIMELINES_HELD):
        self.held = held
        self._memory: dict[str, Any] = {}
        self._db: sqlite3.Connection | None = None
        self._stored = 0
        self.update(timelines or {})

    def __setitem__(self, game_id: str, timeline: Any) -> None:
        self._memory[game_id] = timeline
        if len(self._memory) >= self.held:
            self._flush()

    def update(self, timelines: dict[str, Any]) -> None:
        for game_id, timeline in timelines.items():
            self[game_id] = timeline

    def _flush(self) -> None:
        if self._db is None:
            self._db = _database()
            self._db.execute("create table timelines (key blob primary key, pos integer, value blob)")
        rows = (
            (_key(g), self._stored + i, pickle.dumps(t, pickle.HIGHEST_PROTOCOL))
            for i, (g, t) in enumerate(self._memory.items())
        )
        self._db.executemany("insert or replace into timelines values (?, ?, ?)", rows)
        self._stored += len(self._memory)
        self._memory = {}

    def get(self, game_id: str, default: Any = None) -> Any:
        found = self._memory.get(game_id)
        if found is not None:
            return found
        if self._db is not None:
            row = self._db.execute("select value from timelines where key = ?", (_key(game_id),)).fetchone()
            if row is not None:
                return pickle.loads(row[0])
        return default

    def items(self) -> Iterator[tuple[str, Any]]:
        if self._db is not None:
            cursor = self._db.execute("select key, value from timelines order by pos")
            while rows := cursor.fetchmany(BATCH):
                for key, value in rows:
                    yield key.decode("utf-8", "surrogatepass"), pickle.loads(value)
        yield from list(self._memory.items())

    def values(self) -> Iterator[Any]:
        return (timeline for _, timeline in self.items())

    def __len__(self) -> int:
        return self._stored + len(self._memory)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, Timelines)):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

"""Player ratings with openskill's Plackett-Luce model: one free-for-all match per finished game.

So that anyone can reproduce the numbers with the library alone, nothing is tuned:
`PlackettLuce()` with the library's defaults (mu 25, sigma 25/3, its beta, kappa and tau);
each finished game (fct_game_results) is one match of one-player teams in seat order, ranked
by the players' places (1 + the number of players with a higher corrected total, so equal
totals share a place); games are rated in `game_order` (start, then game_id), each from the
ratings the games before it left. A game with one player is no match and is not rated.

The ordinal, mu - 3 sigma, is the library's `ordinal()`: a rating the player is very
probably above, which is what standings sort by (a new player, at 25 - 25 = 0, starts at
the bottom instead of the middle).
"""

from __future__ import annotations

from array import array

from typing import Any

import pyarrow as pa

HISTORY_COLUMNS = ("game_order", "game_id", "start_ts", "player", "seat", "place", "corrected_total")
RATING_COLUMNS = ("rated_games", "mu_before", "sigma_before", "ordinal_before", "mu", "sigma", "ordinal")


def model():
    """The rating model, the library's defaults: what a reader rebuilds to check a rating."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


def rating_history(inputs: dict[str, pa.Table]) -> pa.Table:
    """Each player's rating before and after every rated game: one row per seat of every
    finished game with two or more players, in rating order. `rated_games` counts the
    player's rated games up to and including this one. The input is fct_game_results (any
    engine's types: only its values are read)."""
    results = inputs["fct_game_results"]
    order = results.column("game_order").to_pylist()
    seats = results.column("seat").to_pylist()
    rows = sorted(range(results.num_rows), key=lambda i: (order[i], seats[i]))
    players = results.column("player").to_pylist()
    places = results.column("place").to_pylist()
    pl = model()
    ratings: dict[str, Any] = {}
    counts: dict[str, int] = {}
    kept: list[int] = []
    out: dict[str, list] = {name: [] for name in RATING_COLUMNS}
    start = 0
    while start < len(rows):
        end = start + 1
        while end < len(rows) and order[rows[end]] == order[rows[start]]:
            end += 1
        game = rows[start:end]
        start = end
        if len(game) < 2:
            continue  # one player: no match
        names = [players[i] for i in game]
        before = [ratings.get(name) or pl.rating(name=name) for name in names]
        after = pl.rate([[r] for r in before], ranks=[float(places[i]) for i in game])
        for i, name, old, (new,) in zip(game, names, before, after):
            ratings[name] = new
            counts[name] = counts.get(name, 0) + 1
            kept.append(i)
            out["rated_games"].append(counts[name])
            out["mu_before"].append(old.mu)
            out["sigma_before"].append(old.sigma)
            out["ordinal_before"].append(old.ordinal())
            out["mu"].append(new.mu)
            out["sigma"].append(new.sigma)
            out["ordinal"].append(new.ordinal())
    picked = results.select(list(HISTORY_COLUMNS)).take(_array(kept, "q", pa.int64()))
    columns = {
        "game_order": picked.column("game_order").cast(pa.int64()),
        "game_id": picked.column("game_id").cast(pa.string()),
        "start_ts": picked.column("start_ts"),
        "player": picked.column("player").cast(pa.string()),
        "seat": picked.column("seat").cast(pa.int64()),
        "place": picked.column("place").cast(pa.int64()),
        "corrected_total": picked.column("corrected_total").cast(pa.int64()),
    }
    columns["rated_games"] = _array(out["rated_games"], "q", pa.int64())
    for name in RATING_COLUMNS[1:]:
        columns[name] = _array(out[name], "d", pa.float64())
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))


def _array(values: list, code: str, kind: pa.DataType) -> pa.Array:
    """An Arrow array of numbers without pa.array(list), which imports pandas to ask
    whether the list is a pandas object: the numbers' bytes become the array's buffer."""
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(array(code, values))])

"""Solve time of the single-turn strategy solver, per ruleset, against a baseline.

For each ruleset, in one process so the ratios are fair whatever the machine:

  table   build the score table from nothing (`score_table`, split search memo cleared):
          the baseline, the cost every command that scores dice already pays
  moves   the per-ruleset roll/keep structure the solver works from (table warm)
  solve   the DP itself: both bank floors (opened, not opened), moves warm
  cold    all of it from nothing, as a first `rules show` of a new ruleset pays

Rounds are interleaved (each round times every ruleset once) so load on a shared machine
hits every ruleset alike; the best of `--repeat` rounds is shown.

    .venv/bin/python bench/solver.py
    .venv/bin/python bench/solver.py --repeat 5 --rules '{"single_five": 10}'
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

from pipeline.rules import Ruleset, score_table
from pipeline.rules import scoring as _scoring
from pipeline.strategy import solve_uncached
from pipeline.strategy import solver as _solver

DEFAULT_RULES = [
    "standard",
    "playmonster",
    '{"single_five": 0}',
    '{"single_five": 25}',
    '{"opening": 1000, "min_bank": 350}',
    '{"n_of_a_kind": "doubling", "six_kind": 10000}',
]


def clear_all() -> None:
    score_table.cache_clear()
    _scoring.clear_caches()
    _solver.moves.cache_clear()


def timed(fn) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def one_round(rules: Ruleset) -> dict[str, float]:
    clear_all()
    t_table = timed(lambda: score_table(rules))
    t_moves = timed(lambda: _solver.moves(rules))
    t_solve = timed(lambda: solve_uncached(rules))
    clear_all()
    t_cold = timed(lambda: solve_uncached(rules))
    return {"table": t_table, "moves": t_moves, "solve": t_solve, "cold": t_cold}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; best of them is shown (default 3)")
    parser.add_argument("--rules", action="append", help="ruleset name or inline JSON; repeatable")
    args = parser.parse_args(argv)
    specs = args.rules or DEFAULT_RULES
    rulesets = [Ruleset.from_json_text(s) if s.lstrip().startswith("{") else Ruleset.from_value(s) for s in specs]
    best: list[dict[str, float]] = [{} for _ in rulesets]
    for _ in range(args.repeat):
        for i, rules in enumerate(rulesets):
            for k, v in one_round(rules).items():
                best[i][k] = min(v, best[i].get(k, float("inf")))
    print(f"python {sys.version.split()[0]}; best of {args.repeat} interleaved rounds; times in seconds")
    print(
        f"{'ruleset':<48} {'grid':>4} {'cap':>6} {'table':>6} {'moves':>6} {'solve':>6} {'cold':>6} "
        f"{'solve/table':>11}  EV not opened / opened"
    )
    for spec, rules, t in zip(specs, rulesets, best):
        p = solve_uncached(rules)
        print(
            f"{spec[:48]:<48} {p.granularity:>4} {p.cap:>6} {t['table']:>6.3f} {t['moves']:>6.3f} "
            f"{t['solve']:>6.3f} {t['cold']:>6.3f} {t['solve'] / t['table']:>11.1f}  "
            f"{p.turn_value(False):.2f} / {p.turn_value(True):.2f}"
        )
    print("solve covers both bank floors; its cost grows with cap / grid (states = 12 * cap / grid).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

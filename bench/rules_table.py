"""How much the per-ruleset lookup table buys over the recursive split search.

Scores the same random keeps (one to six dice, faces uniform) three ways, in one process so
the ratios are fair whatever the machine:

  table      dice -> `dice_key` -> `score_table(rules).value[key]`
  by key     `value[key]` with the integer keys already computed (a column of keys, a join)
  score_keep the public recursive search, its memo warm (as a long replay would see it)
  cold       the same search with its memo cleared before every keep (the raw search cost)

and times one exact `farkle_probability(6, rules)` (6^6 = 46,656 rolls), both from nothing
(building the table included) and with the table already built.

    .venv/bin/python bench/rules_table.py                  # defaults below
    .venv/bin/python bench/rules_table.py --keeps 20000 --repeat 1 --rules playmonster
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from typing import Callable

from pipeline.rules import Ruleset, dice_key, farkle_probability, score_keep, score_table
from pipeline.rules import scoring as _scoring


def random_keeps(n: int, seed: int) -> list[tuple[int, ...]]:
    rnd = random.Random(seed)
    return [tuple(rnd.randint(1, 6) for _ in range(rnd.randint(1, 6))) for _ in range(n)]


def best_of_interleaved(
    repeat: int, variants: dict[str, tuple[Callable[[], object], Callable[[], object]]]
) -> dict[str, float]:
    """Best time of each variant's (untimed setup, timed run), the rounds interleaved so load
    on a shared machine hits every variant alike."""
    best = {name: float("inf") for name in variants}
    for _ in range(repeat):
        for name, (setup, run) in variants.items():
            setup()
            gc.collect()
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def clear_search_memo() -> None:
    _scoring.clear_caches()


def nothing() -> None:
    pass


def bench_ruleset(rules: Ruleset, keeps: list[tuple[int, ...]], cold_keeps: int, repeat: int) -> dict:
    values = score_table(rules).value
    keys = [dice_key(dice) for dice in keeps]
    cold_sample = keeps[:cold_keeps]

    # the two paths must agree before their speeds mean anything
    mismatch = [d for d in keeps[:5000] if values[dice_key(d)] != score_keep(d, rules)]
    if mismatch:
        raise SystemExit(f"table and search disagree on {mismatch[:5]}")

    def via_table():
        for dice in keeps:
            values[dice_key(dice)]

    def via_key():
        for key in keys:
            values[key]

    def via_search():
        for dice in keeps:
            score_keep(dice, rules)

    def via_cold_search():
        for dice in cold_sample:
            clear_search_memo()
            score_keep(dice, rules)

    def forget_everything():
        farkle_probability.cache_clear()
        score_table.cache_clear()
        clear_search_memo()

    def forget_odds_keep_table():
        farkle_probability.cache_clear()
        score_table(rules)

    def odds():
        farkle_probability(6, rules)

    t = best_of_interleaved(
        repeat,
        {
            "table": (nothing, via_table),
            "key": (nothing, via_key),
            "search": (via_search, via_search),  # memo warm, as a long replay would see it
            "cold": (nothing, via_cold_search),
            "odds_cold": (forget_everything, odds),
            "odds_warm": (forget_odds_keep_table, odds),
        },
    )
    return {
        "table": len(keeps) / t["table"],
        "key": len(keeps) / t["key"],
        "search": len(keeps) / t["search"],
        "cold": len(cold_sample) / t["cold"],
        "odds_cold": t["odds_cold"],
        "odds_warm": t["odds_warm"],
        "odds": farkle_probability(6, rules),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keeps", type=int, default=200_000, help="random keeps per timing (default 200000)")
    parser.add_argument("--cold-keeps", type=int, default=2_000, help="keeps for the cold search (default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rules", action="append", help="ruleset name or inline JSON; repeatable (default: standard and playmonster)"
    )
    args = parser.parse_args(argv)
    specs = args.rules or ["standard", "playmonster"]
    keeps = random_keeps(args.keeps, args.seed)
    print(f"python {sys.version.split()[0]}; {len(keeps):,} random keeps of 1-6 dice; best of {args.repeat}")
    for spec in specs:
        rules = Ruleset.from_json_text(spec) if spec.lstrip().startswith("{") else Ruleset.from_value(spec)
        r = bench_ruleset(rules, keeps, min(args.cold_keeps, len(keeps)), args.repeat)
        print(f"[{rules.name}] table of {len(score_table(rules))} multisets")
        print(f"  table, dice_key + lookup   {r['table']:>12,.0f} keeps/s")
        print(f"  table, key precomputed     {r['key']:>12,.0f} keeps/s")
        print(f"  score_keep, memo warm      {r['search']:>12,.0f} keeps/s")
        print(f"  score_keep, memo cleared   {r['cold']:>12,.0f} keeps/s")
        print(
            f"  ratio table/score_keep: {r['table'] / r['search']:.2f} (dice_key, warm), "
            f"{r['key'] / r['search']:.1f} (key precomputed, warm), {r['table'] / r['cold']:.0f} (dice_key, cold)"
        )
        print(
            f"  farkle_probability(6) = {r['odds'].numerator}/{r['odds'].denominator}: "
            f"{r['odds_cold'] * 1000:.1f} ms from nothing, {r['odds_warm'] * 1000:.1f} ms with the table built"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

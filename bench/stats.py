"""Bench: `farkle-logs stats` (all sections) over a 20 M-event-sized dataset.

The dataset is SYNTHETIC, generated here with DuckDB `range()`: tables at the sizes 20 M
events imply (about 7 M rolls, 3 M turns, 4 M decisions, 50 k games, 20 M events), with
random but schema-correct values. It is not a replayable log: the figures are meaningless,
only the sizes and types matter. Written to a temp dir (or --dir), never to the repo.

    .venv/bin/python bench/stats.py            # generate, time, clean up
    .venv/bin/python bench/stats.py --dir /tmp/ds20m --keep   # reuse / keep the dataset
    nice -n -15 .venv/bin/python bench/stats.py --dir /tmp/ds20m   # busy shared machine (root)

Prints: generation time, the baseline (a bare `SELECT count(*)` over the events table), the
in-process `pipeline.stats.compute` time for all sections, and the wall time of the whole
CLI run `farkle-logs stats DATASET --format json` (process start to exit): medians of N
interleaved runs, wall and CPU time (CPU is the figure to trust on a loaded shared machine).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.rules import Ruleset  # noqa: E402
from pipeline.stats.fixtures import write_manifest  # noqa: E402

GAMES = 50_000
PLAYERS_PER_GAME = 3
PLAYER_POOL = 200
TURNS = 3_000_000
ROLLS = 7_000_000
DECISIONS = 4_000_000
EVENTS = 20_000_000
FINDINGS = 100_000


def generate(root: Path) -> None:
    standard = Ruleset.builtin("standard").to_json()
    playmonster = Ruleset.builtin("playmonster").to_json()
    custom = Ruleset.from_value({"base": "standard", "three_pairs": None, "opening": 1000}).to_json()
    con = duckdb.connect()
    con.execute("set preserve_insertion_order = false")
    root.mkdir(parents=True, exist_ok=True)

    def copy(table: str, query: str) -> None:
        # the layout ingest writes (docs/dataset.md): zstd, row groups of 2^20 rows, files
        # of at most two row groups
        con.execute(
            f"copy ({query}) to '{root / table}' (format parquet, compression zstd, overwrite_or_ignore true, "
            "row_group_size 1048576, row_groups_per_file 2, filename_pattern 'part-{i}')"
        )

    # a game's id from an integer; a seat's player name from (game, seat)
    con.execute("create macro gid(i) as 'g' || lpad(i::varchar, 6, '0')")
    con.execute(f"create macro pname(g, s) as 'p' || lpad((((g) * 7 + (s) * 13) % {PLAYER_POOL})::varchar, 3, '0')")
    con.execute("create macro rnd(i, salt) as (hash(i, salt) % 1000000)::double / 1000000")
    copy(
        "games",
        f"""
        select gid(i) as game_id,
               case when i % 20 = 0 then '{custom}' when i % 10 = 0 then '{playmonster}' else '{standard}' end as ruleset,
               case when i % 20 = 0 then 'custom (base standard)' when i % 10 = 0 then 'playmonster' else 'standard' end as ruleset_name,
               [pname(i, 0), pname(i, 1), pname(i, 2)] as players,
               null::varchar as claimed, null::varchar as corrected,
               [pname(i, i % 3)] as winner_claimed, [pname(i, i % 3)] as winner_corrected,
               i % 50 <> 0 as complete, 400::int as events,
               timestamptz '2025-01-01 00:00:00+00' + to_minutes(i * 10) as first_ts,
               timestamptz '2025-01-01 00:00:00+00' + to_minutes(i * 10 + 45) as last_ts
        from range({GAMES}) t(i)
        """,
    )
    copy(
        "game_players",
        f"""
        select gid(g) as game_id, pname(g, s) as player, (s + 1)::tinyint as seat,
               (8000 + hash(g, s) % 4000)::bigint as claimed_total,
               (8000 + hash(g, s) % 4000 - (hash(g, s, 1) % 3) * 50)::bigint as corrected_total,
               s = g % 3 as won_claimed, s = g % 3 as won_corrected
        from range({GAMES}) a(g), range({PLAYERS_PER_GAME}) b(s)
        """,
    )
    per_game = TURNS // GAMES
    copy(
        "turns",
        f"""
        select gid(i // {per_game}) as game_id, pname(i // {per_game}, i % 3) as player,
               ((i % {per_game}) // 3 + 1)::int as turn, (i * 6)::int as start_seq, (i * 6 + 5)::int as end_seq,
               (1 + hash(i) % 4)::smallint as rolls, (case when rnd(i, 1) < 0.05 then 1 else 0 end)::smallint as hot_dice,
               case when rnd(i, 2) < 0.3 then 'farkle' when rnd(i, 2) < 0.301 then 'open' else 'bank' end as outcome,
               (case when rnd(i, 2) < 0.3 then 0 else 50 * (hash(i, 3) % 60) end)::bigint as claimed_points,
               (case when rnd(i, 2) < 0.3 then 0 else 50 * (hash(i, 3) % 60) end)::bigint as corrected_points,
               (1 + hash(i, 4) % 6)::tinyint as dice_left,
               (hash(i, 5) % 10000)::bigint as claimed_total, (hash(i, 5) % 10000)::bigint as corrected_total,
               timestamptz '2025-01-01 00:00:00+00' + to_seconds(i) as ts
        from range({TURNS}) t(i)
        """,
    )
    per_game = ROLLS // GAMES
    copy(
        "rolls",
        f"""
        select game_id, seq, player, turn, roll_in_turn,
               dice, len(dice)::tinyint as dice_count,
               rnd(i, 9) >= [0.667, 0.444, 0.278, 0.157, 0.077, 0.023][len(dice)] as scored,
               0::bigint as best_value, null::tinyint[] as kept, null::bigint as kept_claimed,
               null::bigint as kept_value, ts
        from (
            select i, gid(i // {per_game}) as game_id, (i % {per_game})::int as seq,
                   pname(i // {per_game}, (i // 3) % 3) as player, ((i % {per_game}) // 9 + 1)::int as turn,
                   (1 + i % 3)::smallint as roll_in_turn,
                   list_transform(range([6, 6, 6, 6, 5, 5, 4, 4, 3, 2, 1, 6][1 + (hash(i, 7) % 12)::bigint]::bigint), lambda x: (1 + hash(i, x, 8) % 6)::tinyint) as dice,
                   timestamptz '2025-01-01 00:00:00+00' + to_seconds(i) as ts
            from range({ROLLS}) t(i)
        )
        """,
    )
    per_game = DECISIONS // GAMES
    copy(
        "decisions",
        f"""
        select gid(i // {per_game}) as game_id, (i % {per_game})::int as seq,
               pname(i // {per_game}, (i // 2) % 3) as player, ((i % {per_game}) // 6 + 1)::int as turn,
               (1 + hash(i, 1) % 6)::tinyint as dice_left, (50 * (hash(i, 2) % 80))::bigint as turn_points,
               (hash(i, 3) % 10000)::bigint as banked_total, (hash(i, 4) % 10000)::bigint as opponents_best,
               true as opened, case when rnd(i, 5) < 0.4 then 'bank' else 'roll' end as choice,
               case when rnd(i, 5) < 0.4 then null else rnd(i, 6) < 0.2 end as farkled,
               timestamptz '2025-01-01 00:00:00+00' + to_seconds(i) as ts
        from range({DECISIONS}) t(i)
        """,
    )
    per_game = EVENTS // GAMES
    copy(
        "events",
        f"""
        select gid(i // {per_game}) as game_id, (i % {per_game} + 1)::int as seq,
               timestamptz '2025-01-01 00:00:00+00' + to_seconds(i) as ts,
               ['roll', 'keep', 'bank', 'roll', 'farkle'][1 + i % 5] as type,
               pname(i // {per_game}, (i // 5) % 3) as player,
               null::tinyint[] as dice, null::tinyint as dice_count, null::bigint as points, null::bigint as total,
               null::varchar[] as players, null::varchar as rules, null::varchar[] as winner,
               null::varchar as scores, null::varchar as extra, 'bench.jsonl' as source_file,
               i + 1 as source_line, 'bench' as ingest_id
        from range({EVENTS}) t(i)
        """,
    )
    codes = ["scoring_error", "bank_mismatch", "cross_roll_meld", "missed_farkle", "total_mismatch"]
    copy(
        "findings",
        f"""
        select gid(i % {GAMES}) as game_id, (i % 400)::int as seq, 'bench.jsonl' as file, i as line,
               pname(i % {GAMES}, i % 3) as player, {codes}[1 + (hash(i) % 5)::bigint] as code, 'error' as severity,
               'synthetic' as message, null::double as claimed, null::double as expected,
               timestamptz '2025-01-01 00:00:00+00' + to_seconds(i) as ts
        from range({FINDINGS}) t(i)
        """,
    )
    con.close()
    write_manifest(root, synthetic=True, note="bench/stats.py synthetic data, not from ingest")


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process's threads and of finished children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    fn()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="dataset directory (generated if it has no manifest.json)")
    parser.add_argument("--keep", action="store_true", help="keep the generated dataset")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    root = args.dir or Path(tempfile.mkdtemp(prefix="farkle-stats-bench-")) / "dataset"
    made = False
    if not (root / "manifest.json").exists():
        start = time.perf_counter()
        generate(root)
        made = True
        print(f"generated synthetic dataset in {time.perf_counter() - start:.1f} s: {root}")
    try:
        from pipeline.stats import compute

        con = duckdb.connect()
        sizes = {
            t: con.execute(f"select count(*) from read_parquet('{root}/{t}/**/*.parquet')").fetchone()[0]
            for t in ("events", "rolls", "turns", "decisions", "games")
        }
        print("rows: " + ", ".join(f"{t} {n:,}" for t, n in sizes.items()))

        def baseline() -> None:
            c = duckdb.connect()
            c.execute(
                f"select count(*) from read_parquet('{root}/events/**/*.parquet', hive_partitioning = true)"
            ).fetchall()
            c.close()

        def in_process() -> None:
            compute(root)

        cli = [str(Path(sys.executable).parent / "farkle-logs"), "stats", str(root), "--format", "json"]
        load_before = os.getloadavg()

        def whole_cli() -> None:
            subprocess.run(cli, check=True, stdout=subprocess.DEVNULL)

        variants = {
            "baseline  SELECT count(*) over events": baseline,
            "compute() all sections, in process": in_process,
            "`farkle-logs stats --format json` whole run": whole_cli,
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(args.runs):  # interleaved, so load on a shared machine hits all alike
            for name, fn in variants.items():
                results[name].append(timed(fn))
        print(f"load average before/after: {load_before} / {os.getloadavg()} on {os.cpu_count()} cores")
        for name, runs in results.items():
            walls = [w for w, _ in runs]
            cpus = [c for _, c in runs]
            print(
                f"{name:45s} wall median {statistics.median(walls):.3f} s (min {min(walls):.3f})"
                f"  CPU median {statistics.median(cpus):.3f} s"
            )
        print("target: the whole run under 2 s wall")
    finally:
        if made and not args.keep:
            shutil.rmtree(root.parent if args.dir is None else root, ignore_errors=True)


if __name__ == "__main__":
    main()

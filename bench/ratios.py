"""Every figure of issue 12 as a ratio against DuckDB's bare conversion, measured in one run.

    .venv/bin/python bench/ratios.py                          # the 2.9 M-event benchmark log
                                                              # (simulated first if missing)
    .venv/bin/python bench/ratios.py --size 1m --only audit   # the 967,129-event log (issue 24)
    .venv/bin/python bench/ratios.py --only stats report      # some figures (baseline always)
    .venv/bin/python bench/ratios.py --dataset DS             # stats/report on an existing dataset
    .venv/bin/python bench/ratios.py --only stats --scale-dataset DS20M   # the 20 M scaling check

The baseline is DuckDB alone: `COPY (SELECT * FROM read_json(LOG)) TO 'x.parquet' (FORMAT
parquet, COMPRESSION zstd)` of the same log. Each figure is the command a user types, run
through the installed CLI in a fresh process (start-up, imports and all), so whatever a branch
changes behind the CLI (a staged ingest, a fast replay, lazy imports) is measured as it is:

| figure | command | goal (issue 12) |
|---|---|---|
| ingest | `farkle-logs ingest LOG --out NEW` | <= 1.5x the baseline, <= 1 GiB |
| audit | `farkle-logs audit LOG --format json` | <= 1.0x |
| stats | `farkle-logs stats DS --format json` with every section (decisions-quality and the league ones included) | <= 0.5x, <= 1 GiB |
| report | `farkle-logs report DS --out page.html` | <= 1.5x, <= 1 GiB |
| ratings, head-to-head, trends | `farkle-logs stats DS --section S --format json` (issue 22) | <= 0.2x each |
| sql | `farkle-logs sql DS "select count(*) from games"` (issue 22: start-up) | <= 0.5 s |
| help | `farkle-logs --help` | <= 0.25 s |
| score | `farkle-logs score 1 5` | <= 0.25 s |
| stats@scale | stats on --scale-dataset (e.g. 20 M events) | <= 10x stats' own time, <= 1 GiB |

Runs alternate (baseline, then each figure, --runs rounds) so load from the other jobs on
a shared machine hits all alike; the table shows medians. Memory is the peak resident set:
the largest process as the kernel counts it (`os.wait4`) and the sampled peak of the whole
process tree's summed RSS (ingest may run several processes). DS is --dataset, else the
dataset the first timed ingest wrote (or one untimed ingest when ingest is not asked for).
Nothing is written to the repository: everything goes to --work (a temporary directory).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
# The benchmark logs, each simulated once (untimed) when missing: --size picks one
BENCH_LOGS = {
    "2.9m": (Path("/work/benchdata/sim9000.jsonl"), ["--games", "9000", "--players", "3", "--seed", "11"]),
    "1m": (Path("/work/benchdata/sim3000-s12.jsonl"), ["--games", "3000", "--players", "3", "--seed", "12"]),
}
DEFAULT_LOG, BENCH_LOG_ARGS = BENCH_LOGS["2.9m"]  # 2,907,192 events (the 1m log: 967,129)
GIB = 2**30

BASELINE_SCRIPT = """
import sys, duckdb
src, dst = sys.argv[1], sys.argv[2]
duckdb.sql(f"COPY (SELECT * FROM read_json('{src}')) TO '{dst}' (FORMAT parquet, COMPRESSION zstd)")
"""
STATS_SECTIONS = (
    "bust",
    "turns",
    "decisions",
    "players",
    "dice",
    "decisions-quality",
    "ratings",
    "rating-history",
    "head-to-head",
    "trends",
)
LEAGUE_FIGURES = ("ratings", "head-to-head", "trends")  # one section each, <= 0.2x
SQL_QUERY = "select count(*) from games"


@dataclass
class Context:
    """What the commands need: the CLI, the log, the dataset stats/report read, a work dir."""

    cli: list[str]
    log: Path
    work: Path
    dataset: Path | None = None
    scale_dataset: Path | None = None
    counter: list[int] = field(default_factory=lambda: [0])

    def fresh(self, stem: str) -> Path:
        self.counter[0] += 1
        return self.work / f"{stem}-{self.counter[0]}"


@dataclass
class Figure:
    name: str
    command: Callable[[Context], list[str]]
    ratio_goal: float | None = None  # median wall / baseline median wall
    seconds_goal: float | None = None  # absolute wall (start-up figures)
    memory_goal: int | None = None  # bytes, peak RSS of the process tree
    cleanup: Callable[[Context, list[str]], None] | None = None


def _stats_command(dataset_of: Callable[[Context], Path | None]) -> Callable[[Context], list[str]]:
    def command(ctx: Context) -> list[str]:
        sections = [arg for s in STATS_SECTIONS for arg in ("--section", s)]
        return ctx.cli + ["stats", str(dataset_of(ctx)), "--format", "json", *sections]

    return command


def _section_command(section: str) -> Callable[[Context], list[str]]:
    return lambda c: c.cli + ["stats", str(c.dataset), "--format", "json", "--section", section]


def _remove_out(ctx: Context, cmd: list[str]) -> None:
    shutil.rmtree(cmd[cmd.index("--out") + 1], ignore_errors=True)


def _keep_first_dataset(ctx: Context, cmd: list[str]) -> None:
    """The first ingest's dataset becomes DS when --dataset was not given; others go."""
    out = Path(cmd[cmd.index("--out") + 1])
    if ctx.dataset is None:
        ctx.dataset = out
    elif ctx.dataset != out:
        shutil.rmtree(out, ignore_errors=True)


FIGURES: dict[str, Figure] = {
    f.name: f
    for f in (
        Figure(
            "baseline",
            lambda c: [sys.executable, "-c", BASELINE_SCRIPT, str(c.log), str(c.fresh("baseline")) + ".parquet"],
            cleanup=lambda c, cmd: Path(cmd[-1]).unlink(missing_ok=True),
        ),
        Figure(
            "ingest",
            lambda c: c.cli + ["ingest", str(c.log), "--out", str(c.fresh("ingest")), "--format", "json"],
            ratio_goal=1.5,
            memory_goal=GIB,
            cleanup=_keep_first_dataset,
        ),
        Figure("audit", lambda c: c.cli + ["audit", str(c.log), "--format", "json"], ratio_goal=1.0),
        Figure("stats", _stats_command(lambda c: c.dataset), ratio_goal=0.5, memory_goal=GIB),
        Figure(
            "report",
            lambda c: c.cli + ["report", str(c.dataset), "--out", str(c.fresh("report")) + ".html"],
            ratio_goal=1.5,
            memory_goal=GIB,
            cleanup=lambda c, cmd: Path(cmd[-1]).unlink(missing_ok=True),
        ),
        *(Figure(s, _section_command(s), ratio_goal=0.2, memory_goal=GIB) for s in LEAGUE_FIGURES),
        Figure("sql", lambda c: c.cli + ["sql", str(c.dataset), SQL_QUERY], seconds_goal=0.5),
        Figure("help", lambda c: c.cli + ["--help"], seconds_goal=0.25),
        Figure("score", lambda c: c.cli + ["score", "1", "5"], seconds_goal=0.25),
        Figure("stats@scale", _stats_command(lambda c: c.scale_dataset), memory_goal=GIB),
    )
}
NEEDS_DATASET = {"stats", "report", "sql", *LEAGUE_FIGURES}


# ---- measuring one process -------------------------------------------------------------
def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (Linux /proc)."""
    total, todo = 0, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * page
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return total


@dataclass
class Run:
    wall: float
    cpu: float
    rss: int  # largest process, bytes (kernel)
    tree_rss: int  # sampled peak of the tree's sum, bytes


def measure(cmd: list[str]) -> Run:
    """Wall and CPU seconds (children included) and peak memory of one command; its output
    is discarded. Exit codes 0 and 1 (findings) are fine, anything else stops the bench."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{err.decode(errors='replace')[-3000:]}")
    rss = usage.ru_maxrss * 1024
    return Run(wall, usage.ru_utime + usage.ru_stime, rss, max(peak[0], rss))


# ---- the run ---------------------------------------------------------------------------
def run_rounds(ctx: Context, names: list[str], rounds: int, verbose: bool) -> dict[str, list[Run]]:
    results: dict[str, list[Run]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names:
            fig = FIGURES[name]
            cmd = fig.command(ctx)
            run = measure(cmd)
            if fig.cleanup:
                fig.cleanup(ctx, cmd)
            results[name].append(run)
            if verbose:
                print(
                    f"  round {r + 1} {name:12s} {run.wall:7.2f} s  cpu {run.cpu:7.2f} s  "
                    f"{run.tree_rss / 2**20:6.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
    return results


def summarise(results: dict[str, list[Run]]) -> list[dict]:
    base = statistics.median(r.wall for r in results["baseline"])
    base_cpu = statistics.median(r.cpu for r in results["baseline"])
    rows = []
    for name, runs in results.items():
        fig = FIGURES[name]
        wall = statistics.median(r.wall for r in runs)
        cpu = statistics.median(r.cpu for r in runs)
        mem = max(r.tree_rss for r in runs)
        ratio = wall / base
        goals, ok = [], True
        if fig.ratio_goal is not None:
            goals.append(f"<= {fig.ratio_goal}x")
            ok &= ratio <= fig.ratio_goal
        if fig.seconds_goal is not None:
            goals.append(f"<= {fig.seconds_goal} s")
            ok &= wall <= fig.seconds_goal
        if fig.memory_goal is not None:
            goals.append(f"<= {fig.memory_goal / GIB:g} GiB")
            ok &= mem <= fig.memory_goal
        rows.append(
            {
                "figure": name,
                "wall_median": wall,
                "wall_min": min(r.wall for r in runs),
                "cpu_median": cpu,
                "ratio": ratio,
                "cpu_ratio": cpu / base_cpu,
                "peak_rss_mib": mem / 2**20,
                "goal": ", ".join(goals),
                "met": ok if goals else None,
            }
        )
    if "stats@scale" in results and "stats" in results:
        scale = statistics.median(r.wall for r in results["stats@scale"])
        stats = statistics.median(r.wall for r in results["stats"])
        row = next(r for r in rows if r["figure"] == "stats@scale")
        row["vs_stats"] = scale / stats
        row["goal"] += ", <= 10x stats"
        row["met"] = bool(row["met"]) and scale / stats <= 10
    return rows


def dataset_events(path: Path | None) -> int | None:
    """Events stored in a dataset, from its manifest (format 1: manifest.json; format 2:
    the manifest _current.json points to); None when it cannot be read."""
    if path is None:
        return None
    try:
        current = path / "_current.json"
        manifest = path / json.loads(current.read_text())["manifest"] if current.exists() else path / "manifest.json"
        data = json.loads(manifest.read_text())
        return sum(int(i["counts"]["events"]) for i in data["ingests"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, help="the JSONL log (default: the --size benchmark log)")
    parser.add_argument(
        "--size",
        choices=sorted(BENCH_LOGS),
        default="2.9m",
        help="which benchmark log, simulated once if missing: 2.9m (9,000 games, seed 11) or 1m "
        "(3,000 games, seed 12) (default: %(default)s)",
    )
    parser.add_argument("--dataset", type=Path, help="dataset for stats/report (default: ingest the log)")
    parser.add_argument("--scale-dataset", type=Path, help="a larger dataset: adds the stats@scale figure")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[n for n in FIGURES if n != "baseline"],
        help="figures to measure (default: all; the baseline always runs)",
    )
    parser.add_argument("--runs", type=int, default=3, help="rounds (default: %(default)s)")
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one, removed)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run lines on stderr")
    args = parser.parse_args()

    cli = [str(Path(sys.executable).parent / "farkle-logs")]
    bench_log, bench_args = BENCH_LOGS[args.size]
    if args.log is None:
        args.log = bench_log
    if not args.log.exists():
        if args.log != bench_log:
            parser.error(f"{args.log}: no such log")
        # the benchmark log: made once, untimed (same seed, same bytes)
        print(f"simulating {bench_log} once (untimed) ...", file=sys.stderr, flush=True)
        bench_log.parent.mkdir(parents=True, exist_ok=True)
        partial = bench_log.with_name(bench_log.name + f".partial-{os.getpid()}")
        measure(cli + ["simulate", *bench_args, "--out", str(partial), "--quiet"])
        partial.replace(bench_log)
    names = args.only or [n for n in FIGURES if n != "baseline" and (n != "stats@scale" or args.scale_dataset)]
    if "stats@scale" in names and not args.scale_dataset:
        parser.error("stats@scale needs --scale-dataset")
    names = ["baseline"] + [n for n in FIGURES if n in names]
    work = args.work or Path(tempfile.mkdtemp(prefix="farkle-ratios-"))
    work.mkdir(parents=True, exist_ok=True)
    ctx = Context(cli, args.log.resolve(), work, args.dataset, args.scale_dataset)
    try:
        if ctx.dataset is None and NEEDS_DATASET & set(names) and "ingest" not in names:
            print("ingesting the log once (untimed) for stats/report ...", file=sys.stderr, flush=True)
            out = ctx.fresh("dataset")
            measure(cli + ["ingest", str(ctx.log), "--out", str(out)])
            ctx.dataset = out
        load_before = os.getloadavg()
        results = run_rounds(ctx, names, args.runs, not args.quiet)
        rows = summarise(results)
        info = {
            "log": str(ctx.log),
            "dataset": str(ctx.dataset) if ctx.dataset else None,
            "dataset_events": dataset_events(ctx.dataset),
            "scale_dataset": str(ctx.scale_dataset) if ctx.scale_dataset else None,
            "scale_dataset_events": dataset_events(ctx.scale_dataset),
            "runs": args.runs,
            "cores": os.cpu_count(),
            "load_before": load_before,
            "load_after": os.getloadavg(),
        }
        if args.json:
            print(json.dumps({"info": info, "figures": rows}, indent=2))
            return
        print(f"log {info['log']}; dataset {info['dataset']} ({info['dataset_events'] or '?'} events)")
        if ctx.scale_dataset:
            print(f"scale dataset {info['scale_dataset']} ({info['scale_dataset_events'] or '?'} events)")
        print(
            f"median of {args.runs} alternating runs, {info['cores']} cores, load average "
            f"{info['load_before'][0]:.1f} before, {info['load_after'][0]:.1f} after"
        )
        print(f"{'figure':12} {'wall s':>8} {'min s':>8} {'cpu s':>8} {'x base':>7} {'cpu x':>6} {'peak MiB':>9}  goal")
        for row in rows:
            verdict = {True: "met", False: "NOT met", None: ""}[row["met"]]
            extra = f" ({row['vs_stats']:.1f}x stats)" if "vs_stats" in row else ""
            print(
                f"{row['figure']:12} {row['wall_median']:8.2f} {row['wall_min']:8.2f} {row['cpu_median']:8.2f} "
                f"{row['ratio']:6.2f}x {row['cpu_ratio']:5.2f}x {row['peak_rss_mib']:9.0f}  "
                f"{row['goal']} {verdict}{extra}"
            )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

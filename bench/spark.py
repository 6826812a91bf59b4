"""`--engine spark` against the local engine, ingest and stats, as ratios from one run.

Usage: .venv/bin/python bench/spark.py [--log LOG] [--runs 2] [--stats-runs N] [--cores 2] [--stages] [--scaling]
       .venv/bin/python bench/spark.py --dataset DS [--stats-runs 3] [--stages]

LOG defaults to the 2.9 M-event benchmark log (`farkle-logs simulate --games 9000 --players
3 --seed 11`, simulated into /tmp/farkle-bench/ if missing). In one process, one Spark
session (`local[CORES]`, started once; its start is printed, not counted), alternating
--runs times:
  ingest: the local engine (`ingest LOG --out DS`, its own worker processes) and
          `ingest --engine spark`; each a fresh dataset; seconds from the ingest's summary;
  stats:  after the ingests, --stats-runs times: `stats DS` on DuckDB and `stats DS --engine
          spark`, the default sections, over the dataset the first local run wrote (the
          Spark session already started and warm from its ingest; the session's start is
          not in the stats' seconds either).
Prints the medians and the ratios spark/local (the goals: ingest <= 2.0, stats <= 3.0), the
machine's load average before each timed step, and with --stages Spark's own account of
each ingest and each spark stats run (from its event log): per job and stage the wall
time, tasks, task time, and the driver's share (planning and hashing before the job,
commit after; for stats, planning and the DuckDB side). --scaling adds the
ingest at 1 core (local[1] and the local engine with one worker) for docs/spark.md's table.
--dataset DS runs only the stats pairs, over a dataset already ingested (a large log's
ingest pair takes minutes: docs/spark.md, "stats at ten times the log").

The machine is shared: quote ratios from one run of this script, with the load it printed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_LOG = Path("/tmp/farkle-bench/sim9000.jsonl")
SIMULATE = ["simulate", "--games", "9000", "--players", "3", "--seed", "11"]


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def ensure_log(path: Path) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"simulating {path} ...", flush=True)
        cli = [sys.executable, "-m", "pipeline.cli"]
        subprocess.run(cli + SIMULATE + ["--out", str(path), "--quiet"], check=True, cwd=ROOT)
    return path


def session(cores: int, event_log: Path | None):
    from pipeline.engines.spark.session import get_session

    conf = {}
    if event_log is not None:
        event_log.mkdir(parents=True, exist_ok=True)
        conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": event_log.as_uri()}
    started = time.perf_counter()
    spark = get_session(f"local[{cores}]", conf)
    return spark, time.perf_counter() - started


def _cpu_self_and_children() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _cpu_of(pid: int | None) -> float:
    """CPU seconds of a running process (the JVM), from /proc."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _jvm_pid(spark) -> int | None:
    try:
        return spark.sparkContext._gateway.proc.pid
    except Exception:
        return None


CPU: dict[str, list[float]] = {"local ingest": [], "spark ingest": []}


def ingest_local(log: Path, out: Path, workers: int | None = None) -> float:
    from pipeline.ingest.run import ingest

    cpu = _cpu_self_and_children()
    seconds = ingest([str(log)], out, workers=workers).seconds
    CPU["local ingest"].append(_cpu_self_and_children() - cpu)
    return seconds


def ingest_spark(spark, log: Path, out: Path) -> tuple[float, dict]:
    from pipeline.engines.spark.ingest import SparkEngine
    from pipeline.ingest.run import ingest

    engine = SparkEngine(spark)
    jvm = _jvm_pid(spark)
    started = time.time()
    driver, java = _cpu_self_and_children(), _cpu_of(jvm)
    seconds = ingest([str(log)], out, engine=engine).seconds
    checks = engine.last.checks if engine.last else None
    driver, java = _cpu_self_and_children() - driver, _cpu_of(jvm) - java
    tasks = (checks.parse_cpu + checks.replay_cpu) if checks else 0.0
    CPU["spark ingest"].append(driver + java + tasks)
    print(
        f"  spark ingest CPU s: driver {driver:.1f}, JVM {java:.1f}, Python tasks {tasks:.1f} "
        f"(parse {checks.parse_cpu:.1f} of {checks.parse_wall:.1f} s in tasks, "
        f"replay {checks.replay_cpu:.1f} of {checks.replay_wall:.1f} s)"
        if checks
        else "",
        flush=True,
    )
    return seconds, {"started": started, "ended": time.time(), "checks": checks}


def stats_local(ds: Path) -> float:
    from pipeline.stats import DEFAULT_SECTIONS, compute

    started = time.perf_counter()
    compute(ds, sections=list(DEFAULT_SECTIONS))
    return time.perf_counter() - started


def stats_spark(spark, ds: Path) -> float:
    from pipeline.engines.spark.stats import compute
    from pipeline.stats import DEFAULT_SECTIONS

    started = time.perf_counter()
    compute(ds, sections=list(DEFAULT_SECTIONS), spark=spark)
    return time.perf_counter() - started


# ---------------------------------------------------------------------- Spark's event log
def _events(directory: Path) -> list[dict]:
    import pyarrow as pa

    out = []
    for app in sorted(glob.glob(str(directory / "*"))):
        files = sorted(glob.glob(app + "/events_*")) if os.path.isdir(app) else [app]
        for f in files:
            if f.endswith(".zstd"):
                with pa.input_stream(f, compression="zstd") as fh:
                    text = fh.read().decode()
            else:
                text = Path(f).read_text()
            out += [json.loads(line) for line in text.splitlines() if line.strip()]
    return out


def stage_report(directory: Path, window: dict) -> list[str]:
    """Spark's jobs and stages that ran inside `window` (one ingest), from the event log."""
    jobs: dict[int, dict] = {}
    stages: dict[int, dict] = {}
    tasks: dict[int, dict] = {}
    for e in _events(directory):
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            jobs[e["Job ID"]] = {"start": e["Submission Time"] / 1000, "stages": e["Stage IDs"]}
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end"] = e["Completion Time"] / 1000
        elif kind == "SparkListenerStageCompleted":
            i = e["Stage Info"]
            stages[i["Stage ID"]] = {
                "name": i["Stage Name"].split(" at ")[0],
                "tasks": i["Number of Tasks"],
                "start": (i.get("Submission Time") or 0) / 1000,
                "end": (i.get("Completion Time") or 0) / 1000,
            }
        elif kind == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            t = tasks.setdefault(e["Stage ID"], {"run": 0.0, "max": 0.0, "shw": 0, "shr": 0, "gc": 0.0})
            run = m.get("Executor Run Time", 0) / 1000
            t["run"] += run
            t["max"] = max(t["max"], run)
            t["gc"] += m.get("JVM GC Time", 0) / 1000
            t["shw"] += (m.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
            r = m.get("Shuffle Read Metrics") or {}
            t["shr"] += r.get("Local Bytes Read", 0) + r.get("Remote Bytes Read", 0)
    inside = {j: v for j, v in jobs.items() if window["started"] <= v["start"] <= window["ended"]}
    lines = [f"  {'step':<34} {'wall s':>7} {'tasks':>5} {'task s':>7} {'max task':>8} {'shuffle MB':>10}"]
    cursor = window["started"]
    for jid, job in sorted(inside.items()):
        lines.append(f"  {'driver (before job %d)' % jid:<34} {job['start'] - cursor:>7.2f}")
        for sid in sorted(job["stages"]):
            s, t = stages.get(sid), tasks.get(sid)
            if not s or not t:
                continue  # skipped (its output was cached)
            mb = max(t["shw"], t["shr"]) / 2**20
            lines.append(
                f"  {'stage %d: %s' % (sid, s['name']):<34} {s['end'] - s['start']:>7.2f} {s['tasks']:>5} "
                f"{t['run']:>7.2f} {t['max']:>8.2f} {mb:>10.1f}"
            )
        lines.append(f"  {'job %d in all' % jid:<34} {job.get('end', job['start']) - job['start']:>7.2f}")
        cursor = job.get("end", job["start"])
    lines.append(f"  {'driver (after the last job)':<34} {window['ended'] - cursor:>7.2f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", type=Path, default=DEFAULT_LOG)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--stages", action="store_true", help="Spark's per-stage account of each ingest")
    ap.add_argument("--scaling", action="store_true", help="also ingest at 1 core (docs/spark.md's table)")
    ap.add_argument("--no-stats", action="store_true")
    ap.add_argument("--stats-runs", type=int, help="runs of the stats pair (default: --runs)")
    ap.add_argument("--dataset", type=Path, help="only the stats pairs, over this dataset (no ingest)")
    args = ap.parse_args()
    if args.dataset is not None:
        args.runs, args.no_stats, args.scaling = 0, False, False
        args.stats_runs = 3 if args.stats_runs is None else args.stats_runs
        print(f"dataset: {args.dataset}; {load()}", flush=True)
    else:
        log = ensure_log(args.log)
        events = sum(chunk.count(b"\n") for chunk in iter(lambda fh=open(log, "rb"): fh.read(1 << 24), b""))
        print(f"log: {log} ({events:,} lines, {log.stat().st_size / 2**20:.0f} MiB); {load()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    event_log = work / "events" if args.stages else None
    stats_over = args.dataset or work / "local-0"  # the first local ingest's dataset, unless given
    spark, start = session(args.cores, event_log)
    print(f"spark session local[{args.cores}] started in {start:.1f} s ({load()})", flush=True)
    results: dict[str, list[float]] = {"local ingest": [], "spark ingest": [], "local stats": [], "spark stats": []}
    loads: dict[str, list[str]] = {k: [] for k in results}
    windows = []
    try:
        for n in range(args.runs):
            loads["local ingest"].append(load())
            results["local ingest"].append(ingest_local(log, work / f"local-{n}"))
            loads["spark ingest"].append(load())
            seconds, window = ingest_spark(spark, log, work / f"spark-{n}")
            results["spark ingest"].append(seconds)
            windows.append(window)
            print(
                f"run {n + 1}: local {results['local ingest'][-1]:.1f} s ({loads['local ingest'][-1]}), "
                f"spark {seconds:.1f} s ({loads['spark ingest'][-1]}); {window['checks']}",
                flush=True,
            )
            if n:
                shutil.rmtree(work / f"spark-{n}", ignore_errors=True)
        stats_windows = []
        for n in range(0 if args.no_stats else (args.stats_runs if args.stats_runs is not None else args.runs)):
            for name, call in (("local stats", stats_local), ("spark stats", lambda ds: stats_spark(spark, ds))):
                loads[name].append(load())
                started = time.time()
                results[name].append(call(stats_over))
                if name == "spark stats":
                    stats_windows.append({"started": started, "ended": time.time()})
            print(
                f"stats run {n + 1}: local {results['local stats'][-1]:.2f} s ({loads['local stats'][-1]}), "
                f"spark {results['spark stats'][-1]:.2f} s ({loads['spark stats'][-1]}), "
                f"ratio {results['spark stats'][-1] / results['local stats'][-1]:.2f}",
                flush=True,
            )
        print(f"\n{'step':<14} {'median s':>9}  runs (load average before each)")
        for name, values in results.items():
            if values:
                runs = ", ".join(f"{v:.2f} ({ld})" for v, ld in zip(values, loads[name]))
                print(f"{name:<14} {statistics.median(values):>9.2f}  {runs}")
        if results["spark ingest"]:
            ratio = statistics.median(results["spark ingest"]) / statistics.median(results["local ingest"])
            print(f"\nspark/local ingest: {ratio:.2f}x (goal <= 2.0)")
            cpu = statistics.median(CPU["spark ingest"]) / statistics.median(CPU["local ingest"])
            print(
                f"spark/local ingest CPU seconds: {cpu:.2f}x (local {statistics.median(CPU['local ingest']):.1f} s: "
                f"this process and its workers; spark: driver, JVM and Python tasks)"
            )
        if not args.no_stats:
            ratio = statistics.median(results["spark stats"]) / statistics.median(results["local stats"])
            print(f"spark/local stats:  {ratio:.2f}x (goal <= 3.0)")
        if args.stages and event_log is not None:
            for n, window in enumerate(windows):
                print(f"\nspark ingest, run {n + 1} ({window['checks']}):")
                print("\n".join(stage_report(event_log, window)))
            for n, window in enumerate(stats_windows):
                print(f"\nspark stats, run {n + 1}:")
                print("\n".join(stage_report(event_log, window)))
        if args.scaling:
            spark.stop()
            spark, start1 = session(1, None)
            s1 = ingest_spark(spark, log, work / "spark-1core")[0]
            l1 = ingest_local(log, work / "local-1core", workers=1)
            print(
                f"\n1 core: spark local[1] {s1:.1f} s, local engine (1 worker) {l1:.1f} s ({load()}; "
                f"session started in {start1:.1f} s)"
            )
    finally:
        spark.stop()  # before its event log's directory goes (else its shutdown hook fails to close it)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

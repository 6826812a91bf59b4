"""`farkle-logs audit --engine spark`: the audit's findings computed by the Spark ingest jobs.

The logs go through the same two jobs as `ingest --engine spark` (parse per file, replay
per bucket of games with `replay_partition`), into a scratch directory instead of a
dataset; the findings and games tables they write are read back into the `AuditReport`
the local audit renders. So the findings of `audit --engine spark` are the dataset's
findings of the same logs, which are `audit`'s.

What the local audit has and this has not: the turn timelines of the text output (the
replay per bucket keeps no trace), scoresheets and --coach (one game: run them locally).
Findings are listed by file (as given), line, then game and seq, which is the order the
local audit's single replay meets them in on the tested logs; games are listed by id (the
local audit lists them as they end).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset import tables
from pipeline.audit.game_stores import GameStore
from pipeline.audit.run import AuditReport
from pipeline.engines.spark.ingest import SparkEngine
from pipeline.ingest import incremental
from pipeline.ingest.route import bucket_count
from pipeline.reader.split import BLOCK_BYTES, MAX_LINE_BYTES
from pipeline.ingest.workers import Config
from pipeline.reader.inputs import InputSource
from pipeline.model import FileProblem, Finding, GameResult
from pipeline.rules import Ruleset

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

AUDIT_ID = "audit"


def audit(
    spark: "SparkSession",
    sources: list[InputSource],
    default_rules: Ruleset | None = None,
    games: set[str] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> AuditReport:
    """The AuditReport of `sources` (files, in the order given) computed on Spark."""
    from pipeline.ingest.run import SourceCounts

    default_rules = default_rules or Ruleset.builtin("standard")
    engine = SparkEngine(spark)
    scratch = Path(tempfile.mkdtemp(prefix="farkle-audit-"))
    try:
        for name in tables.TABLES:
            (scratch / name).mkdir()
        total = sum(s.path.stat().st_size for s in sources if s.path is not None and s.path.is_file())
        config = Config(AUDIT_ID, scratch, default_rules, bucket_count(total, engine.parallelism), max_line_bytes)
        ordinals: dict[str, int] = {}
        for source in sources:
            ordinals.setdefault(incremental.file_key(source.name, AUDIT_ID), len(ordinals))
        reading = engine.reading(config, incremental.Stored(ordinals=ordinals), lambda *a, **k: None)
        counts = reading.read_all([(s, SourceCounts(path=s.name)) for s in sources], BLOCK_BYTES)
        reading.replay_all([])
        files = reading.close()
        findings = _read(files["findings"], "findings")
        game_rows = _read(files["games"], "games")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = AuditReport()
    order = {s.name: i for i, s in reversed(list(enumerate(sources)))}
    rows = findings.to_pylist()
    rows.sort(
        key=lambda r: (
            order.get(r["file"], len(order)),
            r["line"] is None,
            r["line"] or 0,
            r["game_id"] or "",
            r["seq"] if r["seq"] is not None else -1,
            r["code"],
        )
    )
    report.findings.extend(_finding(r) for r in rows if games is None or r["game_id"] in games)
    report.games = GameStore(
        sorted(
            (_game(r) for r in game_rows.to_pylist() if games is None or r["game_id"] in games),
            key=lambda g: g.game_id,
        )
    )
    report.file_problems = [FileProblem(p["file"], p["line"], p["reason"]) for c in counts for p in c.problems]
    report.events = sum(c.events for c in counts)
    report.lines = sum(c.lines for c in counts)
    return report


def _read(paths: list[Path], table: str) -> pa.Table:
    schema = tables.TABLES[table]
    return pa.concat_tables([pq.read_table(p, schema=schema) for p in paths]) if paths else schema.empty_table()


def _number(value: float | None) -> int | float | None:
    """The table stores claimed/expected as doubles; the audit's records hold ints."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _finding(r: dict) -> Finding:
    ts = r["ts"].strftime("%Y-%m-%dT%H:%M:%S.%fZ") if r["ts"] is not None else None
    return Finding(
        r["game_id"],
        r["seq"],
        r["file"],
        r["line"],
        r["player"],
        r["code"],
        r["severity"],
        r["message"],
        _number(r["claimed"]),
        _number(r["expected"]),
        ts,
    )


def _game(r: dict) -> GameResult:
    return GameResult(
        r["game_id"],
        tuple(r["players"] or ()),
        Ruleset.from_value(json.loads(r["ruleset"])) if r["ruleset"] is not None else None,
        json.loads(r["claimed"]) if r["claimed"] is not None else {},
        json.loads(r["corrected"]) if r["corrected"] is not None else {},
        r["winner_claimed"],
        r["winner_corrected"],
        bool(r["complete"]),
        events=r["events"] or 0,
        ended=r["ended"],
    )

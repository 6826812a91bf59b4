"""Issue 11 item 7: a dataset path with glob characters means that directory only.

DuckDB expands `*`, `?` and `[...]` in the paths given to read_parquet, so `stats data[1]`
failed and `stats 'data*x'` also read `dataZx`. Readers now read the manifest's files with
those characters escaped. Each case has a decoy directory the pattern would match, holding
another dataset.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest import ingest
from tests.dataset_helpers import two_logs
from tests.test_ingest import count

runner = CliRunner()

CASES = [("data[1]", "data1"), ("data*x", "dataZx"), ("data?1", "dataA1"), ("a[b]*?{c,d}", "ab{c,d}")]


def overall(stdout: str) -> dict:
    rows = json.loads(stdout)["tables"]["player_summary"]
    return next(r for r in rows if r["scope"] == "overall")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    a, _ = two_logs(tmp_path_factory.mktemp("logs"))
    decoy = a.parent / "decoy.jsonl"  # other games, other players
    decoy.write_text(a.read_text().replace('"g5-', '"zz-').replace('"ana"', '"qqdecoyqq"'))
    return a, decoy


@pytest.mark.parametrize("name, decoy_name", CASES)
def test_stats_report_and_ingest_read_that_directory_only(tmp_path, logs, name, decoy_name):
    a, decoy_log = logs
    ingest([str(decoy_log)], tmp_path / decoy_name)
    ds = tmp_path / name
    first = ingest([str(a)], ds)
    plain = tmp_path / "plain"
    shutil.copytree(ds, plain, symlinks=True)

    result = runner.invoke(app, ["stats", str(ds), "-s", "players", "-f", "json"])
    assert result.exit_code == 0, result.output
    expected = runner.invoke(app, ["stats", str(plain), "-s", "players", "-f", "json"])
    assert overall(result.stdout) == overall(expected.stdout)
    assert "qqdecoyqq" not in result.stdout

    out = tmp_path / "r.html"
    report = runner.invoke(app, ["report", str(ds), "-o", str(out)])
    assert report.exit_code == 0, report.output
    assert "qqdecoyqq" not in out.read_text() and "ana" in out.read_text()

    # the decoy's events are new to this dataset: an index that also read the decoy would
    # call every one of them a duplicate
    decoy_events = count(tmp_path / decoy_name, "events")
    again = ingest([str(decoy_log)], ds)
    assert (again.events, again.duplicates) == (decoy_events, 0)
    assert count(ds, "events") == first.events + decoy_events
    check = runner.invoke(app, ["dataset", "check", str(ds)])
    assert check.exit_code == 0, check.output

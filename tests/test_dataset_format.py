"""Dataset format version 2 (COORDINATION decision 1, docs/dataset.md "Layout"): the pointer
`_current.json` is the authority, the manifest lists every file, readers read those lists,
the convenience links follow the pointer, version 1 is refused."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import DatasetError, open_dataset
from pipeline.ingest import StoreError, ingest
from pipeline.dataset.store import Store
from pipeline.dataset.tables import DATASET_VERSION, TABLES
from tests.dataset_helpers import farkle, two_logs, two_snapshots
from tests.test_ingest import count, everything

runner = CliRunner()


def listed(ds: Path) -> dict[str, set[str]]:
    manifest = json.loads((ds / ".snapshots" / "000002" / "manifest.json").read_text())
    return {t: set(files) for t, files in manifest["tables"].items()}


def test_the_layout_of_version_5(tmp_path):
    built = two_snapshots(tmp_path)
    assert DATASET_VERSION == 5  # 5: version 3's layout, with the turn-start totals, dice keys and keep links stored
    pointer = json.loads((built.ds / "_current.json").read_text())
    assert pointer == {
        "format": "farkle-logs",
        "dataset_version": 5,
        "snapshot": 2,
        "manifest": ".snapshots/000002/manifest.json",
    }
    snap = built.ds / ".snapshots" / "000002"
    # the manifest lists every file of every table, and nothing else is there
    assert listed(built.ds) == {t: {p.name for p in (snap / t).iterdir()} for t in TABLES}
    assert set(listed(built.ds)) == set(TABLES)
    # the convenience links follow the pointer
    assert os.readlink(built.ds / ".current") == ".snapshots/000002"
    for name in ("manifest.json", *TABLES):
        assert os.readlink(built.ds / name) == f".current/{name}"
    # the previous snapshot is kept until the next commit, older ones are removed
    assert sorted(os.listdir(built.ds / ".snapshots")) == ["000001", "000002"]


def test_the_pointer_not_the_links_decides_what_readers_see(tmp_path):
    built = two_snapshots(tmp_path)
    # a stale link (as after a crash between the pointer and the links) misleads no reader
    os.remove(built.ds / ".current")
    os.symlink(".snapshots/000001", built.ds / ".current")
    assert open_dataset(built.ds).snapshot == 2
    assert count(built.ds, "events") == built.events_a + built.events_b
    stats = runner.invoke(app, ["stats", str(built.ds), "-s", "players", "-f", "json"])
    totals = [r for r in json.loads(stats.stdout)["tables"]["player_summary"] if r["scope"] == "overall"]
    assert totals[0]["games"] == 12
    # the next writer re-points the links
    Store.open(built.ds).close()
    assert os.readlink(built.ds / ".current") == ".snapshots/000002"


def test_killed_after_the_pointer_the_new_snapshot_is_current_and_the_links_catch_up(tmp_path):
    a, b = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    proc = farkle("ingest", b, "--out", ds, env={"FARKLE_LOGS_CRASH_AT": "after_flip"})
    assert proc.returncode == -signal.SIGKILL
    assert json.loads((ds / "_current.json").read_text())["snapshot"] == 2
    assert os.readlink(ds / ".current") == ".snapshots/000001"  # not yet re-pointed
    assert open_dataset(ds).snapshot == 2
    one = tmp_path / "one"
    ingest([str(a), str(b)], one)
    assert everything(ds) == everything(one)
    again = ingest([str(b)], ds)  # nothing left to do, but the links are fixed on open
    assert again.files_skipped == 1
    assert os.readlink(ds / ".current") == ".snapshots/000002"


def test_killed_before_the_pointer_nothing_changed(tmp_path):
    a, b = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    proc = farkle("ingest", b, "--out", ds, env={"FARKLE_LOGS_CRASH_AT": "before_flip"})
    assert proc.returncode == -signal.SIGKILL
    assert (ds / ".snapshots" / "000002" / "manifest.json").exists()  # complete, never committed
    assert open_dataset(ds).snapshot == 1 and everything(ds) == before
    check = runner.invoke(app, ["dataset", "check", str(ds)])
    assert check.exit_code == 0 and "snapshot(s) 2 are not current" in check.stdout
    assert ingest([str(b)], ds).snapshot == 2  # removes the uncommitted snapshot, commits its own


def test_readers_ignore_files_the_manifest_does_not_list(tmp_path):
    built = two_snapshots(tmp_path)
    other_log = tmp_path / "logs" / "c.jsonl"
    other_log.write_text(built.a.read_text().replace('"g5-', '"c5-'))  # other games
    other = tmp_path / "other"
    ingest([str(other_log)], other)
    before = runner.invoke(app, ["stats", str(built.ds), "-f", "json"]).stdout
    snap = built.ds / ".snapshots" / "000002"
    for table in TABLES:  # another dataset's files, dropped into every table's directory
        for stray in (other / ".snapshots" / "000001" / table).iterdir():
            shutil.copy(stray, snap / table / f"zz-{stray.name}")
    assert runner.invoke(app, ["stats", str(built.ds), "-f", "json"]).stdout == before
    summary = ingest([str(other_log)], built.ds)  # ingest's duplicate index ignores them too
    assert (summary.events, summary.duplicates) == (built.events_a, 0)
    assert count(built.ds, "events") == 2 * built.events_a + built.events_b


def test_a_version_1_dataset_is_refused(tmp_path):
    built = two_snapshots(tmp_path)
    # what format 1 looked like: no _current.json, manifest.json -> .current/manifest.json
    os.remove(built.ds / "_current.json")
    manifest_path = built.ds / ".snapshots" / "000002" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["dataset_version"] = 1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="dataset version 1, .*ingest the logs again into a new directory"):
        ingest([str(built.a)], built.ds)
    with pytest.raises(DatasetError, match="dataset version 1"):
        open_dataset(built.ds)
    result = runner.invoke(app, ["stats", str(built.ds)])
    assert result.exit_code == 2 and "dataset version 1" in result.stderr
    assert runner.invoke(app, ["dataset", "check", str(built.ds)]).exit_code == 2


def test_the_store_api_other_areas_write_through(tmp_path):
    """Store.open/attach/manifest/staging_dir/table_files/commit/discard_staging/close."""
    root = tmp_path / "ds"
    store = Store.open(root)
    try:
        assert store.manifest["snapshot"] == 0 and store.table_files("events") == []
        staging = store.staging_dir("run1")
        games = pa.table(
            {name: pa.nulls(1, field.type) for name, field in zip(TABLES["games"].names, TABLES["games"])},
            schema=TABLES["games"],
        )
        part = staging / "games" / "part-run1-0000.parquet"
        pq.write_table(games, part)
        manifest = {k: v for k, v in store.manifest.items() if k not in ("tables", "snapshot")}
        store.commit(manifest, {"games": [part]}, {})
        assert store.manifest["snapshot"] == 1
        assert store.table_files("games") == [root / ".snapshots" / "000001" / "games" / "part-run1-0000.parquet"]
        assert not (root / ".staging").exists()
        other = Store.attach(root)
        assert other.table_files("games") == store.table_files("games")
        store.staging_dir("run2")
        store.discard_staging()
        assert not (root / ".staging").exists()
    finally:
        store.close()
    assert open_dataset(root).table_files("games")[0].name == "part-run1-0000.parquet"

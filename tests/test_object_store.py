"""Logs and datasets on an object store (pipeline/storage.py, pipeline/dataset/remote.py),
against a real S3-compatible server on localhost (tests/s3server.py, moto).

The same logs are ingested from `s3://` into `s3://` and from a local directory into a local
one: the tables, the summaries, `stats` and `report` must agree. The commit protocol must
hold where there is no rename and no lock: an ingest killed before its commit point leaves
the previous snapshot current (and its lock object, which a later writer takes over only
once the lease ran out), a manifest already created for the next snapshot fences a second
writer off, and two ingests started together never both commit the same snapshot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from pipeline import storage
from pipeline.cli.main import app
from pipeline.dataset import tables
from pipeline.dataset.layout import open_dataset
from pipeline.dataset.remote import LockHeld, Lease, commit_remote, snapshot_prefix
from pipeline.ingest.run import ingest
from pipeline.dataset.store import StoreError
from tests.spark.compare import same_value
from tests.spark.logs import make_logs

ROOT = Path(__file__).resolve().parents[1]
BOOKKEEPING = ("dataset", "ingest_id", "seconds", "events_per_second")


def s3() -> fsspec.AbstractFileSystem:
    return fsspec.filesystem("s3")


def read_table(dataset: str | Path, table: str) -> pa.Table:
    ds = open_dataset(dataset)
    parts = [storage.read_parquet(str(p), schema=tables.TABLES[table]) for p in ds.table_files(table)]
    data = pa.concat_tables(parts) if parts else tables.TABLES[table].empty_table()
    data = data.drop_columns(["ingest_id"]) if "ingest_id" in data.column_names else data
    return data.sort_by(
        [(c, "ascending") for c in data.column_names if not pa.types.is_list(data.schema.field(c).type)]
    )


def summary(s) -> dict:
    return {k: v for k, v in s.to_dict().items() if k not in BOOKKEEPING}


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The command in a process of its own (a crash point kills it; two run at once)."""
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def logs(tmp_path_factory, s3_server):
    """The messy logs (tests/spark/logs.py) locally and under s3://<bucket>/logs/."""
    from tests import s3server

    local = tmp_path_factory.mktemp("logs") / "logs"
    make_logs(local)
    bucket = s3server.new_bucket()
    s3().put(str(local) + "/", f"{bucket}/logs/", recursive=True)
    return local, f"s3://{bucket}"


@pytest.fixture(scope="module")
def both(logs, tmp_path_factory):
    """The logs ingested from disk to disk and from S3 to S3 by the local engine."""
    local, base = logs
    out = tmp_path_factory.mktemp("ds") / "local"
    return {
        "local": (out, ingest([str(local)], out)),
        "s3": (f"{base}/ds", ingest([f"{base}/logs"], f"{base}/ds")),
    }


def test_ingest_from_s3_to_s3_gives_the_local_summary(both):
    (_, on_disk), (_, on_s3) = both["local"], both["s3"]
    want, got = summary(on_disk), summary(on_s3)
    # each file is named as given: the local path or the URL
    for problem in want["problems"] + got["problems"]:
        problem["file"] = Path(problem["file"]).name
    for key in ("skipped",):
        want.pop(key), got.pop(key)
    assert got == want
    assert on_s3.events > 0 and on_s3.rejects > 0 and on_s3.file_problems == 0


@pytest.mark.parametrize("table", list(tables.TABLES))
def test_ingest_to_s3_writes_the_local_tables(logs, both, table):
    local, remote = read_table(both["local"][0], table), read_table(both["s3"][0], table)
    assert local.num_rows > 0 and local.num_rows == remote.num_rows
    names = [c for c in local.column_names if c not in ("source_file", "file")]
    local, remote = local.select(names), remote.select(names)
    if "message" in names:  # a message may name a file: the local path or the URL
        folder, base = logs
        local = local.set_column(
            names.index("message"), "message", pc.replace_substring(local.column("message"), str(folder), "LOGS")
        )
        remote = remote.set_column(
            names.index("message"), "message", pc.replace_substring(remote.column("message"), f"{base}/logs", "LOGS")
        )
    assert remote.equals(local), table


def test_the_dataset_on_s3_is_format_2_with_the_pointer_naming_snapshot_1(both):
    url = both["s3"][0]
    pointer = json.loads(s3().cat(url + "/_current.json"))
    assert pointer["snapshot"] == 1 and pointer["manifest"] == ".snapshots/000001/manifest.json"
    manifest = json.loads(s3().cat(f"{url}/{pointer['manifest']}"))
    for table, files in manifest["tables"].items():
        listed = {storage.name(e) for e in s3().ls(f"{url}/.snapshots/000001/{table}")} if files else set()
        assert set(files) == listed, table
    assert not s3().exists(url + "/.lock")  # released


def test_stats_and_report_read_the_dataset_on_s3(both, tmp_path):
    runner = CliRunner()
    out = {name: runner.invoke(app, ["stats", str(path), "-f", "json"]) for name, (path, _) in both.items()}
    assert out["local"].exit_code == out["s3"].exit_code == 0, out["s3"].output
    local, remote = json.loads(out["local"].stdout)["tables"], json.loads(out["s3"].stdout)["tables"]
    assert remote.keys() == local.keys()
    for name in local:  # doubles summed in another file order differ in the last bits
        assert len(remote[name]) == len(local[name]) and all(map(same_value, local[name], remote[name])), name
    page = tmp_path / "report.html"
    made = runner.invoke(app, ["report", both["s3"][0], "--out", str(page)])
    assert made.exit_code == 0, made.output
    assert page.stat().st_size > 10_000 and "<html" in page.read_text(encoding="utf-8")[:2000].lower()


def test_a_second_ingest_on_s3_skips_known_content_and_adds_new_files(logs, tmp_path):
    local, base = logs
    url = f"{base}/inc"
    first = ingest([f"{base}/logs/a-first-half.jsonl"], url)
    extra = tmp_path / "later.jsonl"
    lines = (local / "a-first-half.jsonl").read_bytes().split(b"\n")
    extra.write_bytes(b"\n".join(lines[:30]) + b"\n")
    s3().put(str(extra), url.removeprefix("s3://") + "-logs/later.jsonl")
    second = ingest([f"{base}/logs/a-first-half.jsonl", f"{url}-logs/later.jsonl"], url)
    assert first.snapshot == 1 and second.snapshot == 2
    assert second.files_skipped == 1 and second.files == 1 and second.events > 0
    assert open_dataset(url).snapshot == 2
    listed = sorted(storage.name(p) for p in s3().ls(url.removeprefix("s3://") + "/.snapshots"))
    assert listed == ["000001", "000002"]


@pytest.mark.parametrize("step", ["read_done", "before_flip"])
def test_an_interrupted_ingest_leaves_the_previous_snapshot(logs, step):
    """Killed (SIGKILL) before its commit point: the pointer still names snapshot 1, and
    every reader sees it. Its lock object stays: another ingest is refused until the lease
    ran out, then takes over, removes the half-built snapshot and commits snapshot 2."""
    _, base = logs
    url = f"{base}/crash-{step}"
    assert cli("ingest", f"{base}/logs/c-split-1.jsonl", "--out", url).returncode in (0, 1)
    before = CliRunner().invoke(app, ["stats", url, "-f", "json"])
    # the writer that dies holds a short lease, so the test need not wait out the default one
    short = {"FARKLE_LOGS_LOCK_LEASE": "10", "FARKLE_LOGS_CRASH_AT": step}
    killed = cli("ingest", f"{base}/logs/d-split-2.jsonl", "--out", url, env=short)
    assert killed.returncode == -9, killed.stderr
    assert json.loads(s3().cat(url + "/_current.json"))["snapshot"] == 1
    after = CliRunner().invoke(app, ["stats", url, "-f", "json"])
    assert after.exit_code == 0 and after.stdout == before.stdout
    held = json.loads(s3().cat(url + "/.lock"))  # the dead writer's
    if time.time() < held["expires"] + held["lease"]:
        from pipeline.dataset.remote import RemoteStore

        with pytest.raises(StoreError, match="another ingest is writing"):
            RemoteStore.open(url)
    time.sleep(max(0.0, held["expires"] + held["lease"] + 0.5 - time.time()))  # the lease and its grace run out
    done = cli("ingest", f"{base}/logs/d-split-2.jsonl", "--out", url)
    assert done.returncode in (0, 1), done.stderr
    assert open_dataset(url).snapshot == 2
    snapshots = sorted(storage.name(p) for p in s3().ls(url.removeprefix("s3://") + "/.snapshots"))
    assert snapshots == ["000001", "000002"]


def test_a_manifest_already_created_for_the_next_snapshot_fences_the_commit_off(logs, tmp_path):
    """The second line of defence: two writers that both got past the lock cannot both
    commit snapshot n (the manifest is created only if absent), and the loser's pointer
    is never written."""
    from pipeline.dataset.remote import RemoteStore

    _, base = logs
    url = f"{base}/fence"
    ingest([f"{base}/logs/c-split-1.jsonl"], url)
    store = RemoteStore.open(url)
    try:
        s3().pipe(url.removeprefix("s3://") + "/.snapshots/000002/manifest.json", b"{}")  # the other writer's
        with pytest.raises(StoreError, match="another writer committed snapshot 2"):
            store.commit({"files": store.manifest["files"], "ingests": store.manifest["ingests"]}, {}, {})
    finally:
        store.close()
    assert json.loads(s3().cat(url + "/_current.json"))["snapshot"] == 1
    assert s3().cat(url.removeprefix("s3://") + "/.snapshots/000002/manifest.json") == b"{}"  # left alone
    assert open_dataset(url).snapshot == 1


def test_commit_checks_the_lock_is_still_ours(logs):
    _, base = logs
    url = f"{base}/lost"
    lease = Lease(url, "test")
    lease.acquire()
    try:
        s3().pipe(
            url.removeprefix("s3://") + "/.lock", json.dumps({"token": "other", "expires": time.time() + 60}).encode()
        )
        manifest = {"tables": {t: [] for t in tables.TABLES}, "snapshot": 0, "files": [], "ingests": []}
        with pytest.raises(LockHeld):
            commit_remote(url, manifest, {"files": [], "ingests": []}, {}, {}, lease)
        assert not s3().exists(url.removeprefix("s3://") + "/_current.json")
        assert not s3().exists(snapshot_prefix(url, 1).removeprefix("s3://") + "/manifest.json")
    finally:
        lease.release()
    assert s3().exists(url.removeprefix("s3://") + "/.lock")  # not ours: left in place


def test_a_held_lock_refuses_a_second_writer_with_exit_2(logs):
    _, base = logs
    url = f"{base}/held"
    lease = Lease(url, "the first ingest")
    lease.acquire()
    try:
        out = CliRunner().invoke(app, ["ingest", f"{base}/logs/c-split-1.jsonl", "--out", url])
        assert out.exit_code == 2 and "another ingest is writing" in out.stderr and "the first ingest" in out.stderr
        with pytest.raises(StoreError):
            from pipeline.dataset.remote import RemoteStore

            RemoteStore.open(url)
    finally:
        lease.release()
    assert not s3().exists(url.removeprefix("s3://") + "/.lock")


def test_two_ingests_started_together(logs):
    """Both start at once on different logs: one holds the lock and commits; the other is
    refused (exit 2) or, if the first was already done, commits the next snapshot. Never
    both the same snapshot, and the dataset holds the events of exactly the ingests that
    succeeded."""
    _, base = logs
    url = f"{base}/race"
    names = ["c-split-1.jsonl", "e-bad-lines.jsonl"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "ingest", f"{base}/logs/{n}", "--out", url, "-f", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for n in names
    ]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    ok = [json.loads(out) for code, out, _ in results if code in (0, 1)]
    refused = [err for code, _, err in results if code == 2]
    assert ok and len(ok) + len(refused) == 2, results
    assert all("another ingest is writing" in err for err in refused), refused
    assert sorted(s["snapshot"] for s in ok) == list(range(1, len(ok) + 1))
    ds = open_dataset(url)
    assert ds.snapshot == len(ok)
    assert read_table(url, "events").num_rows == sum(s["events"] for s in ok)
    assert not s3().exists(url.removeprefix("s3://") + "/.lock")


def test_logs_named_by_glob_and_prefix_on_s3(logs):
    from pipeline.reader.inputs import resolve

    _, base = logs
    by_prefix = resolve([f"{base}/logs"])
    assert [s.name for s in by_prefix.sources] == sorted(s.name for s in by_prefix.sources)
    assert {storage.name(s.name) for s in by_prefix.sources} >= {"a-first-half.jsonl", "b-second-half.jsonl.gz"}
    by_glob = resolve([f"{base}/logs/*split*.jsonl"])
    assert [storage.name(s.name) for s in by_glob.sources] == ["c-split-1.jsonl", "d-split-2.jsonl"]
    missing = resolve([f"{base}/logs/nothing.jsonl"])
    assert missing.problems and "no such file" in str(missing.problems[0])


def test_a_url_whose_filesystem_is_not_installed_is_exit_2(tmp_path):
    out = CliRunner().invoke(app, ["ingest", "nosuchfs://bucket/logs", "--out", str(tmp_path / "ds")])
    assert out.exit_code == 2 and "nosuchfs://" in out.stderr and "Traceback" not in out.output


def test_dataset_check_and_repair_say_they_work_on_local_datasets(both):
    for command in ("check", "repair"):
        out = CliRunner().invoke(app, ["dataset", command, both["s3"][0]])
        assert out.exit_code == 2 and "works on a local dataset" in out.stderr, out.output


def test_audit_reads_logs_on_s3_as_local_files(logs):
    local, base = logs
    names = ["a-first-half.jsonl", "b-second-half.jsonl.gz", "c-split-1.jsonl", "d-split-2.jsonl"]
    runner = CliRunner()
    want = runner.invoke(app, ["audit", *[str(local / n) for n in names], "-f", "json"])
    got = runner.invoke(app, ["audit", *[f"{base}/logs/{n}" for n in names], "-f", "json"])
    assert want.exit_code == got.exit_code == 1, got.output
    strip = lambda text, prefix: text.replace(prefix, "LOGS")  # noqa: E731
    assert json.loads(strip(got.stdout, f"{base}/logs")) == json.loads(strip(want.stdout, str(local)))


def test_a_prefix_holding_other_objects_is_not_made_a_dataset(logs):
    _, base = logs
    out = CliRunner().invoke(app, ["ingest", f"{base}/logs/c-split-1.jsonl", "--out", f"{base}/logs"])
    assert out.exit_code == 2 and "holds other objects" in out.stderr, out.output
    assert not s3().exists(base.removeprefix("s3://") + "/logs/_current.json")
    assert not s3().exists(base.removeprefix("s3://") + "/logs/.lock")

"""Issue 11 item 6: problems of the store are usage errors: exit 2, one line naming the path
and the cause, no traceback, the previous snapshot intact.

A full disk is tested three ways: ENOSPC injected where ingest writes its staging files
(monkeypatch), at the store's own write steps (FARKLE_LOGS_FAIL_AT, in a subprocess), and
for real on a tiny tmpfs mounted in a user namespace (`unshare -U -r -m`, no root needed;
skipped where the kernel does not allow it). A read-only dataset uses the same tmpfs,
remounted read-only.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest import ingest
from tests.dataset_helpers import ROOT, farkle, no_traceback, two_logs
from tests.test_ingest import everything

runner = CliRunner()


def one_snapshot(tmp_path: Path) -> tuple[Path, Path, dict]:
    a, b = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    return ds, b, everything(ds)


def test_disk_full_while_writing_staging_files(tmp_path, monkeypatch):
    ds, b, before = one_snapshot(tmp_path)
    pointer = (ds / "_current.json").read_bytes()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    result = runner.invoke(app, ["ingest", str(b), "--out", str(ds)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr == (
        f"error: cannot write to the dataset: {ds}: No space left on device; nothing was ingested, "
        "the dataset is as it was\n"
    )
    monkeypatch.undo()
    assert (ds / "_current.json").read_bytes() == pointer
    assert everything(ds) == before
    assert not (ds / ".staging").exists()  # the run's files do not keep filling the disk


@pytest.mark.parametrize("step", ["manifest", "pointer"])
def test_disk_full_at_the_commit_steps(tmp_path, step):
    ds, b, before = one_snapshot(tmp_path)
    proc = farkle("ingest", b, "--out", ds, env={"FARKLE_LOGS_FAIL_AT": step})
    err = no_traceback(proc)
    assert proc.returncode == 2
    assert err.count("\n") == 1 and "No space left on device" in err and str(ds) in err
    assert "nothing was committed, snapshot 1 is still current" in err
    assert everything(ds) == before
    assert sorted(os.listdir(ds / ".snapshots")) == ["000001"]  # the half-built one is gone
    assert not (ds / ".staging").exists() and not (ds / "_current.json.tmp").exists()
    assert ingest([str(b)], ds).snapshot == 2  # and the next ingest works


def test_a_leftover_staging_folder_is_cleaned_or_named(tmp_path, monkeypatch):
    ds, b, _ = one_snapshot(tmp_path)
    (ds / ".staging").write_text("a file where the staging folder goes")
    assert ingest([str(b)], ds).snapshot == 2
    assert not (ds / ".staging").exists()

    (ds / ".staging" / "old-run" / "events").mkdir(parents=True)
    real_rmtree = shutil.rmtree

    def refuse(path, *args, **kwargs):
        if Path(path).name == ".staging" and not kwargs.get("ignore_errors"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", refuse)
    result = runner.invoke(app, ["ingest", str(b), "--out", str(ds)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot remove the leftover staging folder of an interrupted ingest: ")
    assert f"{ds / '.staging'}: Permission denied" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories (see the tmpfs test)")
def test_a_read_only_directory_without_root(tmp_path):
    ds, b, before = one_snapshot(tmp_path)
    modes = {p: p.stat().st_mode for p in [ds, *ds.rglob("*")] if not p.is_symlink()}
    for p in modes:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        proc = farkle("ingest", b, "--out", ds)
        err = no_traceback(proc)
        assert proc.returncode == 2 and "Permission denied" in err
        assert farkle("stats", ds).returncode == 0
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert everything(ds) == before


# ---- a real tmpfs in a user namespace ---------------------------------------------------------
def _userns_tmpfs_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-U", "-r", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True
    )
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(not _userns_tmpfs_works(), reason="no unprivileged user namespace with tmpfs here")


def in_tmpfs(mount: Path, size: str, script: str) -> subprocess.CompletedProcess:
    """Run a shell script with a fresh tmpfs of `size` mounted at `mount` (only it sees the
    mount). `$FL` in the script is farkle-logs."""
    mount.mkdir(exist_ok=True)
    fl = f"{shlex.quote(sys.executable)} -m pipeline.cli"
    body = f"set -u\nmount -t tmpfs -o size={size} tmpfs {shlex.quote(str(mount))}\nFL='{fl}'\n{script}"
    return subprocess.run(
        ["unshare", "-U", "-r", "-m", "bash", "-c", body],
        cwd=ROOT,
        capture_output=True,
        timeout=600,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


@needs_tmpfs
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_really_full_disk(tmp_path, workers):
    a, _ = two_logs(tmp_path / "logs")
    big = tmp_path / "logs" / "big.jsonl"
    made = farkle("simulate", "-n", "400", "-s", "3", "-o", big)
    assert made.returncode == 0, made.stderr
    mount, out = tmp_path / "mnt", tmp_path / "out"
    out.mkdir()
    q = {k: shlex.quote(str(v)) for k, v in dict(a=a, big=big, ds=mount / "ds", out=out).items()}
    script = f"""
$FL ingest {q['a']} --out {q['ds']} > /dev/null 2>&1; echo $? > {q['out']}/first.rc
$FL stats {q['ds']} -f json > {q['out']}/before.json
FARKLE_LOGS_WORKERS={workers} $FL ingest {q['big']} --out {q['ds']} > /dev/null 2> {q['out']}/full.err; echo $? > {q['out']}/full.rc
$FL stats {q['ds']} -f json > {q['out']}/after.json
$FL dataset check {q['ds']} > {q['out']}/check.out; echo $? > {q['out']}/check.rc
ls -A {q['ds']} > {q['out']}/listing
"""
    proc = in_tmpfs(mount, "400k", script)
    assert proc.returncode == 0, proc.stderr
    assert (out / "first.rc").read_text().strip() == "1"  # the small log has findings
    err = (out / "full.err").read_text()
    assert (out / "full.rc").read_text().strip() == "2", err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert "No space left on device" in err and str(mount / "ds") in err
    assert json.loads((out / "after.json").read_text()) == json.loads((out / "before.json").read_text())
    assert (out / "check.rc").read_text().strip() == "0", (out / "check.out").read_text()
    assert ".staging" not in (out / "listing").read_text().split()


@needs_tmpfs
def test_a_read_only_dataset(tmp_path):
    a, b = two_logs(tmp_path / "logs")
    mount, out = tmp_path / "mnt", tmp_path / "out"
    out.mkdir()
    q = {k: shlex.quote(str(v)) for k, v in dict(a=a, b=b, ds=mount / "ds", out=out, mnt=mount).items()}
    script = f"""
$FL ingest {q['a']} --out {q['ds']} > /dev/null 2>&1
$FL stats {q['ds']} -f json > {q['out']}/before.json
mount -o remount,ro {q['mnt']}
$FL ingest {q['b']} --out {q['ds']} > /dev/null 2> {q['out']}/ingest.err; echo $? > {q['out']}/ingest.rc
$FL stats {q['ds']} -f json > {q['out']}/after.json 2> {q['out']}/stats.err; echo $? > {q['out']}/stats.rc
$FL dataset check {q['ds']} > /dev/null; echo $? > {q['out']}/check.rc
$FL dataset repair {q['ds']} > /dev/null 2> {q['out']}/repair.err; echo $? > {q['out']}/repair.rc
"""
    proc = in_tmpfs(mount, "4m", script)
    assert proc.returncode == 0, proc.stderr
    err = (out / "ingest.err").read_text()
    assert (out / "ingest.rc").read_text().strip() == "2", err
    assert (
        err
        == f"error: cannot write to the dataset: {mount / 'ds' / '.lock'}: Read-only file system; nothing was ingested\n"
    )
    # readers need no write access
    assert (out / "stats.rc").read_text().strip() == "0", (out / "stats.err").read_text()
    assert json.loads((out / "after.json").read_text()) == json.loads((out / "before.json").read_text())
    assert (out / "check.rc").read_text().strip() == "0"
    assert (out / "repair.rc").read_text().strip() == "2"
    assert "Read-only file system" in (out / "repair.err").read_text()

"""Ingest under pressure (issue 25 items 4 and 7): a log rewritten in place while it is being
ingested commits nothing, the files ingest holds open stay few whatever the number of
inputs, and SIGTERM (timeout, systemd, docker stop) cleans up as Ctrl-C does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from pipeline.ingest import ingest
from pipeline.reader.inputs import InputError, resolve
from pipeline.reader.split import split_source
from tests.dataset_helpers import ROOT, two_logs
from tests.ingest_games import dump, games, interleave
from tests.test_ingest import everything

TWO_CORES = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a second worker process needs two cores")


def same_size_rewrite(data: bytes) -> bytes:
    """Other bytes, the same size and the same lines: what a byte or line count cannot see."""
    changed = data.replace(b'"ana"', b'"amy"')
    assert changed != data and len(changed) == len(data) and changed.count(b"\n") == data.count(b"\n")
    return changed


def test_a_detached_block_of_a_file_rewritten_to_the_same_size_is_refused(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_bytes(dump(interleave(games(4, seed=2))))
    (source,) = resolve([str(log)]).sources
    away = [b.detached() for b in split_source(source, 0, block_bytes=1, max_line=300)]
    log.write_bytes(same_size_rewrite(log.read_bytes()))
    with pytest.raises(InputError, match="changed while it was being ingested"):
        for block in away:
            block.attached()


@TWO_CORES
def test_a_log_rewritten_in_place_during_a_two_worker_ingest_commits_nothing(tmp_path):
    """The stored sha256 is the hash of exactly the bytes ingested: blocks handed to the
    second worker are checked against the bytes this process hashed, so a log rewritten in
    place (same size) while they wait is exit 2 and no commit, not old and new lines mixed
    under a hash of neither."""
    a, _ = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    log = tmp_path / "live.jsonl"
    data = dump(interleave(games(30, seed=3)))
    log.write_bytes(data)
    changed = same_size_rewrite(data)
    blocks = 0

    def progress(*args, **kwargs):
        nonlocal blocks
        blocks += 1
        if blocks == 2:  # block 1 was handed to the second worker, still starting up: rewrite now
            with open(log, "r+b") as fh:
                fh.write(changed)

    with pytest.raises(InputError, match="changed while it was being ingested; nothing was committed"):
        ingest([str(log)], ds, workers=2, max_line_bytes=4096, block_bytes=4097, progress=progress)
    assert blocks >= 2
    assert everything(ds) == before and not (ds / ".staging").exists()
    log.write_bytes(data)  # as it was: it ingests, and its hash is its bytes'
    s = ingest([str(log)], ds, workers=2, max_line_bytes=4096, block_bytes=4097)
    entry = __import__("json").loads((ds / "manifest.json").read_text())["files"][-1]
    assert entry["sha256"] == __import__("hashlib").sha256(data).hexdigest() and s.events == data.count(b"\n")


def _limit_open_files(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return apply


def test_hundreds_of_inputs_under_a_limit_of_256_open_files(tmp_path):
    """Each input is one block or more, and each block one spill file: ingest used to hold
    up to 511 of them open and failed above ~240 inputs under `ulimit -n 256` (the macOS
    default) with "cannot write to the dataset: Too many open files"."""
    logs = tmp_path / "logs"
    logs.mkdir()
    gs = games(320, seed=4, turns=1)
    for g in gs:
        (logs / f"{g.game_id}.jsonl").write_bytes(dump(g.lines))
    env = {**os.environ, "FARKLE_LOGS_WORKERS": "2"}
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "ingest", str(logs), "--out", str(tmp_path / "ds"), "-f", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=600,
        preexec_fn=_limit_open_files(256),
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    summary = __import__("json").loads(proc.stdout)
    assert summary["files"] == 320 and summary["events"] == sum(len(g.lines) for g in gs)


def test_sigterm_cleans_up_as_ctrl_c_does(tmp_path):
    """`timeout`, systemd and `docker stop` send SIGTERM: ingest used to die on the spot,
    leaving its staging folder (158 MB once) and the worker queues' semaphores ("leaked
    semaphore objects" warnings). Now: exit 143, staging removed, the dataset as it was."""
    a, _ = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    before = everything(ds)
    env = {**os.environ, "FARKLE_LOGS_WORKERS": "2"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "ingest", "-", "--out", str(ds)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(dump(interleave(games(20, seed=5))))  # stdin stays open: the ingest waits for more
    proc.stdin.flush()
    deadline = time.monotonic() + 120
    while not list((ds / ".staging").glob("*/spill")):
        assert time.monotonic() < deadline and proc.poll() is None, "the ingest did not start"
        time.sleep(0.1)
    time.sleep(3)  # the second worker process is up (or starting): its queues exist
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err.decode()
    assert b"Traceback" not in err and b"leaked" not in err, err.decode()
    assert not (ds / ".staging").exists()
    assert everything(ds) == before

"""A real S3-compatible server for the tests: moto's standalone server (`moto[s3]` with Flask, the
test extra), started on a free port of localhost and stopped at the end of the run.

The AWS variables every S3 client reads (endpoint, fake credentials, region) are set when
this module is imported, before any Spark session starts: Spark's Python workers inherit
the environment of the JVM, which is fixed when it starts. Nothing in farkle-logs knows it
talks to moto: s3fs finds the endpoint in AWS_ENDPOINT_URL as it would a real one's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = int(os.environ.get("FARKLE_TEST_S3_PORT") or _free_port())
ENDPOINT = f"http://127.0.0.1:{PORT}"
ENVIRONMENT = {
    "AWS_ENDPOINT_URL": ENDPOINT,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
for _key, _value in ENVIRONMENT.items():
    os.environ[_key] = _value
os.environ.pop("AWS_PROFILE", None)


def start() -> subprocess.Popen:
    """moto_server on PORT, answering within 120 s (a loaded machine starts it slowly)."""
    try:
        import moto.server  # noqa: F401
    except ImportError:
        pytest.fail("moto (with flask) is not installed: pip install -e '.[test]'")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(PORT)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited with code {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("moto server did not answer within 120 s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def new_bucket() -> str:
    """A fresh bucket on the server: each test gets its own."""
    import fsspec

    name = f"t-{uuid.uuid4().hex[:12]}"
    fsspec.filesystem("s3").mkdir(name)
    return name

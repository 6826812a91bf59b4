"""Settings for the whole suite.

Hypothesis's per-example deadline is off everywhere: tests assert behaviour, never speed
(speed is measured by bench/), and a loaded machine made a correct test fail on time alone.
"""

from hypothesis import settings

settings.register_profile("farkle-logs", deadline=None)
settings.load_profile("farkle-logs")


# The S3-compatible server (tests/s3server.py): its environment is set now, before any
# fixture starts Spark, so Spark's workers reach the same server.
from tests import s3server  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def s3_server():
    proc = s3server.start()
    yield s3server.ENDPOINT
    s3server.stop(proc)


@pytest.fixture
def bucket(s3_server) -> str:
    """`s3://<a new bucket>` on the test server."""
    return f"s3://{s3server.new_bucket()}"

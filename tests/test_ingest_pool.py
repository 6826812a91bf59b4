"""The ingest pool's shutdown after a failure: no thread of it outlives `terminate`.

A failed ingest (a full disk, say) stops its workers while tasks are still queued for them.
The queue's feeder thread then waits on a full pipe; left running, it raced the process's
exit and now and then made multiprocessing's resource tracker print "leaked semaphore"
warnings under the one-line error (seen as a flaky test_a_really_full_disk[2]).
"""

from __future__ import annotations

import multiprocessing
import time

from pipeline.ingest.workers import _end_feeder

PIPE_FILLER = b"x" * (1 << 20)  # far more than a pipe's buffer: the feeder blocks on it


def test_the_feeder_ends_even_with_a_full_pipe_and_no_worker():
    inbox = multiprocessing.get_context("spawn").Queue()
    for _ in range(3):
        inbox.put(PIPE_FILLER)  # tasks for workers that are gone: nobody reads them
    time.sleep(0.2)
    feeder = inbox._thread
    assert feeder is not None and feeder.is_alive()  # blocked on the full pipe
    _end_feeder(inbox)
    assert not feeder.is_alive()  # without the read-back it waits its patience out, alive


def test_an_unused_queue_ends_at_once():
    inbox = multiprocessing.get_context("spawn").Queue()
    _end_feeder(inbox)  # no task was ever queued: there is no feeder thread
    assert inbox._thread is None

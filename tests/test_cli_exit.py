"""The console script's last line of defence (pipeline/cli/entry.py): output that cannot be
written, a closed pipe, known errors that escape a command, and real bugs.

These run `python -m pipeline.cli` in a subprocess: Typer's CliRunner calls the commands
directly and would bypass the handler under test.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap

import pytest

from pipeline.ingest import ingest
from tests.dataset_helpers import ROOT, farkle, two_logs

SAMPLE = ROOT / "sample_logs" / "standard.jsonl"
FULL = "error: cannot write output: No space left on device\n"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    a, _ = two_logs(tmp_path_factory.mktemp("logs"))
    ds = tmp_path_factory.mktemp("data") / "ds"
    ingest([str(a)], ds)
    return ds


@pytest.mark.parametrize(
    "args",
    [
        ["audit", SAMPLE],
        ["audit", SAMPLE, "-f", "json"],
        ["rules", "show", "standard"],
        ["stats", "{ds}", "-s", "players"],
        ["stats", "{ds}", "-s", "player_summary", "-f", "csv"],
        ["dataset", "check", "{ds}"],
        ["ingest", SAMPLE, "--out", "{new}"],
    ],
    ids=lambda a: " ".join(str(x) for x in a[:3] if "{" not in str(x) and "/" not in str(x)),
)
def test_output_to_a_full_disk_is_one_message_and_exit_2(dataset, tmp_path, args):
    args = [str(a).format(ds=dataset, new=tmp_path / "new") for a in args]
    with open("/dev/full", "wb") as full:
        proc = farkle(*args, stdout=full)
    assert proc.stderr.decode() == FULL
    assert proc.returncode == 2


def test_a_closed_pipe_ends_quietly(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "simulate", "-n", "300", "-s", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(100)  # the reader takes a little, then goes away (`| head`)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert b"Traceback" not in err and b"Exception ignored" not in err and b"Broken pipe" not in err


def _run_patched(patch: str, *args: str) -> subprocess.CompletedProcess:
    """The CLI with `patch` (Python) applied first: how a test plants a bug."""
    code = textwrap.dedent(patch) + textwrap.dedent(f"""
        import sys
        sys.argv = ["farkle-logs", *{list(args)!r}]
        from pipeline.cli.entry import main
        main()
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=180)


def test_a_bug_gets_the_please_report_header_then_the_traceback(dataset):
    proc = _run_patched(
        """
        import pipeline.stats
        def broken(*args, **kwargs):
            raise RuntimeError("boom")
        pipeline.stats.compute = broken
        """,
        "stats",
        str(dataset),
    )
    err = proc.stderr.decode()
    assert proc.returncode == 70
    assert err.startswith("error: farkle-logs hit a bug; please report it with the command you ran\n")
    assert "Traceback (most recent call last):" in err and err.rstrip().endswith("RuntimeError: boom")


def test_a_known_error_that_escapes_a_command_is_one_line(dataset):
    proc = _run_patched(
        """
        import pipeline.stats
        from pipeline.dataset.store import StoreError
        def broken(*args, **kwargs):
            raise StoreError("somewhere: something the user can fix")
        pipeline.stats.compute = broken
        """,
        "stats",
        str(dataset),
    )
    assert proc.returncode == 2
    assert proc.stderr.decode() == "error: somewhere: something the user can fix\n"


def test_the_console_script_runs_the_handler():
    scripts = {e.name: e.value for e in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts["farkle-logs"] == "pipeline.cli.entry:main"


def _quick_and_usual(argv: list[str]) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """`farkle-logs argv` run twice through entry.main(): once ending by os._exit (stderr says
    "quick" first), once with the usual teardown; both register an atexit function. "{run}"
    in an argument becomes "quick" or "usual"."""
    runs = []
    for usual in (False, True):
        args = [a.replace("{run}", "usual" if usual else "quick") for a in argv]
        code = textwrap.dedent(f"""
            import atexit, sys
            from pipeline.cli import entry
            if {usual}:
                entry.skip_teardown = lambda: None
            else:
                end_now = entry._end_now
                entry._end_now = lambda code: (sys.stderr.write("quick\\n"), end_now(code))
            atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
            sys.argv = ["farkle-logs", *{args!r}]
            entry.main()
        """)
        runs.append(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True))
    return runs[0], runs[1]


def test_audit_ends_without_the_interpreters_teardown_and_loses_nothing(tmp_path):
    """`audit` ends by os._exit once its output is out (entry.skip_teardown): every byte of
    stdout and stderr still arrives, the exit code is kept, and atexit functions ran; the
    same run with the usual teardown says the same."""
    from pipeline.simulate import simulate

    log = tmp_path / "inj.jsonl"
    simulate(log, games=20, seed=3, inject_rate=0.5)
    for fmt in ("json", "text", "csv"):
        quick, usual = _quick_and_usual(["audit", str(log), "-f", fmt])
        assert quick.returncode == usual.returncode == 1  # findings
        assert quick.stdout == usual.stdout and len(quick.stdout) > 1000
        assert quick.stderr == b"quick\n" + usual.stderr and usual.stderr.endswith(b"atexit ran\n")


def test_ingest_ends_without_the_interpreters_teardown_and_loses_nothing(tmp_path):
    """`ingest` too ends by os._exit once the snapshot is committed and the summary printed:
    the summary, the exit code and the dataset are those of a run with the usual teardown."""
    import json

    from pipeline.dataset.verify import check_dataset
    from pipeline.simulate import simulate
    from tests.test_ingest import everything

    log = tmp_path / "inj.jsonl"
    simulate(log, games=20, seed=5, inject_rate=0.5)
    quick, usual = _quick_and_usual(["ingest", str(log), "--out", str(tmp_path / "{run}"), "-f", "json"])
    assert quick.returncode == usual.returncode == 1  # injected errors
    volatile = ("dataset", "ingest_id", "seconds", "events_per_second")
    summaries = [{k: v for k, v in json.loads(r.stdout).items() if k not in volatile} for r in (quick, usual)]
    assert summaries[0] == summaries[1] and summaries[0]["events"] > 100
    assert quick.stderr == b"quick\n" + usual.stderr and usual.stderr.endswith(b"atexit ran\n")
    assert everything(tmp_path / "quick") == everything(tmp_path / "usual")
    assert check_dataset(tmp_path / "quick").healthy


def test_stats_ends_without_the_interpreters_teardown_and_loses_nothing(tmp_path):
    """`stats` (the local engine) ends by os._exit once its tables are written: the same bytes,
    exit code and notes as a run with the usual teardown, in each format, with the judge's
    compiled code and DuckDB loaded."""
    from pipeline.ingest.run import ingest
    from pipeline.simulate import simulate

    log = tmp_path / "two.jsonl"
    simulate(log, games=12, seed=7, players=(2, 2))
    ingest([str(log)], tmp_path / "ds")
    dataset = str(tmp_path / "ds")
    for args in (["-f", "json", "-s", "decisions-quality", "-s", "bust"], ["-f", "text"], ["-f", "csv", "-s", "bust"]):
        quick, usual = _quick_and_usual(["stats", dataset, *args])
        assert quick.returncode == usual.returncode == 0, usual.stderr
        assert _to_9_digits(quick.stdout) == _to_9_digits(usual.stdout) and len(quick.stdout) > 500
        assert quick.stderr == b"quick\n" + usual.stderr and usual.stderr.endswith(b"atexit ran\n")


def _to_9_digits(output: bytes) -> bytes:
    """Every decimal fraction in `output` to 9 significant digits: DuckDB's parallel sums may
    add in another order from one run to the next, and differ in the last bit."""
    import re

    return re.sub(rb"-?\d+\.\d+(?:e[-+]?\d+)?", lambda m: b"%.9g" % float(m.group()), output)

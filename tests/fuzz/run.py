"""Run one fuzz target for a time budget: coverage-guided with atheris (libFuzzer), or with
hypothesis where atheris is not installed. Exit 0: nothing found; 1: a failing input, saved
under --artifacts and shown on stderr with the error.

    .venv/bin/python -m tests.fuzz.run lines --seconds 20
    .venv/bin/python -m tests.fuzz.run audit --seconds 300 --corpus .fuzz-corpus/audit
    make fuzz FUZZ_SECONDS=600

Targets: lines, event, ruleset, audit, scoresheet (tests/fuzz/targets.py). Reproduce a saved
input with `--replay FILE`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

TARGET_NAMES = ("lines", "event", "block", "ruleset", "audit", "scoresheet")
MAX_LEN = {"lines": 4096, "event": 2048, "block": 4096, "ruleset": 1024, "audit": 8192, "scoresheet": 4096}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=TARGET_NAMES)
    parser.add_argument("--seconds", type=int, default=20, help="time budget (default 20)")
    parser.add_argument("--corpus", type=Path, help="corpus directory kept between runs (default: a temporary one)")
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=Path(tempfile.gettempdir()) / "farkle-fuzz-artifacts",
        help="where a failing input is saved",
    )
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    parser.add_argument("--replay", type=Path, help="run the target once on this input and show any error")
    args = parser.parse_args(argv)
    if args.replay is not None:
        from tests.fuzz.targets import TARGETS

        TARGETS[args.target](args.replay.read_bytes())
        print(f"{args.replay}: no error")
        return 0
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "hypothesis"
    args.artifacts.mkdir(parents=True, exist_ok=True)
    if engine == "atheris":
        return _atheris(args)
    return _hypothesis(args)


def _atheris(args) -> int:
    import atheris

    with atheris.instrument_imports(include=["pipeline"]):
        from tests.fuzz import targets
    target = targets.TARGETS[args.target]
    corpus = args.corpus or Path(tempfile.mkdtemp(prefix=f"fuzz-{args.target}-"))
    corpus.mkdir(parents=True, exist_ok=True)
    seed_dir = Path(tempfile.mkdtemp(prefix=f"fuzz-seeds-{args.target}-"))
    for i, seed in enumerate(targets.seeds(args.target)):
        (seed_dir / f"seed-{i:03d}").write_bytes(seed)
    prefix = str(args.artifacts / f"{args.target}-")
    libfuzzer = [
        sys.argv[0],
        str(corpus),
        str(seed_dir),
        f"-max_total_time={args.seconds}",
        f"-max_len={MAX_LEN[args.target]}",
        "-timeout=60",
        "-rss_limit_mb=2048",
        f"-artifact_prefix={prefix}",
        "-print_final_stats=1",
    ]
    atheris.Setup(libfuzzer, target)
    try:
        atheris.Fuzz()  # exits the process: 0 when the budget is spent, else libFuzzer's crash code
    finally:
        if args.corpus is None:
            shutil.rmtree(corpus, ignore_errors=True)
        shutil.rmtree(seed_dir, ignore_errors=True)
    return 0  # pragma: no cover - Fuzz() does not return


def _hypothesis(args) -> int:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.fuzz import targets

    target = targets.TARGETS[args.target]
    seeds = targets.seeds(args.target)
    inputs = st.one_of(
        st.sampled_from(seeds),
        st.binary(max_size=MAX_LEN[args.target]),
        st.sampled_from(seeds).flatmap(lambda s: st.binary(max_size=len(s)).map(lambda b: s[: len(b)])),
    )
    failure: list[bytes] = []

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(inputs)
    def run(data: bytes) -> None:
        try:
            target(data)
        except Exception:
            failure[:] = [data]
            raise

    deadline = time.monotonic() + args.seconds
    rounds = 0
    while time.monotonic() < deadline:
        try:
            run()
        except Exception:
            path = args.artifacts / f"{args.target}-crash-{os.getpid()}"
            path.write_bytes(failure[0] if failure else b"")
            traceback.print_exc()
            print(f"failing input saved to {path}", file=sys.stderr)
            return 1
        rounds += 1
    print(f"{args.target}: {rounds * 200} inputs, nothing found (hypothesis)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

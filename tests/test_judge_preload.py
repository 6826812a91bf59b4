"""The two-player judge made ahead (pipeline.solved.judge.preload, run in a thread by the
stats runner while DuckDB computes its input) and numba imported without SciPy's BLAS
probe (pipeline.rules.jit): both exist to save time on every run, so what is tested is that
they save it without changing what is computed or compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from pipeline.rules import Ruleset
from pipeline.solved import judge
from pipeline.stats import compute
from pipeline.stats import runner


def test_preloading_compiles_the_judge_for_the_types_it_then_judges(simulated_two_player, tmp_path):
    """A judge made ahead with arrays of other types than the choices' would make numba
    compile a second specialization, tens of seconds on a first run, every run after an
    edit: one signature after preloading and judging, not two; the same when the roll tables
    are built in the run (the first after an install) and when they are read back from the
    cache (every later run). In a process of its own, where no other test has compiled the
    loop for other types."""
    code = (
        "import json, sys\n"
        "from pipeline.rules import Ruleset\n"
        "from pipeline.solved import judge, tables\n"
        "from pipeline.stats import compute\n"
        "from pipeline.strategy.race import kernel\n"
        "import pyarrow as pa\n"
        "judge.preload(pa.table({'ruleset': [json.dumps(Ruleset.builtin('standard').to_dict())]}))\n"
        "after_preload = len(kernel()['judge_choices'].signatures)\n"
        "compute(sys.argv[1], sections=['decisions-quality'])\n"
        "after_first = len(kernel()['judge_choices'].signatures)\n"
        "judge.judge_for.cache_clear(); tables.turn_rolls.cache_clear()  # now read back from the cache\n"
        "compute(sys.argv[1], sections=['decisions-quality'])\n"
        "print(after_preload, after_first, len(kernel()['judge_choices'].signatures))\n"
    )
    env = dict(os.environ, FARKLE_LOGS_CACHE_DIR=str(tmp_path / "empty-cache"))  # the roll tables built here
    out = subprocess.run(
        [sys.executable, "-c", code, str(simulated_two_player)], capture_output=True, text=True, timeout=900, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "1"]


def test_the_runner_prepares_the_judge_of_the_two_player_rulesets(simulated_two_player, tmp_path, monkeypatch):
    seen: list[list[str]] = []
    real = judge.preload
    monkeypatch.setattr(
        judge, "preload", lambda rulesets: (seen.append(rulesets["ruleset"].to_pylist()), real(rulesets))
    )
    out = compute(simulated_two_player, sections=["decisions-quality"])
    assert len(seen) == 1 and seen[0]
    assert {Ruleset.from_value(json.loads(t)) for t in seen[0]} == {Ruleset.builtin("standard")}
    assert out["race_quality"].num_rows > 0
    # three players a game: nothing to judge by winning chance, nothing loaded for it
    from pipeline.ingest.run import ingest
    from pipeline.simulate import simulate

    simulate(tmp_path / "three.jsonl", 5, 6, rules=[Ruleset.builtin("standard")], players=(3, 3))
    ingest([str(tmp_path / "three.jsonl")], tmp_path / "ds3")
    seen.clear()
    compute(tmp_path / "ds3", sections=["decisions-quality"])
    assert seen == [[]]


def test_a_failing_preparation_changes_nothing(simulated_two_player, monkeypatch):
    """The model itself meets the failure and reports it (or does its work): the preparation
    is an optimisation, never a new way to fail."""
    want = compute(simulated_two_player, sections=["decisions-quality"])

    def broken(rulesets):
        raise RuntimeError("preparation failed")

    monkeypatch.setattr(judge, "preload", broken)
    got = compute(simulated_two_player, sections=["decisions-quality"])
    for table in ("race_quality", "race_costliest"):  # sums in DuckDB's parallel order: to rounding
        assert _rows(got[table]) == _rows(want[table])


def _rows(table) -> list[tuple]:
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in row.values()) for row in table.to_pylist()]


def test_numba_loads_without_importing_scipy_linalg_which_stays_importable():
    pytest.importorskip("scipy")
    code = (
        "import sys\n"
        "from pipeline.strategy.race import kernel\n"
        "from pipeline.rules import Ruleset\n"
        "from pipeline.solved import judge\n"
        "import json\n"
        "import pyarrow as pa\n"
        "judge.preload(pa.table({'ruleset': [json.dumps(Ruleset.builtin('standard').to_dict())]}))\n"
        "assert 'numba.np.arraymath' in sys.modules\n"
        "assert 'scipy.linalg' not in sys.modules, 'numba imported scipy.linalg'\n"
        "import scipy.linalg.cython_blas\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def json_text(rules: Ruleset) -> str:
    return json.dumps(rules.to_dict())


@pytest.fixture(scope="module")
def simulated_two_player(tmp_path_factory):
    from pipeline.ingest.run import ingest
    from pipeline.simulate import simulate

    base = tmp_path_factory.mktemp("preload")
    mp = pytest.MonkeyPatch()
    mp.setenv("FARKLE_LOGS_CACHE_DIR", str(base / "cache"))
    log = base / "two.jsonl"
    simulate(log, 30, 5, rules=[Ruleset.builtin("standard")], players=(2, 2))
    ingest([str(log)], base / "ds")
    yield base / "ds"
    mp.undo()


def test_the_judge_is_the_model_prepared():
    assert runner.PYTHON_MODELS["int_choices_judged"].prepare == "pipeline.solved.judge:preload"


def test_each_choice_not_judged_says_why_in_every_call():
    """The judges are kept for the process (so that they can be made ahead): a refused or
    unreadable ruleset's reason must still reach each call's `why`, the second like the first.
    A choice of no two-player turn (game 4) is passed on, single-turn columns and all, outside
    the race: no judge runs for it, even under a judged ruleset."""
    penalty = Ruleset.from_value({"base": "standard", "farkle_penalty": 500})
    rulesets = {1: "not json", 2: json_text(penalty), 3: json_text(Ruleset.builtin("standard"))}
    n = 5
    choices = pa.table(
        {
            "game_no": pa.array([1, 2, 3, 3, 4], pa.int64()),
            "seq": pa.array([5, 5, 5, 6, 5], pa.int64()),
            "kind": ["action"] * n,
            "player": ["ana"] * n,
            "turn": pa.array([1] * n, pa.int32()),
            "points": pa.array([300] * n, pa.int64()),
            "dice": pa.array([3] * n, pa.int32()),
            "roll_key": pa.array([None] * n, pa.int64()),
            "kept_key": pa.array([None] * n, pa.int64()),
            "choice": ["roll"] * n,
            "loss": [0.5 * k for k in range(n)],  # a single-turn column: passed on
            "ruleset_id": pa.array([1, 2, 3, 3, 3], pa.int32()),
            "flags": pa.array([1 | 8, 1 | 8, 1 | 8, 8, 1 | 8], pa.int8()),  # the 4th not judged for one turn either
            # the totals stored as the turn opened; the 5th not in a game of two players
            "start_total": pa.array([0] * n, pa.int64()),
            "other_start_total": pa.array([0, 0, 0, 0, None], pa.int64()),
        }
    )
    known = pa.table({"ruleset_id": pa.array(list(rulesets), pa.int32()), "ruleset": list(rulesets.values())})
    for _ in range(2):
        out = judge.judged_choices({judge.INPUT: choices, judge.RULESETS: known})
        assert out.column("loss").to_pylist() == choices.column("loss").to_pylist()
        assert "flags" not in out.column_names and "ruleset_id" not in out.column_names
        assert out.column("race").to_pylist() == [True] * 4 + [False]
        assert out.column("mover_total").to_pylist()[3:] == [0, None]
        assert not out.column("race_judged").to_pylist()[4] and out.column("why").to_pylist()[4] == judge.NOT_IN_RACE
        why = out.column("why").to_pylist()
        assert why[0] == judge.UNREADABLE
        assert why[1] is not None and "farkle penalty" in why[1]
        assert why[2] is None and out.column("race_judged").to_pylist()[2]
        assert why[3] == judge.WHY[1]

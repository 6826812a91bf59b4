"""Conventions every command keeps: --version and -h, help without Python types that fits
80 columns, exit code 2 for what is missing, and a start that loads no heavy machinery.

Start-up time itself is measured by bench/startup.py, never asserted here; what is tested
is the behaviour that makes it fast: which modules a command imports.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app

runner = CliRunner()
HEAVY = (
    "duckdb",
    "polars",
    "pyarrow",
    "altair",
    "vl_convert",
    "pydantic",
    "rich",
    "msgspec",
    "pipeline.replay",
    "pipeline.strategy",
    "pipeline.simulate",
    "pipeline.ingest",
    "pipeline.stats",
)
COMMANDS = [
    ["score"],
    ["rules"],
    ["rules", "list"],
    ["rules", "show"],
    ["audit"],
    ["ingest"],
    ["stats"],
    ["simulate"],
    ["report"],
    ["dataset"],
    ["dataset", "check"],
    ["dataset", "repair"],
]
PYTHON_TYPE = re.compile(r"<(list\[|bool|str|int|float|text\||%Y|path)[^>]*>")


def loaded_after(code: str) -> list[str]:
    """The HEAVY modules a fresh interpreter has loaded after running `code`."""
    probe = f"import sys\n{code}\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_importing_the_cli_loads_no_command_machinery():
    assert loaded_after("import pipeline.cli.main") == []
    assert loaded_after("import pipeline.cli.entry") == []  # the console script


def test_help_and_score_run_without_the_heavy_machinery():
    run_cli = "from pipeline.cli.main import app\ntry:\n    app({argv})\nexcept SystemExit:\n    pass"
    assert loaded_after(run_cli.format(argv=["--help"])) == []
    assert loaded_after(run_cli.format(argv=["audit", "--help"])) == []
    # score needs the rules engine and prints a plain line: no rich, no pydantic
    assert loaded_after(run_cli.format(argv=["score", "1", "5"])) == []


@pytest.mark.parametrize("command", ["ingest", "audit"])
def test_the_program_ingests_and_audits_without_pandas(tmp_path, command):
    """The farkle-logs program's local ingest and audit make pandas unimportable (pyarrow would
    load it only to ask whether a list is a pandas object); imported as a library, nothing
    changes: pandas stays importable in the caller's process."""
    from pathlib import Path

    pytest.importorskip("pandas")  # installed with the [spark] extra, as `make test` does
    log = Path(__file__).resolve().parent.parent / "sample_logs"
    args = [command, str(log)] + (["--out", str(tmp_path / "ds")] if command == "ingest" else [])
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('PANDAS', 'pandas' in sys.modules, file=sys.stderr))\n"
        "from pipeline.cli.entry import main\n"
        f"sys.argv = ['farkle-logs', *{args!r}]\n"
        "main()"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert "PANDAS False" in done.stderr
    library = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from pipeline.cli.main import app\n"
        f"CliRunner().invoke(app, {args!r})\n"
        "import importlib.util\n"
        "print(importlib.util.find_spec('pandas') is not None and __import__('pandas') is not None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", library.replace(str(tmp_path / "ds"), str(tmp_path / "ds2"))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip().splitlines()[-1] == "True", done.stderr


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0
    assert re.fullmatch(r"farkle-logs \d+\.\d+\.\d+\S*\n", result.stdout)


@pytest.mark.parametrize("command", [[], *COMMANDS], ids=lambda c: " ".join(c) or "top")
def test_help_has_metavars_not_python_types_and_fits_80_columns(command):
    results = [runner.invoke(app, [*command, flag], env={"COLUMNS": "80"}) for flag in ("-h", "--help")]
    for result in results:
        assert result.exit_code == 0, result.output
        assert result.stdout == results[0].stdout  # -h is --help
        assert not PYTHON_TYPE.search(result.stdout), PYTHON_TYPE.search(result.stdout).group()
        assert max(map(len, result.stdout.splitlines())) <= 80
        assert not re.search(r"[a-z,;]\.\.\.$", result.stdout, re.M)  # no short help cut with "..."
        assert not re.search(r"\bx[<>]=?-?\d", result.stdout)  # a range in words, not Click's `x>=0.0`
        assert "Usage: farkle-logs" in result.stdout


def test_help_names_arguments_and_values_as_users_expect():
    audit = runner.invoke(app, ["audit", "-h"]).stdout
    assert "Usage: farkle-logs audit [OPTIONS] LOGS..." in audit
    assert "--scoresheet CSV" in audit and "-g, --game ID" in audit and "--blunder-threshold POINTS" in audit
    assert "[default: 150.0; at least 0]" in audit
    stats = runner.invoke(app, ["stats", "-h"]).stdout
    assert "Usage: farkle-logs stats [OPTIONS] DATASET" in stats
    assert "-p, --player NAME" in stats and "--since YYYY-MM-DD" in stats
    assert "Usage: farkle-logs score [OPTIONS] DIE..." in runner.invoke(app, ["score", "-h"]).stdout
    assert "-n, --games N" in runner.invoke(app, ["simulate", "-h"]).stdout


def test_simulate_help_lists_every_bot():
    from pipeline.cli.simulate_cmd import BOTS_HELP
    from pipeline.simulate import BOT_NAMES

    assert BOTS_HELP.split(", ") == list(BOT_NAMES)


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "{missing}.jsonl"],
        ["ingest", "{missing}.jsonl", "--out", "{tmp}/ds"],
        ["stats", "{missing}"],
        ["report", "{missing}", "-o", "{tmp}/r.html"],
        ["audit", "{tmp}/log.jsonl", "--scoresheet", "{missing}.csv"],
    ],
)
def test_a_missing_file_or_dataset_is_bad_usage(tmp_path, command):
    (tmp_path / "log.jsonl").write_text('{"game_id":"g","seq":1,"type":"game_start","players":["a"]}\n')
    args = [a.format(missing=tmp_path / "missing", tmp=tmp_path) for a in command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "error:" in result.stderr and "Traceback" not in result.output


# ---- the pydantic-free coercion gives what Typer's own gives ----------------------------
SAMPLES = {
    str: ["abc", "", "-"],
    int: ["7", "0", "-3", "x", "1.5"],
    float: ["1.5", "0", "-2", "1e3", "x"],
    bool: [True, False],
    dt.datetime: ["2024-03-01", "2024-13-01", "yesterday"],
}


def _params():
    from typer.main import get_command

    def walk(command, path):
        for param in command.params:
            yield " ".join(path) + " " + param.name, param
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    return list(walk(get_command(app), []))


@pytest.mark.parametrize("where, param", _params(), ids=lambda x: x if isinstance(x, str) else "")
def test_fast_coercion_agrees_with_typer(where, param):
    from typer._click.exceptions import BadParameter
    from typer._coercion import build_runtime_param
    from typing import get_args, get_origin, Union

    from pipeline.cli.fast_params import runtime_param

    fast = runtime_param(param)
    if fast is None:
        pytest.skip(f"{where}: Typer coerces this type itself")
    slow = build_runtime_param(param.type_descriptor)
    annotation = param.type_descriptor.annotation
    if get_origin(annotation) is Union:
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    many = get_origin(annotation) is list
    leaf = get_args(annotation)[0] if many else annotation
    samples = (
        [m.value for m in leaf] + ["nope"] if isinstance(leaf, type) and issubclass(leaf, enum.Enum) else SAMPLES[leaf]
    )

    def outcome(coercer, value):
        try:
            return coercer._coerce_value(value, param=param, ctx=None)
        except BadParameter:
            return "BadParameter"

    for value in samples:
        value = [value, value] if many else value
        assert outcome(fast, value) == outcome(slow, value), (where, value)

"""One error family (pipeline.errors.UserError): every user error derives from it, carries a
message and a remedy, survives a process boundary, and becomes exit 2 with its message in
one place (pipeline.cli.common.user_errors, around every command), not per command."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pipeline.audit.scoresheet import SheetError
from pipeline.dataset.layout import DatasetDamaged, DatasetError, DatasetVersionError
from pipeline.dataset.store import StoreError
from pipeline.engines.spark.session import SparkUnavailable
from pipeline.errors import UserError
from pipeline.ingest.run import InputErrors
from pipeline.reader.inputs import InputError
from pipeline.report.data import GameNotFound
from pipeline.report.league import NoRatedPlayer
from pipeline.rules import RulesetError
from pipeline.simulate.game import SimulationError
from pipeline.stats.explore import QueryError, ReadOnlyError
from pipeline.strategy.advice import AdviceError
from pipeline.strategy.race import RaceUnsolved
from pipeline.strategy.solver import SolverBudgetError

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"
FAMILY = (
    InputError,
    InputErrors,
    DatasetError,
    DatasetVersionError,
    DatasetDamaged,
    StoreError,
    RulesetError,
    SimulationError,
    SheetError,
    SolverBudgetError,
    GameNotFound,
    NoRatedPlayer,
    SparkUnavailable,
    ReadOnlyError,
    QueryError,
    RaceUnsolved,
    AdviceError,
)


def test_every_user_error_is_one_of_the_family():
    assert all(issubclass(cls, UserError) for cls in FAMILY)
    # and no other exception class of the package is a user error left outside it: the rest
    # are bugs (TooManyRows, TranspileError, WorkerError), control flow, or stdout's OutputError;
    # LockHeld is the remote store's own signal, always raised again as a StoreError
    outside = {
        "LockHeld",
        "TooManyRows",
        "TranspileError",
        "WorkerError",
        "OutputError",
        "MostlyBad",
        "NotInBlocks",
        "Invalid",
        "Broken",
    }
    names = {cls.__name__ for cls in FAMILY}
    for path in PIPELINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {ast.unparse(b) for b in node.bases}
                if bases & {"Exception", "ValueError", "LookupError", "RuntimeError"}:
                    assert node.name in names | outside | {"UserError"}, (
                        f"{path.name}: {node.name} is neither a user error nor listed"
                    )


def test_message_and_remedy_read_as_before_and_cross_processes():
    damaged = DatasetDamaged("ds", "the pointer is missing")
    assert damaged.message == "ds: damaged dataset: the pointer is missing"
    assert str(damaged) == f"{damaged.message}; {damaged.remedy}" and "repair" in damaged.remedy
    bad = InputError("logs/*.jsonl", "matches no file")
    for error in (damaged, bad, InputErrors([bad, InputError("x", "no such file")])):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and repr(back.__dict__) == repr(error.__dict__)
    assert str(InputErrors([bad, bad])) == "2 inputs name nothing readable"


def test_a_user_error_anywhere_in_a_command_is_exit_2_with_its_message():
    from pipeline.cli.main import make_app

    demo = make_app(name="demo")

    @demo.command()
    def fail(kind: str = typer.Argument(...)) -> None:
        if kind == "many":
            raise InputErrors([InputError("a", "no such file"), InputError("b", "no such file")])
        raise UserError("the thing is wrong", "do this instead")

    @demo.command()
    def fine() -> None:
        pass

    one = CliRunner().invoke(demo, ["fail", "one"])
    assert (one.exit_code, one.stderr) == (2, "error: the thing is wrong; do this instead\n")
    many = CliRunner().invoke(demo, ["fail", "many"])
    assert many.exit_code == 2
    assert many.stderr.splitlines() == [
        "error: a: no such file",
        "error: b: no such file",
        "error: 2 inputs name nothing readable",
    ]
    assert CliRunner().invoke(demo, ["fine"]).exit_code == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["stats", "{tmp}/nothing"], "error: {tmp}/nothing: no such dataset"),
        (["ingest", "{tmp}/none.jsonl", "--out", "{tmp}/ds"], "error: {tmp}/none.jsonl: no such file"),
        (["simulate", "-n", "1", "-r", "standrad"], "error: unknown ruleset 'standrad'"),
    ],
)
def test_commands_raise_and_the_one_handler_prints(tmp_path, args, message):
    from pipeline.cli.main import app

    out = CliRunner().invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(message.format(tmp=tmp_path)), out.stderr


def test_no_command_catches_a_user_error_only_to_exit():
    for path in (PIPELINE / "cli").glob("*.py"):
        if path.name == "common.py":  # user_errors: the one place
            continue
        assert "usage_error(str(exc))" not in path.read_text(encoding="utf-8"), path.name

"""Nothing overwritten (issue 25 items 2 and 3): a symlink planted in a dataset is never
followed by `ingest` or `dataset repair`, a dataset whose own entries are symlinks is
refused, and a command's output file is a regular file or a new name in an existing
folder, never a device, a link, a directory or a folder made up on the way.

Every case runs in a temporary folder; the device is a node the test makes itself (as
root), a copy of /dev/full's numbers.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.ingest import ingest
from tests.dataset_helpers import two_logs

runner = CliRunner()
PRECIOUS = b"export PATH=$HOME/bin:$PATH  # somebody's ~/.bashrc\n"


@pytest.fixture()
def dataset(tmp_path) -> tuple[Path, Path]:
    """A dataset of one snapshot, and a second log to ingest into it."""
    a, b = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    ingest([str(a)], ds)
    return ds, b


@pytest.fixture()
def precious(tmp_path) -> Path:
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_bytes(PRECIOUS)
    return path


# ---------------------------------------------------------------- temporary files in the dataset
def test_a_link_planted_at_the_pointer_temporary_is_never_followed(dataset, precious):
    ds, b = dataset
    (ds / "_current.json.tmp").symlink_to(precious)
    result = runner.invoke(app, ["ingest", str(b), "--out", str(ds)])
    assert result.exit_code == 0, result.output
    assert precious.read_bytes() == PRECIOUS
    assert not os.path.lexists(ds / "_current.json.tmp")  # a leftover temporary: removed, not written
    assert [p.name for p in ds.iterdir() if p.name.endswith(".tmp")] == []


def test_repair_never_follows_a_link_planted_at_the_pointer_temporary(dataset, precious):
    ds, b = dataset
    ingest([str(b)], ds)
    (ds / "_current.json").unlink()  # damaged: repair writes the pointer
    (ds / "_current.json.tmp").symlink_to(precious)
    result = runner.invoke(app, ["dataset", "repair", str(ds)])
    assert result.exit_code == 0, result.output
    assert precious.read_bytes() == PRECIOUS
    assert (ds / "_current.json").is_file() and not (ds / "_current.json").is_symlink()
    assert runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0


def _plant(ds: Path, entry: str, target: Path) -> Path:
    """Replace the dataset's own `entry` by a symlink to a copy of it beside `target`."""
    path = ds / entry
    copy = target.parent / ("copy-" + path.name)
    if path.is_dir():
        shutil.copytree(path, copy, symlinks=True)
        shutil.rmtree(path)
    elif path.exists():
        shutil.copy2(path, copy)
        path.unlink()
    else:
        copy = target
    path.symlink_to(copy)
    return copy


@pytest.mark.parametrize(
    "entry",
    [
        ".lock",
        "_current.json",
        ".staging",
        ".snapshots",
        ".snapshots/000001",
        ".snapshots/000001/manifest.json",
        "EVENTS",
    ],
)
def test_a_dataset_whose_own_entries_are_links_is_refused(dataset, precious, entry):
    ds, b = dataset
    if entry == ".staging":
        (ds / ".staging").symlink_to(precious.parent)
    elif entry == "EVENTS":
        part = next((ds / ".snapshots" / "000001" / "events").iterdir())
        entry = str(part.relative_to(ds))
        _plant(ds, entry, precious)
    else:
        _plant(ds, entry, precious)
    listing = sorted(p.name for p in precious.parent.iterdir())
    for args in (["ingest", str(b), "--out", str(ds)], ["dataset", "repair", str(ds)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
        assert f"{entry} is a symbolic link: a dataset's own entries never are" in result.stderr
        assert "nothing was written" in result.stderr
    assert precious.read_bytes() == PRECIOUS
    assert sorted(p.name for p in precious.parent.iterdir()) == listing  # nothing written beside it either
    check = runner.invoke(app, ["dataset", "check", str(ds)])
    assert check.exit_code == 1 and f"{entry}: a symbolic link" in check.stdout


def test_the_convenience_links_are_links_and_a_dataset_on_a_linked_folder_is_fine(dataset, tmp_path):
    ds, b = dataset
    assert (ds / "events").is_symlink() and (ds / ".current").is_symlink()
    alias = tmp_path / "alias"
    alias.symlink_to(ds)  # the dataset folder itself may be reached through a link
    assert runner.invoke(app, ["ingest", str(b), "--out", str(alias)]).exit_code == 0
    assert runner.invoke(app, ["dataset", "check", str(ds)]).exit_code == 0


# ---------------------------------------------------------------- output files of commands
def make_device(where: Path) -> Path:
    """A character device with /dev/full's numbers, made here (root only)."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root (mknod); the link, folder and directory cases run anyway")
    path = where / "full"
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    return path


def output_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    target = tmp_path / "target.html"
    target.write_bytes(PRECIOUS)
    link = tmp_path / "link.html"
    link.symlink_to(target)
    folder = tmp_path / "folder"
    folder.mkdir()
    return {
        "link": (link, "it is a symbolic link"),
        "missing folder": (tmp_path / "nowhere" / "deeper" / "out.html", "the folder"),
        "directory": (folder, "it is a directory"),
    }


def _unchanged(tmp_path: Path) -> None:
    assert (tmp_path / "target.html").read_bytes() == PRECIOUS
    assert (tmp_path / "link.html").is_symlink()
    assert not (tmp_path / "nowhere").exists()
    assert (tmp_path / "folder").is_dir() and not any((tmp_path / "folder").iterdir())


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    a, _ = two_logs(root / "logs", n_games=4)
    ingest([str(a)], root / "ds")
    return root / "ds"


@pytest.mark.parametrize("case", ["link", "missing folder", "directory"])
def test_report_writes_only_a_regular_file_or_a_new_name(small_dataset, tmp_path, case):
    path, says = output_cases(tmp_path)[case]
    result = runner.invoke(app, ["report", str(small_dataset), "-o", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and f"cannot write {path}: {says}" in result.stderr
    _unchanged(tmp_path)


def test_report_to_a_device_leaves_the_device_a_device(small_dataset, tmp_path):
    device = make_device(tmp_path)
    result = runner.invoke(app, ["report", str(small_dataset), "-o", str(device)])
    assert result.exit_code == 2 and f"cannot write {device}: it is a device" in result.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["full"]  # no temporary file left beside it


def test_report_replaces_a_regular_file(small_dataset, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("old")
    result = runner.invoke(app, ["report", str(small_dataset), "-o", str(page)])
    assert result.exit_code == 0, result.output
    assert page.read_text().startswith("<!DOCTYPE html>") and not page.is_symlink()
    assert oct(page.stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("option", ["--out", "--manifest"])
@pytest.mark.parametrize("case", ["link", "missing folder", "directory", "device"])
def test_simulate_writes_only_a_regular_file_or_a_new_name(tmp_path, option, case):
    if case == "device":
        path, says = make_device(tmp_path), "it is a device"
    else:
        path, says = output_cases(tmp_path)[case]
    args = ["simulate", "--games", "2", "--seed", "1", option, str(path)]
    if option == "--manifest":
        args += ["--inject", "1", "--out", str(tmp_path / "games.jsonl")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr
    assert says in result.stderr or (case == "directory" and "is a directory" in result.stderr)
    if case == "device":
        assert stat.S_ISCHR(os.lstat(path).st_mode)
    else:
        _unchanged(tmp_path)
    assert not (tmp_path / "games.jsonl").exists()  # refused before anything was written


@pytest.mark.parametrize("case", ["link", "missing folder", "directory", "device"])
def test_rules_solve_writes_only_a_regular_file_or_a_new_name(tmp_path, case):
    if case == "device":
        path, says = make_device(tmp_path), "it is a device"
    else:
        path, says = output_cases(tmp_path)[case]
    result = runner.invoke(app, ["rules", "solve", "standard", "--out", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and f"cannot write {path}: {says}" in result.stderr
    if case == "device":
        assert stat.S_ISCHR(os.lstat(path).st_mode)
    else:
        _unchanged(tmp_path)

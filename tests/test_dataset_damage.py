"""Issue 11 item 5: a damaged dataset is never silently emptied, and it can be recovered.

A dataset directory that holds snapshots but no usable pointer or manifest, or whose
manifest lists a file that is gone or unreadable, is refused by ingest, stats and report
(exit 2, the way out in the message); `dataset check` names the problem and `dataset repair`
points the dataset at its newest complete snapshot without deleting anything.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import POINTER, open_dataset
from pipeline.dataset.tables import DATASET_VERSION
from pipeline.ingest import StoreError, ingest
from pipeline.dataset.store import Store, acquire_lock
from tests.dataset_helpers import farkle, no_traceback, two_logs, two_snapshots
from tests.test_ingest import count, everything

runner = CliRunner()


def cli(*args) -> "CliRunner.invoke":
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def lose_pointer(ds: Path) -> None:
    """What a user or a partial copy does: the commit pointer is gone (`_current.json` in
    format 2; `.current` was the pointer of format 1), the snapshots are all there."""
    for name in (POINTER, ".current"):
        path = ds / name
        if os.path.lexists(path):
            path.unlink()


def current_snapshot_dir(ds: Path) -> Path:
    return open_dataset(ds, check_files=False).root


# ---- the regression of the issue: ingest must not rebuild from the new files only ------------
def test_ingest_into_a_dataset_without_its_pointer_is_refused_and_loses_nothing(tmp_path):
    built = two_snapshots(tmp_path)
    stored = built.events_a + built.events_b
    before = everything(built.ds)
    lose_pointer(built.ds)
    extra = tmp_path / "logs" / "c.jsonl"
    extra.write_text(built.a.read_text().replace('"g5-', '"c5-'))  # new games

    proc = farkle("ingest", extra, "--out", built.ds)
    err = no_traceback(proc)
    assert proc.returncode == 2, err
    assert "damaged dataset" in err and "_current.json is missing" in err
    assert f"farkle-logs dataset repair {built.ds}" in err
    assert err.count("\n") == 1  # one line

    repaired = farkle("dataset", "repair", built.ds)
    assert repaired.returncode == 0, repaired.stderr
    assert b"pointed the dataset at snapshot 2" in repaired.stdout
    assert count(built.ds, "events") == stored
    assert everything(built.ds) == before
    after = ingest([str(extra)], built.ds)
    assert count(built.ds, "events") == stored + after.events


def test_a_corrupt_manifest_is_a_damaged_dataset_not_a_traceback(tmp_path):
    built = two_snapshots(tmp_path)
    manifest = built.ds / ".snapshots" / "000002" / "manifest.json"  # the current one
    manifest.write_text('{"format": "farkle-logs", "snap')
    for args in (
        ("ingest", built.b, "--out", built.ds),
        ("stats", built.ds),
        ("report", built.ds, "-o", tmp_path / "r.html"),
    ):
        proc = farkle(*args)
        err = no_traceback(proc)
        assert proc.returncode == 2, (args, err)
        assert "damaged dataset" in err and "manifest.json is unreadable" in err and "dataset repair" in err, err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["stats", "report"])
def test_readers_of_a_damaged_dataset_exit_2_with_the_way_out(tmp_path, command):
    built = two_snapshots(tmp_path)
    args = [command, built.ds] + (["-o", tmp_path / "r.html"] if command == "report" else [])
    turns = current_snapshot_dir(built.ds) / "turns"
    victim = sorted(turns.iterdir())[-1]
    victim.write_bytes(victim.read_bytes()[:100])  # a truncated copy: the footer is gone
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert f"damaged dataset: {victim.relative_to(built.ds)}: not a readable Parquet file" in result.stderr
    assert "dataset repair" in result.stderr
    victim.unlink()
    result = cli(*args)
    assert result.exit_code == 2
    assert "1 file(s) its manifest lists are missing" in result.stderr


# ---- dataset check ----------------------------------------------------------------------------
def test_check_a_healthy_dataset(tmp_path):
    built = two_snapshots(tmp_path)
    result = cli("dataset", "check", built.ds, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["healthy"] and report["problems"] == [] and report["snapshot"] == 2
    assert report["tables"]["events"]["rows"] == built.events_a + built.events_b
    assert report["tables"]["games"]["rows"] == 12
    assert cli("dataset", "check", built.ds, "--full").exit_code == 0


def test_check_names_each_problem_and_exits_1(tmp_path):
    built = two_snapshots(tmp_path)
    snap = current_snapshot_dir(built.ds)
    events = sorted((snap / "events").iterdir())
    events[0].unlink()
    (snap / "rolls" / sorted(os.listdir(snap / "rolls"))[0]).write_bytes(b"PAR1 garbage PAR1")
    games = snap / "games" / sorted(os.listdir(snap / "games"))[0]
    shutil.copy(events[1], games)  # a Parquet file, but of another table
    result = cli("dataset", "check", built.ds, "--format", "json")
    assert result.exit_code == 1
    problems = {p["where"].split("/")[2]: p["what"] for p in json.loads(result.stdout)["problems"]}
    assert problems["events"] == "missing"
    assert problems["rolls"].startswith("not a readable Parquet file")
    assert problems["games"].startswith("not the games table's schema (missing columns ")


def test_check_cross_checks_row_counts_with_the_manifest(tmp_path):
    built = two_snapshots(tmp_path)
    snap = current_snapshot_dir(built.ds)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["files"][0]["events"] += 1  # the manifest says one more event was stored
    (snap / "manifest.json").write_text(json.dumps(manifest))
    result = cli("dataset", "check", built.ds)
    assert result.exit_code == 1
    total = built.events_a + built.events_b
    assert f"events has {total:,} rows, its input files gave {total + 1:,}" in result.stdout


def test_check_refuses_what_is_not_a_dataset(tmp_path):
    assert cli("dataset", "check", tmp_path / "missing").exit_code == 2
    (tmp_path / "notes.txt").write_text("x")
    result = cli("dataset", "check", tmp_path)
    assert result.exit_code == 2 and "not a farkle-logs dataset" in result.stderr


def test_check_notes_leftovers_without_calling_them_problems(tmp_path):
    built = two_snapshots(tmp_path)
    (built.ds / ".staging" / "x" / "events").mkdir(parents=True)
    snap = current_snapshot_dir(built.ds)
    shutil.copy(next((snap / "events").iterdir()), snap / "events" / "copied-by-hand.parquet")
    result = cli("dataset", "check", built.ds)
    assert result.exit_code == 0, result.output
    assert ".staging: left by an interrupted ingest" in result.stdout
    assert "1 file(s) the manifest does not list" in result.stdout and "copied-by-hand.parquet" in result.stdout
    # ... and no reader reads the unlisted file
    assert count(built.ds, "events") == built.events_a + built.events_b


# ---- dataset repair ---------------------------------------------------------------------------
def test_repair_of_a_healthy_dataset_changes_nothing(tmp_path):
    built = two_snapshots(tmp_path)
    pointer = (built.ds / POINTER).read_bytes()
    listing = sorted(str(p.relative_to(built.ds)) for p in built.ds.rglob("*"))
    result = cli("dataset", "repair", built.ds)
    assert result.exit_code == 0
    assert "healthy (snapshot 2); nothing to repair" in result.stdout
    assert (built.ds / POINTER).read_bytes() == pointer
    assert sorted(str(p.relative_to(built.ds)) for p in built.ds.rglob("*")) == listing


def test_repair_rolls_back_to_the_newest_complete_snapshot_and_names_the_files_to_ingest_again(tmp_path):
    built = two_snapshots(tmp_path)
    one_shot = tmp_path / "one"
    ingest([str(built.a), str(built.b)], one_shot)
    snap2 = current_snapshot_dir(built.ds)
    new_in_2 = set(os.listdir(snap2 / "events")) - set(os.listdir(built.ds / ".snapshots" / "000001" / "events"))
    (snap2 / "events" / new_in_2.pop()).unlink()  # a file only snapshot 2 has

    result = cli("dataset", "repair", built.ds, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["snapshot_before"], report["snapshot"]) == (2, 1)
    assert report["ingest_again"] == [str(built.b)]
    assert any("moved snapshot 2 (" in a and "missing" in a for a in report["actions"])
    moved = list((built.ds / ".damaged").iterdir())
    assert [p.name[:6] for p in moved] == ["000002"]  # kept, out of the way, not deleted
    assert cli("dataset", "check", built.ds).exit_code == 0
    assert count(built.ds, "events") == built.events_a

    again = ingest([str(built.b)], built.ds)  # what the repair said to do
    assert again.files == 1 and again.snapshot == 2
    assert everything(built.ds) == everything(one_shot)


def test_repair_when_nothing_verifies_changes_nothing(tmp_path):
    built = two_snapshots(tmp_path)
    lose_pointer(built.ds)
    for manifest in (built.ds / ".snapshots").glob("*/manifest.json"):
        manifest.write_text("garbage")
    listing = sorted(str(p.relative_to(built.ds)) for p in built.ds.rglob("*"))
    result = cli("dataset", "repair", built.ds)
    assert result.exit_code == 1
    assert "no snapshot verifies; nothing was changed" in result.stdout
    assert sorted(str(p.relative_to(built.ds)) for p in built.ds.rglob("*")) == listing


def test_repair_refuses_while_an_ingest_holds_the_lock(tmp_path):
    built = two_snapshots(tmp_path)
    lose_pointer(built.ds)
    with pytest.raises(StoreError, match="damaged dataset"):
        Store.open(built.ds)  # ingest refuses to open it
    fd = acquire_lock(built.ds)  # as if an ingest held it
    try:
        result = cli("dataset", "repair", built.ds)
        assert result.exit_code == 2 and "another ingest" in result.stderr
    finally:
        os.close(fd)
    assert not (built.ds / POINTER).exists()


def test_a_first_ingest_killed_before_its_commit_leaves_no_dataset_yet(tmp_path):
    log, _ = two_logs(tmp_path / "logs")
    ds = tmp_path / "ds"
    proc = farkle("ingest", log, "--out", ds, env={"FARKLE_LOGS_CRASH_AT": "snapshot_built"})
    assert proc.returncode < 0  # killed
    result = cli("stats", ds)
    assert result.exit_code == 2 and "no committed snapshot yet" in result.stderr
    summary = ingest([str(log)], ds)  # starts over: nothing was ever committed
    assert summary.snapshot == 1 and summary.files == 1


# ---- a fuzz over damaged directories ----------------------------------------------------------
DAMAGE = ("delete", "truncate", "garbage", "empty", "bad_json", "rmdir")


def _damage(ds: Path, rng: random.Random) -> str:
    entries = sorted(p for p in ds.rglob("*") if p.name != ".lock")
    target = rng.choice(entries)
    how = rng.choice(DAMAGE)
    if how == "rmdir" and target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.is_symlink() or how in ("delete", "rmdir"):
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    elif target.is_file():
        data = target.read_bytes()
        target.unlink()  # a new inode: hard-linked copies in other snapshots keep their bytes
        if how == "truncate":
            target.write_bytes(data[: rng.randrange(max(1, len(data)))])
        elif how == "garbage":
            target.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
        elif how == "empty":
            target.write_bytes(b"")
        else:
            target.write_text(
                json.dumps({"format": "farkle-logs", "dataset_version": DATASET_VERSION, "snapshot": "x"})
            )
    return f"{how} {target.relative_to(ds)}"


@pytest.mark.parametrize("seed", range(16))
def test_fuzz_damaged_datasets_never_a_traceback_never_a_silent_loss(tmp_path, seed):
    """Damage one or two random entries of a two-snapshot dataset, then run check, stats
    and ingest. Every command ends with its exit code and no traceback; whenever the dataset
    is still readable, it holds every event of its current snapshot (or of the snapshot
    repair chose), plus what the ingest added."""
    rng = random.Random(seed)
    built = two_snapshots(tmp_path)
    total = built.events_a + built.events_b
    done = [_damage(built.ds, rng) for _ in range(rng.choice((1, 2)))]
    extra = tmp_path / "logs" / "c.jsonl"
    extra.write_text(built.a.read_text().replace('"g5-', '"c5-'))

    check = cli("dataset", "check", built.ds)
    assert check.exit_code in (0, 1), (done, check.output)
    stats = cli("stats", built.ds, "--section", "players")
    assert stats.exit_code in (0, 2), (done, stats.output)
    if check.exit_code == 0:  # healthy: nothing that readers use was hit
        assert stats.exit_code == 0, (done, stats.output)
        assert count(built.ds, "events") == total, done
    result = cli("ingest", extra, "--out", built.ds)
    assert result.exit_code in (0, 1, 2), (done, result.output)
    if result.exit_code == 2:
        assert "damaged dataset" in result.stderr, (done, result.stderr)
        assert check.exit_code == 1, (done, check.output)
        repair = cli("dataset", "repair", built.ds, "--format", "json")
        assert repair.exit_code in (0, 1), (done, repair.output)
        if repair.exit_code == 1:
            return  # nothing verifies: nothing changed (tested above)
        chosen = json.loads(repair.stdout)["snapshot"]
        total = {1: built.events_a, 2: total}[chosen]
        assert cli("dataset", "check", built.ds).exit_code == 0, done
        result = cli("ingest", extra, "--out", built.ds)
        assert result.exit_code in (0, 1), (done, result.output)
    added = sum(1 for line in extra.read_text().splitlines() if line.strip())
    assert count(built.ds, "events") == total + added, done


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda m: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (lambda m: json.dumps({**m, "files": ["a.jsonl"]}), "`files` is not a list of objects"),
        (lambda m: json.dumps({**m, "files": [{"path": "a.jsonl"}]}), "lacks its path, ingest_id, size or sha256"),
        (
            lambda m: json.dumps({**m, "tables": {**m["tables"], "events": m["tables"]["events"] * 2}}),
            "`tables.events` lists a file twice",
        ),
        (
            lambda m: json.dumps({**m, "tables": {**m["tables"], "turns": ["/etc/passwd"]}}),
            "`tables.turns` is not a list of file paths inside the table's directory",
        ),
        (lambda m: json.dumps({**m, "snapshot": 7}), "it is snapshot 7, _current.json says 2"),
        (lambda m: json.dumps(m).encode("utf-16").decode("latin-1"), "unreadable"),
    ],
    ids=["deep", "files-strings", "files-fields", "twice", "absolute", "other-snapshot", "utf16"],
)
def test_hostile_manifests_are_damage_not_tracebacks(tmp_path, mangle, message):
    built = two_snapshots(tmp_path)
    path = built.ds / ".snapshots" / "000002" / "manifest.json"
    path.write_text(mangle(json.loads(path.read_text())), encoding="latin-1")
    for args in (["ingest", built.b, "--out", built.ds], ["stats", built.ds]):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert "damaged dataset" in result.stderr and message in result.stderr, result.stderr
    check = cli("dataset", "check", built.ds)
    assert check.exit_code == 1 and message in check.stdout
    repair = cli("dataset", "repair", built.ds)
    assert repair.exit_code == 0 and "pointed the dataset at snapshot 1" in repair.stdout

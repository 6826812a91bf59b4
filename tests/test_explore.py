"""`farkle-logs games`, `players`, `findings` and `sql` over an ingested dataset: the rows
against the games table and against `audit` on the same logs, the filters, the formats,
and `sql`'s refusal of everything but one SELECT that reads the dataset alone."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli.main import app
from pipeline.dataset.layout import open_dataset
from pipeline.ingest import ingest
from pipeline.simulate.run import simulate
from pipeline.stats import explore

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
FINDING_KEYS = ["game_id", "seq", "file", "line", "player", "code", "severity", "message", "claimed", "expected"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FARKLE_LOGS_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """40 simulated games, 30 % with a planted error, one bad line and one game cut short."""
    root = tmp_path_factory.mktemp("explore")
    log = root / "games.jsonl"
    simulate(log, 40, seed=3, players=(2, 4), inject_rate=0.3)
    lines = log.read_bytes().splitlines()
    last_end = max(i for i, line in enumerate(lines) if b'"game_end"' in line)
    lines = lines[:5] + [b'{"game_id": "x", "seq": '] + lines[5:last_end] + lines[last_end + 1 :]
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log


@pytest.fixture(scope="module")
def ds(logs) -> Path:
    ingest([str(logs)], logs.parent / "ds")
    return logs.parent / "ds"


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


def games_table(ds: Path) -> list[dict]:
    return [r for f in open_dataset(ds).table_files("games") for r in pq.read_table(f).to_pylist()]


def test_findings_are_the_rows_audit_gives_for_the_same_logs(ds, logs):
    audit = cli("audit", logs, "--format", "json")
    assert audit.exit_code == 1, audit.output  # findings
    want = json.loads(audit.stdout)["findings"]
    got = cli("findings", ds, "--format", "json")
    assert got.exit_code == 0, got.output
    rows = json.loads(got.stdout)
    assert len(rows) >= 10 and {r["code"] for r in rows} >= {"bad_json", "game_incomplete"}
    assert all(list(r) == FINDING_KEYS for r in rows)
    # the same rows; the dataset stores claimed and expected as doubles (107 reads back 107.0)
    key = lambda r: (r["file"], r["line"], r["seq"] or 0, r["code"], r["message"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(want, key=key)
    assert [(r["file"], r["line"]) for r in rows] == sorted((r["file"], r["line"]) for r in rows)


def test_findings_filters(ds):
    rows = json.loads(cli("findings", ds, "-f", "json").stdout)
    code = next(r["code"] for r in rows if r["player"])
    some = json.loads(cli("findings", ds, "--code", code, "-f", "json").stdout)
    assert some == [r for r in rows if r["code"] == code]
    player = next(r["player"] for r in rows if r["player"])
    mine = json.loads(cli("findings", ds, "-p", player, "--severity", "error", "-f", "json").stdout)
    assert mine == [r for r in rows if r["player"] == player and r["severity"] == "error"]
    game = next(r["game_id"] for r in rows if r["game_id"])
    assert json.loads(cli("findings", ds, "--game", game, "-f", "json").stdout) == [
        r for r in rows if r["game_id"] == game
    ]
    assert len(json.loads(cli("findings", ds, "-f", "json", "--limit", "3").stdout)) == 3
    typo = cli("findings", ds, "--code", code[:-1])
    assert typo.exit_code == 2 and f"did you mean {code}" in typo.output
    assert cli("findings", ds, "--severity", "fatal").exit_code == 2
    assert cli("findings", ds, "-p", "nobody").exit_code == 2
    assert cli("findings", ds, "--game", "g-none").exit_code == 2


def test_games_list_every_game_with_its_winners_and_findings(ds):
    stored = {g["game_id"]: g for g in games_table(ds)}
    rows = json.loads(cli("games", ds, "-f", "json").stdout)
    assert [r["game_id"] for r in rows] == sorted(stored, key=lambda g: (stored[g]["first_ts"], g))
    findings = json.loads(cli("findings", ds, "-f", "json").stdout)
    for r in rows:
        g = stored[r["game_id"]]
        assert r["players"] == g["players"]
        assert (r["winner_claimed"], r["winner_corrected"]) == (g["winner_claimed"], g["winner_corrected"])
        assert r["ended"] == ("finished" if g["complete"] else None)
        assert r["findings"] == sum(f["game_id"] == r["game_id"] for f in findings)
    assert any(r["ended"] is None for r in rows)
    flagged = json.loads(cli("games", ds, "--with-findings", "-f", "json").stdout)
    assert flagged == [r for r in rows if r["findings"]] and 0 < len(flagged) < len(rows)
    a, b = rows[0]["players"][:2]
    together = json.loads(cli("games", ds, "-p", a, "-p", b, "-f", "json").stdout)
    assert together == [r for r in rows if a in r["players"] and b in r["players"]]
    text = cli("games", ds, "--limit", "2")
    assert text.exit_code == 0 and rows[0]["game_id"] in text.stdout and rows[2]["game_id"] not in text.stdout
    table = list(csv.DictReader(io.StringIO(cli("games", ds, "-f", "csv").stdout)))
    assert json.loads(table[0]["players"]) == rows[0]["players"]  # lists as JSON text in a cell
    assert cli("games", ds, "-p", "nobody").exit_code == 2
    assert cli("games", ds, "--since", "2999-01-01").exit_code == 2


def test_players_list_games_and_first_and_last_seen(ds):
    stored = games_table(ds)
    rows = json.loads(cli("players", ds, "-f", "json").stdout)
    names = sorted({p for g in stored for p in g["players"]})
    assert [r["player"] for r in rows] == names
    for r in rows:
        mine = [g for g in stored if r["player"] in g["players"]]
        assert r["games"] == len(mine)
        assert r["finished_games"] == sum(g["complete"] for g in mine)
        assert r["first_seen"] == min(g["first_ts"] for g in mine).isoformat().replace("+00:00", "Z")


# ---- sql ---------------------------------------------------------------------------------
def test_sql_reads_tables_and_models_by_name(ds):
    got = cli("sql", ds, "select count(*) as n from games", "-f", "json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout) == [{"n": len(games_table(ds))}]
    ratings = json.loads(cli("sql", ds, "select * from rpt_ratings", "-f", "json").stdout)
    assert ratings == json.loads(cli("stats", ds, "-s", "ratings", "-f", "json").stdout)["tables"]["ratings"]
    joined = cli(
        "sql", ds, "select h.player, count(*) from rating_history h join int_games_in_scope using (game_id) group by 1"
    )
    assert joined.exit_code == 0, joined.output
    odds = json.loads(cli("sql", ds, "select dice, farkle_prob from exact_odds order by dice", "-f", "json").stdout)
    assert [r["dice"] for r in odds][:6] == [1, 2, 3, 4, 5, 6]
    assert json.loads(cli("sql", ds, "select 1 as a union all select 2", "-f", "json", "--limit", "1").stdout) == [
        {"a": 1}
    ]


HOSTILE = [
    "copy games to '{out}'",
    "copy (select 1) to '{out}' (format csv)",
    "export database '{dir}'",
    "attach '{out}' as other",
    "attach ':memory:' as other",
    "detach memory",
    "install httpfs",
    "load httpfs",
    "force install json",
    "pragma enable_profiling",
    "pragma threads=1",
    "set enable_external_access = true",
    "set threads = 1",
    "reset lock_configuration",
    "set variable f_players = ['x']",
    "create table t as select 1",
    "create temp view v as select 1",
    "create macro m(a) as a",
    "insert into games select * from games",
    "update games set complete = false",
    "delete from games",
    "drop view games",
    "alter view games rename to g",
    "call pragma_version()",
    "checkpoint",
    "vacuum",
    "begin transaction",
    "use memory",
    "select 1; copy games to '{out}'",
    "select 1; select 2",
    "explain analyze copy games to '{out}'",
    "pivot games on complete",
]


@pytest.mark.parametrize("statement", HOSTILE)
def test_sql_refuses_anything_but_one_select_in_one_line(ds, tmp_path, statement):
    out = tmp_path / "written.csv"
    result = cli("sql", ds, statement.format(out=out, dir=tmp_path / "export"))
    assert result.exit_code == 2
    assert result.output.startswith("error: refused: ") and result.output.count("\n") == 1, result.output
    assert not out.exists() and not (tmp_path / "export").exists()


@pytest.mark.parametrize(
    "statement",
    [
        "select * from read_csv('{secret}')",
        "select * from read_text('{secret}')",
        "select * from glob('{dir}/*')",
        "select * from read_parquet('{dir}/*.parquet')",
        "select * from '{secret}'",
        "select * from query('copy games to ''{dir}/x.csv''')",
        "select current_setting('enable_external_access') and false from (select 1) where 1 = (select 1 from read_json('{secret}'))",
    ],
)
def test_sql_select_reads_no_file_but_the_datasets(ds, tmp_path, statement):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    result = cli("sql", ds, statement.format(secret=secret, dir=tmp_path))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: the SQL failed: ") and result.output.count("\n") == 1, result.output
    assert {p.name for p in tmp_path.iterdir()} <= {"cache", "secret.csv"}  # nothing written


def test_sql_settings_are_locked_down(ds):
    rows = json.loads(
        cli(
            "sql",
            ds,
            "select current_setting('enable_external_access') as ext, current_setting('lock_configuration') as locked",
            "-f",
            "json",
        ).stdout
    )
    assert rows == [{"ext": False, "locked": True}]
    assert explore.query(ds, "select count(*) as n from rolls").num_rows == 1
    with pytest.raises(explore.ReadOnlyError):
        explore.query(ds, "copy rolls to 'x.csv'")


def test_sql_errors_are_one_line(ds):
    for statement in ("selec 1", "select * from nope", "select nope from games"):
        result = cli("sql", ds, statement)
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output


def test_the_docs_list_every_table_and_model_with_its_columns():
    text = (ROOT / "docs" / "explore.md").read_text(encoding="utf-8")
    start = text.index("<!-- catalog: begin -->")
    end = text.index("<!-- catalog: end -->")
    assert text[start:end].split("\n", 1)[1] == explore.catalog_markdown(), (
        "docs/explore.md is out of date: python -m pipeline.stats.explore prints its table"
    )
    names = set(re.findall(r"^\| `(\w+)` \|", text[start:end], re.M))
    assert names == {*explore.model_names(), "events", "turns", "rolls", "decisions", "games", "game_players",
                     "findings", "rejects", "exact_odds", "policy_values", "policy_tail", "keep_options"}  # fmt: skip

"""Each bank-or-roll's link to the roll its keep came from, as both replays store it on the
decisions (from_roll_key, from_kept_key, from_points_before), against the link derived from
the rows (int_choice_links: the turn's last roll before the choice), row for row, on logs
full of planted errors; and the single-turn judgement that reads the stored link against
the one the derived link gives (int_roll_keeps' judgement of that roll's keep)."""

from __future__ import annotations

import pytest

from pipeline.ingest.run import ingest
from pipeline.rules import Ruleset
from pipeline.simulate import simulate
from pipeline.stats import run, session

SMALL = Ruleset.from_value({"base": "standard", "target": 1500})
BOTS = ["threshold", "cautious", "greedy", "keep_all", "keep_min", "optimal"]


@pytest.fixture(scope="module", params=["fast", "reference"])
def dataset(request, tmp_path_factory):
    """The same mangled logs ingested by the compiled replay (clean games) with the
    reference for the rest, and by the reference engine alone."""
    root = tmp_path_factory.mktemp("links")
    logs = []
    for players, seed in ((2, 31), (3, 32), (4, 33)):
        log = root / f"p{players}.jsonl"
        simulate(log, 30, seed, rules=[SMALL], players=(players, players), bots=BOTS, inject_rate=0.6)
        logs.append(str(log))
    ingest(logs, root / "ds", reference=request.param == "reference")
    return root / "ds"


def _links(ds) -> list[dict]:
    with session(ds, with_odds=False, with_policy=True) as con:
        return run(con, "int_choice_links").to_pylist()


def test_the_stored_link_is_the_turns_last_roll_before_the_choice(dataset):
    rows = _links(dataset)
    assert len(rows) > 500
    linked = [r for r in rows if r["roll_seq"] is not None]
    assert any(r["kept_key"] is not None for r in linked)
    unlinked = [r for r in rows if r["roll_seq"] is None]  # a keep with nothing rolled before it
    assert all(r["from_roll_key"] is None and r["from_points_before"] is None for r in unlinked)
    wrong = [
        r
        for r in linked
        if (r["from_roll_key"], r["from_kept_key"], r["from_points_before"])
        != (r["roll_key"], r["kept_key"], r["points_before"])
    ]
    assert not wrong, wrong[:3]


def test_a_choice_is_judged_as_the_derived_link_judges_it(dataset):
    """int_choice_values judges a bank-or-roll from the stored link; here the same judgement
    is made from int_roll_keeps' row of the derived roll (its judged keep and the state it
    leads to), and the two agree on every choice, judged or not."""
    with session(dataset, with_odds=False, with_policy=True) as con:
        run(con, "int_choice_links")
        run(con, "int_roll_keeps")
        run(con, "int_choice_values")
        pairs = con.execute(
            """
            select v.judged,
                   coalesce(k.judged and k.points_after = v.points and k.dice_after = v.dice
                            and v.opened is not null, false) as derived
            from int_choice_values as v
            inner join int_games_in_scope as g on v.game_no = g.game_no
            inner join int_choice_links as l on l.game_id = g.game_id and l.seq = v.seq
            left join int_roll_keeps as k on k.game_no = v.game_no and k.seq = l.roll_seq
            where v.kind = 'action'
            """
        ).fetchall()
    assert len(pairs) > 500
    assert sum(judged for judged, _ in pairs) > 100 and any(not judged for judged, _ in pairs)
    assert all(judged == derived for judged, derived in pairs)

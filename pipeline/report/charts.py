"""Chart builders: pure functions from small Arrow tables to Altair charts.

Each builder takes tables already aggregated by SQL (pipeline.stats or the report's models)
and returns an `alt.Chart` (or layer) with a title, axis titles with units and tooltips. No
builder computes a statistic: the browser only filters rows (the player picker), reshapes the
dice-face counts and formats numbers.

Per-player charts hold the overall rows and those of the players the report lets you pick
(`players`); a drop-down (a Vega-Lite parameter bound to a select) chooses the rows shown.
Row keys are `overall` and `p:<name>`, so no player name can pass for the overall rows.

The data-independent part of every spec is pinned by tests/snapshots (see spec_skeleton).
"""

from __future__ import annotations

import copy
import datetime as dt
import math
from typing import Any, Iterable

import altair as alt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.model import (
    ANY_LINE,
    BANK,
    END_OF_INPUT,
    ERROR,
    FARKLE,
    FINDING_CODES,
    GAME_END,
    KEEP,
    ROLL,
    SCORESHEET,
    WARNING,
    as_code,
)

# A chart never embeds more rows than this: the tables are aggregates (a few rows per player
# at most), so hitting it means a bug upstream, not a big dataset.
MAX_ROWS = 20_000

OVERALL = "overall"
ALL_PLAYERS = "All players"
POINT_BUCKETS = [f"{lo}-{lo + 250}" for lo in range(0, 3000, 250)] + ["3000+"]
TURN_BUCKETS = ["farkle"] + POINT_BUCKETS
# One colour per severity of the finding codes (pipeline.model.Code): the legend shows these.
SEVERITY_COLORS = {ERROR: "#c0392b", WARNING: "#e67e22"}
# A heat-map cell of fewer choices than this is greyed out and shows its count instead of a
# share or a loss: 100 % of two choices says nothing (the tooltip still has the figures).
MIN_CELL_CHOICES = 20
FEW_CHOICES_COLOR = "#e9ecef"
# The decision-loss colour scale ends at this quantile of the cells with enough choices
# (darker cells are clamped to its colour), so one extreme cell cannot wash out the rest.
LOSS_SCALE_QUANTILE = 0.95
WIDTH = 560
HEIGHT = 280


class TooManyRows(ValueError):
    """A chart was handed more rows than MAX_ROWS: aggregate in SQL first."""


def _rows(table: pa.Table, columns: Iterable[str]) -> list[dict[str, Any]]:
    if table.num_rows > MAX_ROWS:
        raise TooManyRows(f"{table.num_rows} rows for one chart (limit {MAX_ROWS}): aggregate in SQL first")
    return table.select(list(columns)).to_pylist()


def _keyed(table: pa.Table, columns: Iterable[str], players: list[str]) -> list[dict[str, Any]]:
    """Rows of the overall scope and of `players`, each with its picker key in `who`."""
    keep = pc.or_(
        pc.equal(table["scope"], OVERALL),
        pc.fill_null(pc.is_in(table["player"], value_set=pa.array(players, pa.string())), False),
    )
    rows = _rows(table.filter(keep), ["scope", "player", *columns])
    for row in rows:
        scope, player = row.pop("scope"), row.pop("player")
        row["who"] = OVERALL if scope == OVERALL else f"p:{player}"
    return rows


def _with_p_text(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each p-value column also as text, printed the one way every output prints it
    (significance.format_p): Vega's number formats would write 2.3e-10 or 0.0030."""
    from pipeline.stats.significance import format_p

    for row in rows:
        for column in ("p_value", "p_adjusted"):
            if column in row:
                row[f"{column}_text"] = format_p(row[column], missing="–")
    return rows


def player_picker(name: str, players: list[str]) -> alt.Parameter:
    """A drop-down choosing 'All players' or one player; its value is a row key."""
    return alt.param(
        name=name,
        value=OVERALL,
        bind=alt.binding_select(
            options=[OVERALL, *(f"p:{p}" for p in players)],
            labels=[ALL_PLAYERS, *players],
            name="Player: ",
        ),
    )


def _title(text: str, subtitle: str) -> alt.Title:
    return alt.Title(text, subtitle=subtitle, anchor="start")


def count_axis(top: int, max_ticks: int = 8) -> alt.Axis:
    """An axis for counts: whole numbers only, at most `max_ticks` + 1 of them, from 0 to at
    least `top`. (Vega's own ticks for a domain such as [0, 2] are 0, 0.5, 1, ... and a ",d"
    format turns them into 0 1 1 1 2 2.)"""
    top = max(int(top), 1)
    step = 1
    while top / step > max_ticks:
        step = next(s * 10**k for k in range(0, 12) for s in (1, 2, 5) if s * 10**k > step)
    ticks = list(range(0, top + step, step))
    return alt.Axis(values=ticks, format=",d")


def count_scale(top: int, max_ticks: int = 8) -> alt.Scale:
    """The scale matching `count_axis`: 0 to the last tick, so the top tick is drawn. (Bounds
    that follow the data are domainMin/domainMax, which spec_skeleton leaves out.)"""
    return alt.Scale(domainMin=0, domainMax=count_axis(top, max_ticks).values[-1], nice=False)


# --------------------------------------------------------------------------- bust rate
def bust_rate(table: pa.Table, players: list[str]) -> alt.LayerChart:
    """Observed farkle rate by dice thrown, with its 95 % Wilson interval, against the exact
    odds of the games' rulesets (stats table bust_rate_by_dice_left)."""
    rows = _with_p_text(
        _keyed(
            table,
            [
                "dice",
                "rolls",
                "farkles",
                "bust_rate",
                "wilson_lo",
                "wilson_hi",
                "exact_rate",
                "p_value",
                "p_adjusted",
                "off",
            ],
            players,
        )
    )
    for row in rows:
        row["flag"] = "yes: OFF" if row["off"] else "no"
    who = player_picker("bust_player", players)
    x = alt.X(
        "dice:O",
        title="Dice thrown (number of dice in the roll)",
        sort=[1, 2, 3, 4, 5, 6],
        scale=alt.Scale(domain=[1, 2, 3, 4, 5, 6]),
        axis=alt.Axis(labelAngle=0),
    )
    y_title = "Farkle rate (% of rolls)"
    color = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=["observed, 95 % interval", "exact odds"], range=["#1f77b4", "#d62728"]),
        legend=alt.Legend(orient="top"),
    )
    tooltip = [
        alt.Tooltip("dice:O", title="dice thrown"),
        alt.Tooltip("rolls:Q", title="rolls", format=","),
        alt.Tooltip("farkles:Q", title="farkles", format=","),
        alt.Tooltip("bust_rate:Q", title="observed", format=".2%"),
        alt.Tooltip("wilson_lo:Q", title="95 % interval from", format=".2%"),
        alt.Tooltip("wilson_hi:Q", title="95 % interval to", format=".2%"),
        alt.Tooltip("exact_rate:Q", title="exact odds", format=".2%"),
        alt.Tooltip("p_text:N", title="p-value (exact test)"),
        alt.Tooltip("p_adjusted_text:N", title="p-value corrected for every row (Holm)"),
        alt.Tooltip("flag:N", title="flagged (corrected p < 0.05)"),
    ]
    base = alt.Chart().transform_filter(alt.datum.who == who)
    interval = (
        base.mark_rule(strokeWidth=3)
        .encode(
            x=x,
            y=alt.Y("wilson_lo:Q", title=y_title, axis=alt.Axis(format="%"), scale=alt.Scale(zero=True)),
            y2="wilson_hi:Q",
            color=color,
            tooltip=tooltip,
        )
        .transform_calculate(series="'observed, 95 % interval'")
    )
    observed = (
        base.mark_point(filled=True, size=70)
        .encode(x=x, y=alt.Y("bust_rate:Q", title=y_title), color=color, tooltip=tooltip)
        .transform_calculate(series="'observed, 95 % interval'")
    )
    exact = (
        base.mark_tick(thickness=2, size=28)
        .encode(x=x, y=alt.Y("exact_rate:Q", title=y_title), color=color, tooltip=tooltip)
        .transform_calculate(series="'exact odds'")
    )
    return (
        alt.layer(interval, observed, exact, data=alt.Data(values=rows))  # type: ignore[return-value]  # .properties() is typed for any chart
        .add_params(who)
        .properties(
            width=WIDTH,
            height=HEIGHT,
            title=_title(
                "Bust rate by dice thrown", "Observed share of rolls that scored nothing, against the exact odds"
            ),
        )
    )


# --------------------------------------------------------------------------- turn value
def turn_value(buckets: pa.Table, summary: pa.Table, players: list[str]) -> alt.LayerChart:
    """Distribution of points per finished turn, farkles as their own bar (stats tables
    turn_value_buckets and turn_value), with the mean and median as text."""
    rows = _keyed(buckets, ["bucket", "turns", "share"], players)
    for row in rows:
        row["kind"] = "farkled (0 points)" if row["bucket"] == "farkle" else "banked"
    means = _keyed(summary, ["turns", "mean_points", "median_points"], players)
    who = player_picker("turn_player", players)
    bars = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X(
                "bucket:N",
                title="Points of the turn (corrected; banked turns in 250-point buckets)",
                sort=TURN_BUCKETS,
                scale=alt.Scale(domain=TURN_BUCKETS),
                axis=alt.Axis(labelAngle=-40),
            ),
            y=alt.Y("share:Q", title="Share of finished turns (%)", axis=alt.Axis(format="%")),
            color=alt.Color(
                "kind:N",
                title=None,
                scale=alt.Scale(domain=["farkled (0 points)", "banked"], range=["#c0392b", "#1f77b4"]),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("bucket:N", title="turn points"),
                alt.Tooltip("turns:Q", title="turns", format=","),
                alt.Tooltip("share:Q", title="share of turns", format=".1%"),
            ],
        )
        .transform_filter(alt.datum.who == who)
    )
    note = (
        alt.Chart(alt.Data(values=means))
        .mark_text(align="right", baseline="top", x="width", y=4, fontSize=12)
        .encode(
            text="label:N",
        )
        .transform_filter(alt.datum.who == who)
        .transform_calculate(
            label="'mean ' + format(datum.mean_points, ',.0f') + ' · median ' + format(datum.median_points, ',.0f')"
            " + ' points per turn over ' + format(datum.turns, ',') + ' turns'"
        )
    )
    return (
        alt.layer(bars, note)  # type: ignore[return-value]  # .properties() is typed for any chart
        .add_params(who)
        .properties(
            width=WIDTH,
            height=HEIGHT,
            title=_title("Points per turn", "Every finished turn; a farkled turn scores 0"),
        )
    )


# --------------------------------------------------------------------------- bank vs roll
def bank_heatmap(table: pa.Table) -> alt.LayerChart:
    """Share of banks among bank-or-roll choices by dice left and turn points so far
    (report table bank_heatmap)."""
    rows = _rows(
        table,
        ["dice_left", "bucket", "decisions", "banks", "rolls", "bank_rate", "rolled_farkles", "farkle_rate_after_roll"],
    )
    x = alt.X(
        "bucket:O",
        title="Turn points so far, this keep included (250-point buckets)",
        sort=POINT_BUCKETS,
        scale=alt.Scale(domain=POINT_BUCKETS),
        axis=alt.Axis(labelAngle=-40),
    )
    y = alt.Y(
        "dice_left:O",
        title="Dice left to roll (number of dice)",
        sort=[6, 5, 4, 3, 2, 1],
        scale=alt.Scale(domain=[6, 5, 4, 3, 2, 1]),
    )
    tooltip = [
        alt.Tooltip("dice_left:O", title="dice left"),
        alt.Tooltip("bucket:O", title="turn points"),
        alt.Tooltip("decisions:Q", title="choices", format=","),
        alt.Tooltip("banks:Q", title="banked", format=","),
        alt.Tooltip("rolls:Q", title="rolled on", format=","),
        alt.Tooltip("bank_rate:Q", title="share banked", format=".1%"),
        alt.Tooltip("farkle_rate_after_roll:Q", title="farkled after rolling on", format=".1%"),
    ]
    enough = f"datum.decisions >= {MIN_CELL_CHOICES}"
    cells = (
        alt.Chart()
        .mark_rect(stroke="white")
        .encode(
            x=x,
            y=y,
            color=alt.condition(
                enough,
                alt.Color(
                    "bank_rate:Q",
                    title="Share banked (%)",
                    scale=alt.Scale(domain=[0, 1], scheme="blues"),
                    legend=alt.Legend(format="%"),
                ),
                alt.value(FEW_CHOICES_COLOR),
            ),
            tooltip=tooltip,
        )
    )
    labels = (
        alt.Chart()
        .transform_calculate(label=f"{enough} ? format(datum.bank_rate, '.0%') : 'n=' + datum.decisions")
        .mark_text(fontSize=10)
        .encode(
            x=x,
            y=y,
            text=alt.Text("label:N"),
            color=alt.value(
                "black",
                condition=[
                    {"test": f"!({enough})", "value": "#6c757d"},
                    {"test": "datum.bank_rate > 0.55", "value": "white"},
                ],
            ),
            tooltip=tooltip,
        )
    )
    return alt.layer(cells, labels, data=alt.Data(values=rows)).properties(  # type: ignore[return-value]  # .properties() is typed for any chart
        width=WIDTH,
        height=240,
        title=_title(
            "Bank or roll on",
            f"After a keep: share of choices that banked, by dice left and turn points; grey cells hold fewer "
            f"than {MIN_CELL_CHOICES} choices (their count is shown)",
        ),
    )


# --------------------------------------------------------------------------- decision quality
KIND_LABELS = {"keep": "Keeps (dice rolled)", "action": "Bank or roll (dice left to roll)"}


def decision_loss(table: pa.Table) -> alt.Chart:
    """Mean loss against the single-turn policy by dice and turn points, one panel per kind of
    choice (overall rows of stats decision_loss_by_state)."""
    overall = table.filter(pc.equal(table["scope"], OVERALL))
    rows = _rows(overall, ["kind", "dice", "bucket", "judged", "mean_loss", "optimal_share"])
    for row in rows:
        row["kind"] = KIND_LABELS.get(row["kind"], row["kind"])
    tooltip = [
        alt.Tooltip("kind:N", title="choice"),
        alt.Tooltip("dice:O", title="dice"),
        alt.Tooltip("bucket:O", title="turn points"),
        alt.Tooltip("judged:Q", title="choices judged", format=","),
        alt.Tooltip("mean_loss:Q", title="mean loss (points)", format=",.1f"),
        alt.Tooltip("optimal_share:Q", title="optimal", format=".1%"),
    ]
    top = loss_scale_top(rows)
    enough = f"datum.judged >= {MIN_CELL_CHOICES}"
    panel = WIDTH // 2 - 20
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_rect(stroke="white")
        .encode(
            x=alt.X(
                "bucket:O",
                title="Turn points before (250-pt buckets)",
                sort=POINT_BUCKETS,
                scale=alt.Scale(domain=POINT_BUCKETS),
                # each panel draws its own title: never wider than the panel, so two cannot overlap
                axis=alt.Axis(labelAngle=-40, titleLimit=panel),
            ),
            y=alt.Y(
                "dice:O",
                title="Dice (number of dice)",
                sort=[6, 5, 4, 3, 2, 1],
                scale=alt.Scale(domain=[6, 5, 4, 3, 2, 1]),
            ),
            color=alt.condition(
                enough,
                alt.Color(
                    "mean_loss:Q",
                    title="Mean loss (points)",
                    scale=alt.Scale(scheme="orangered", domainMin=0, domainMax=top, clamp=True, nice=False),
                    # the darkest colour is the clamp: that value or more
                    legend=alt.Legend(
                        values=[0, round(top / 2), top],
                        labelExpr=f"datum.value >= {top:g} ? '≥ ' + datum.label : datum.label",
                    ),
                ),
                alt.value(FEW_CHOICES_COLOR),
            ),
            column=alt.Column("kind:N", title=None, sort=list(KIND_LABELS.values()), spacing=36),
            tooltip=tooltip,
        )
        .properties(
            width=panel,
            height=200,
            title=_title(
                "Where points are given up",
                "Mean expected points lost per choice against the exact single-turn policy; "
                f"grey cells hold fewer than {MIN_CELL_CHOICES} choices",
            ),
        )
    )


def loss_scale_top(rows: list[dict[str, Any]]) -> float:
    """Where the decision-loss colour scale ends: the LOSS_SCALE_QUANTILE quantile (nearest
    rank) of the mean losses of the cells with at least MIN_CELL_CHOICES choices, rounded up
    to a whole point (at least 1)."""
    losses = sorted(
        r["mean_loss"] for r in rows if r["mean_loss"] is not None and (r["judged"] or 0) >= MIN_CELL_CHOICES
    )
    if not losses:
        return 1.0
    rank = min(len(losses) - 1, max(0, math.ceil(LOSS_SCALE_QUANTILE * len(losses)) - 1))
    return float(max(1, math.ceil(losses[rank])))


def players_by_loss(table: pa.Table, players: list[str]) -> alt.Chart:
    """Players ranked by mean loss per judged choice (stats decision_quality), limited to
    `players` (the report's pick list)."""
    mine = table.filter(
        pc.and_(
            pc.equal(table["scope"], "player"),
            pc.fill_null(pc.is_in(table["player"], value_set=pa.array(players, pa.string())), False),
        )
    )
    mine = mine.filter(pc.greater(mine["judged"], 0))
    rows = _rows(mine, ["player", "judged", "mean_loss", "optimal_share", "blunders"])
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=alt.Y("player:N", title="Player", sort="x"),
            x=alt.X("mean_loss:Q", title="Mean loss per choice (points)"),
            color=alt.Color(
                "optimal_share:Q",
                title="Optimal choices (%)",
                scale=alt.Scale(scheme="blues"),
                legend=alt.Legend(format="%"),
            ),
            tooltip=[
                alt.Tooltip("player:N", title="player"),
                alt.Tooltip("judged:Q", title="choices judged", format=","),
                alt.Tooltip("mean_loss:Q", title="mean loss (points)", format=",.1f"),
                alt.Tooltip("optimal_share:Q", title="optimal", format=".1%"),
                alt.Tooltip("blunders:Q", title="blunders", format=","),
            ],
        )
        .properties(
            width=WIDTH,
            height=alt.Step(16),
            title=_title("Players by mean loss", "Expected points given up per keep or bank-or-roll; smallest first"),
        )
    )


# --------------------------------------------------------------------------- findings
def findings_by_code(table: pa.Table) -> alt.Chart:
    """Audit findings per code, coloured by severity (report table findings_by_code)."""
    rows = _rows(table, ["code", "severity", "findings", "games", "players"])
    top = max((r["findings"] for r in rows), default=1)
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=alt.Y("code:N", title="Finding code", sort="-x"),
            x=alt.X("findings:Q", title="Findings (count)", axis=count_axis(top), scale=count_scale(top)),
            color=alt.Color(
                "severity:N",
                title="Severity",
                scale=alt.Scale(domain=list(SEVERITY_COLORS), range=list(SEVERITY_COLORS.values())),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("code:N", title="code"),
                alt.Tooltip("severity:N", title="severity"),
                alt.Tooltip("findings:Q", title="findings", format=","),
                alt.Tooltip("games:Q", title="games", format=","),
                alt.Tooltip("players:Q", title="players", format=","),
            ],
        )
        .properties(
            width=WIDTH,
            height=alt.Step(18),
            title=_title("Audit findings by code", "What the audit found, most frequent first"),
        )
    )


PERIOD_TITLES = {
    "hour": "Hour of the finding (UTC)",
    "day": "Day of the finding (UTC)",
    "week": "Week of the finding (UTC, weeks start on Monday)",
    "month": "Month of the finding (UTC)",
}
PERIOD_FORMATS = {"hour": "%b %d %H:%M", "day": "%Y-%m-%d", "week": "%Y-%m-%d", "month": "%b %Y"}
PERIOD_SECONDS = {"hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30.44 * 86400}


def _instant(text: str) -> dt.datetime:
    """A period bound of findings_by_period ('YYYY-MM-DD' or 'YYYY-MM-DDTHH:00:00Z'), UTC.
    The end of a period in 9999 is '10000-01-01', past Python's dates: the latest instant."""
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        moment = dt.datetime.max
    return moment.replace(tzinfo=dt.timezone.utc)


def _millis(moment: dt.datetime) -> int:
    """A time scale bound: milliseconds since the epoch (what Vega's time scales hold)."""
    return round(moment.timestamp() * 1000)


def findings_over_time(table: pa.Table, unit: str) -> alt.Chart:
    """Audit findings per period, stacked by code (report table findings_by_period; rows
    with no period are left out). `unit` is the table's period: hour, day, week or month,
    chosen in SQL from the span the games cover; each bar spans its period, from `period`
    to `period_end`, and the time axis spans the whole covered span (`axis_start` to
    `axis_end`), so a day of games is shown by the hour and a burst of findings shows
    where it falls, instead of one bar filling the chart."""
    dated = table.filter(pc.is_valid(table["period"]))
    rows, codes, colors = group_codes(_rows(dated, ["period", "period_end", "code", "findings"]))
    by_kind = len(codes) < len({row["code"] for row in _rows(dated, ["code"])})
    scale = alt.Scale(type="utc")
    axis = alt.Axis(format=PERIOD_FORMATS[unit], labelAngle=-40)
    if dated.num_rows:
        start, end = dated["axis_start"][0].as_py(), dated["axis_end"][0].as_py()
        scale = alt.Scale(type="utc", domainMin=_millis(_instant(start)), domainMax=_millis(_instant(end)), nice=False)
        periods = max(1, round((_instant(end) - _instant(start)).total_seconds() / PERIOD_SECONDS[unit]))
        step = max(1, -(-periods // 12))  # at most about 12 labels
        if unit == "hour":  # Vega's tick intervals fail on "hour": the ticks are given outright
            first = _millis(_instant(start))
            ticks = [first + i * 3_600_000 for i in range(0, periods + 1, step)]
            axis = alt.Axis(format=PERIOD_FORMATS[unit], labelAngle=-40, values=ticks)
        else:
            axis = alt.Axis(
                format=PERIOD_FORMATS[unit],
                labelAngle=-40,
                tickCount=alt.TimeIntervalStep(interval=unit, step=step),  # type: ignore[arg-type]  # unit: one of altair's
            )
    per_period: dict[str, int] = {}
    for row in rows:
        per_period[row["period"]] = per_period.get(row["period"], 0) + row["findings"]
    top = max(per_period.values(), default=1)
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("period:T", title=PERIOD_TITLES[unit], scale=scale, axis=axis),
            x2="period_end:T",
            y=alt.Y("sum(findings):Q", title="Findings (count)", axis=count_axis(top, 5), scale=count_scale(top, 5)),
            color=alt.Color(
                "code:N",
                title="Kind of finding (codes on hover)" if by_kind else "Finding code",
                sort=codes,
                scale=alt.Scale(domain=codes, range=colors),
            ),
            order=alt.Order("rank:Q"),
            tooltip=[
                alt.Tooltip("period:N", title=f"{unit} from (UTC)"),
                alt.Tooltip("code:N", title="kind" if by_kind else "code"),
                alt.Tooltip("sum(findings):Q", title="findings", format=","),
                *([alt.Tooltip("detail:N", title="codes")] if by_kind else []),
            ],
        )
        .properties(
            width=WIDTH,
            height=220,
            title=_title(
                "Audit findings over time", f"Per {unit}, by the time of the finding (or the start of its game)"
            ),
        )
    )


# Nine colours that tell apart (Tableau 10 without its grey): a code each, when there are no
# more codes than this; else a kind of finding each (CODE_KINDS).
CODE_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
# The kinds of finding: the rows of the findings table (pipeline.model.PRECEDENCE) a code is
# first listed in, as the legend names them.
CODE_KINDS = {
    ANY_LINE: "lines unreadable or out of place",
    ROLL: "rolls",
    KEEP: "keeps and their points",
    BANK: "banks and totals",
    FARKLE: "farkles",
    GAME_END: "game end",
    END_OF_INPUT: "log ends early",
    SCORESHEET: "scoresheet",
}


def code_kind(code: str) -> str:
    try:
        return CODE_KINDS[as_code(code).rows[0]]
    except (ValueError, IndexError, KeyError):  # a code of no row (none today): its own name
        return code


def group_codes(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """(rows, legend entries, their colours) for findings stacked by code: one colour per code
    when there are at most len(CODE_COLORS) codes, else one per kind of finding (code_kind:
    never two codes sharing a colour without the legend saying so), each bar's codes and
    counts in its tooltip ("of which"). Rows get `rank` (the stacking order: the legend's)
    and `detail`."""
    codes = sorted(
        {row["code"] for row in rows},
        key=lambda code: (FINDING_CODES.index(code) if code in FINDING_CODES else 99, code),
    )
    if len(codes) <= len(CODE_COLORS):
        out = [{**row, "rank": codes.index(row["code"]), "detail": ""} for row in rows]
        return out, codes, CODE_COLORS[: len(codes)]
    kinds = list(dict.fromkeys(code_kind(code) for code in codes))
    palette = {kind: CODE_COLORS[i % len(CODE_COLORS)] for i, kind in enumerate(CODE_KINDS.values())}
    grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        kind = code_kind(row["code"])
        bar = grouped.setdefault(
            (row["period"], row["period_end"], kind),
            {"period": row["period"], "period_end": row["period_end"], "code": kind, "findings": 0, "parts": {}},
        )
        bar["findings"] += row["findings"]
        bar["parts"][row["code"]] = bar["parts"].get(row["code"], 0) + row["findings"]
    out = []
    for bar in grouped.values():
        parts = bar.pop("parts")
        bar["detail"] = ", ".join(f"{code} {n:,}" for code, n in sorted(parts.items(), key=lambda kv: (-kv[1], kv[0])))
        bar["rank"] = kinds.index(bar["code"])
        out.append(bar)
    return out, kinds, [palette.get(kind, "#bab0ac") for kind in kinds]


# --------------------------------------------------------------------------- dice faces
FACES = [f"face_{i}" for i in range(1, 7)]


def dice_faces(table: pa.Table, players: list[str]) -> alt.LayerChart:
    """Share of dice showing each face, against 1/6, with Pearson's chi-square test
    (stats table dice_fairness)."""
    rows = _with_p_text(_keyed(table, [*FACES, "dice", "chi2", "p_value"], players))
    who = player_picker("dice_player", players)
    base = alt.Chart().transform_filter(alt.datum.who == who)
    tooltip = [
        alt.Tooltip("face:O", title="face"),
        alt.Tooltip("count:Q", title="dice showing it", format=","),
        alt.Tooltip("share:Q", title="share", format=".2%"),
        alt.Tooltip("expected:Q", title="expected if fair", format=",.1f"),
        alt.Tooltip("dice:Q", title="dice rolled", format=","),
    ]
    bars = (
        base.transform_fold(FACES, as_=["column", "count"])  # type: ignore[arg-type]  # list[str] is fine at run time
        .transform_calculate(
            face="toNumber(substring(datum.column, 5))",
            share="datum.dice > 0 ? datum.count / datum.dice : null",
            expected="datum.dice / 6",
        )
        .mark_bar()
        .encode(
            x=alt.X(
                "face:O",
                title="Face (pips)",
                sort=[1, 2, 3, 4, 5, 6],
                scale=alt.Scale(domain=[1, 2, 3, 4, 5, 6]),
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("share:Q", title="Share of dice showing the face (%)", axis=alt.Axis(format="%")),
            tooltip=tooltip,
        )
    )
    fair = alt.Chart().mark_rule(color="#d62728", strokeDash=[6, 3]).encode(y=alt.datum(1 / 6))
    test = (
        base.mark_text(align="right", baseline="top", x="width", y=4, fontSize=12)
        .encode(text="label:N")
        .transform_calculate(
            label="datum.dice > 0 ? 'chi² = ' + format(datum.chi2, '.1f') + ' (5 df), p = ' + datum.p_text"
            " + ' over ' + format(datum.dice, ',') + ' dice' : 'no dice rolled'"
        )
    )
    return (
        alt.layer(bars, fair, test, data=alt.Data(values=rows))  # type: ignore[return-value]  # .properties() is typed for any chart
        .add_params(who)
        .properties(
            width=WIDTH,
            height=HEIGHT,
            title=_title("Dice faces", "Share of all dice rolled showing each face; dashed line: a fair die (1/6)"),
        )
    )


# --------------------------------------------------------------------------- dispute view
LEDGERS = ["claimed", "by the dice"]
#: Turns the dispute chart draws: a longer game (a log can hold 100,000 turns) is drawn thinned.
DISPUTE_MAX_TURNS = 5_000


def thinned_turns(turns: pa.Table, limit: int = DISPUTE_MAX_TURNS) -> pa.Table:
    """The turns of one game to draw, in the order played: all of them up to `limit`; past
    it every k-th turn and each player's last, then as many turns with findings as there is
    room for (spread over the game). The totals drawn are exact; fewer turns carry them."""
    import numpy as np

    turns = turns.take(pc.sort_indices(turns, sort_keys=[("position", "ascending")]))
    n = turns.num_rows
    if n <= limit:
        return turns
    step = -(-n // (limit // 2))
    keep = np.arange(n) % step == 0
    players = turns.column("player").to_pylist()
    last = {player: i for i, player in enumerate(players)}
    keep[list(last.values())] = True
    flagged = np.flatnonzero(np.array([bool(c) for c in turns.column("codes").to_pylist()]) & ~keep)
    room = max(limit - int(keep.sum()), 0)
    if len(flagged) > room:
        flagged = flagged[np.linspace(0, len(flagged) - 1, room).astype(np.int64)] if room else flagged[:0]
    keep[flagged] = True
    return turns.filter(pa.array(keep))


def dispute_totals(turns: pa.Table) -> alt.LayerChart:
    """One game's running totals per player, turn by turn (report table game_turns of one
    game): by the dice as a wide pale step line, claimed as a thin dashed one drawn on top,
    so a claim that agrees with the dice still shows; red-ringed diamonds in a player's colour
    mark the findings about that player (finding_marks).

    The legend draws both kinds of line; the axes leave room around the first and last turn
    and above the highest total, so no marker is cut at the edge."""
    played = turns.num_rows
    turns = thinned_turns(turns)
    # a turn whose ending line was lost says so ("bank (implied: the bank line is missing)")
    outcome = "outcome_label" if "outcome_label" in turns.column_names else "outcome"
    rows = _rows(
        turns,
        [
            "position",
            "player",
            "turn",
            outcome,
            "claimed_points",
            "corrected_points",
            "claimed_total",
            "corrected_total",
            "codes",
        ],
    )
    for row in rows:
        row["outcome"] = row.pop(outcome)
    last = max((r["position"] for r in rows), default=1)
    # each player's final totals carry on to the right edge, so the final claim and what the
    # dice allow show side by side as lines, not as one point at the player's last turn
    final = {}
    for row in sorted(rows, key=lambda r: r["position"]):
        final[row["player"]] = row
    rows += [{**row, "position": last + 1, "codes": "", "outcome": "final total"} for row in final.values()]
    top = max([v for r in rows for v in (r["claimed_total"], r["corrected_total"]) if v is not None] or [1])
    x = alt.X(
        "position:Q",
        title="Turn of the game (in the order played)",
        scale=alt.Scale(domainMin=0, domainMax=last + 1, nice=False),
        axis=alt.Axis(format="d", tickMinStep=1),
    )
    low = min([0, *(v for r in rows for v in (r["claimed_total"], r["corrected_total"]) if v is not None)])
    y_scale = alt.Scale(domainMin=low, domainMax=round(top * 1.08), nice=True)
    y_title = "Banked total after the turn (points)"
    tooltip = [
        alt.Tooltip("position:Q", title="turn of the game"),
        alt.Tooltip("player:N", title="player"),
        alt.Tooltip("turn:Q", title="player's turn"),
        alt.Tooltip("outcome:N", title="outcome"),
        alt.Tooltip("claimed_points:Q", title="points claimed", format=","),
        alt.Tooltip("corrected_points:Q", title="points by the dice", format=","),
        alt.Tooltip("claimed_total:Q", title="total claimed", format=","),
        alt.Tooltip("corrected_total:Q", title="total by the dice", format=","),
        alt.Tooltip("codes:N", title="findings"),
    ]
    color = alt.Color("player:N", title="Player", legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=3))
    ledger_legend = alt.Legend(
        title="Total", symbolType="stroke", symbolStrokeColor="#444", symbolStrokeWidth=2, symbolSize=400
    )
    dash = alt.StrokeDash(
        "ledger:O", sort=LEDGERS, scale=alt.Scale(domain=LEDGERS, range=[[6, 3], [1, 0]]), legend=ledger_legend
    )
    width = alt.StrokeWidth(
        "ledger:O", sort=LEDGERS, scale=alt.Scale(domain=LEDGERS, range=[1.6, 5]), legend=ledger_legend
    )

    def ledger(column: str, name: str, opacity: float) -> alt.Chart:
        return (
            alt.Chart()
            .transform_calculate(ledger=f"'{name}'", total=f"datum.{column}")
            .mark_line(interpolate="step-after", opacity=opacity)
            .encode(
                x=x,
                y=alt.Y("total:Q", title=y_title, scale=y_scale),
                color=color,
                strokeDash=dash,
                strokeWidth=width,
                tooltip=tooltip,
            )
        )

    found = finding_marks(turns, rows)
    marks = (
        alt.Chart(alt.Data(values=found))
        .mark_point(shape="diamond", size=170, filled=True, stroke=FINDING_RED, strokeWidth=2.5, opacity=1, clip=False)
        .encode(
            x=x,
            y=alt.Y("total:Q", title=y_title, scale=y_scale),
            color=color,  # the player's own colour (the lines' legend), ringed in red
            shape=alt.Shape(
                "mark:N",
                title=None,
                scale=alt.Scale(domain=[FINDING_MARK], range=["diamond"]),
                legend=alt.Legend(symbolFillColor="#ffffff", symbolStrokeColor=FINDING_RED, symbolStrokeWidth=2.5),
            ),
            tooltip=[
                alt.Tooltip("player:N", title="finding about"),
                alt.Tooltip("codes:N", title="findings"),
                alt.Tooltip("where:N", title="at"),
                alt.Tooltip("in_turn:N", title="in the turn of"),
                alt.Tooltip("total:Q", title="their total claimed then", format=","),
            ],
        )
    )
    layers = [ledger("corrected_total", "by the dice", 0.45), ledger("claimed_total", "claimed", 1.0)]
    if found:
        layers.append(marks)  # its own rows: one per turn and player a finding names
    return alt.layer(*layers, data=alt.Data(values=rows)).properties(  # type: ignore[return-value]  # .properties() is typed for any chart
        width=WIDTH + 140,
        height=HEIGHT,
        title=_title(
            "Totals turn by turn",
            "By the dice (wide, pale) and as claimed (dashed, on top); diamonds: findings, on the line of the "
            "player each names, in that player's colour"
            + (
                f" (of {played:,} turns, {turns.num_rows:,} drawn: spread evenly, each player's last, "
                "and those with findings as room allows)"
                if turns.num_rows < played
                else ""
            ),
        ),
    )


def dispute_race(chances: pa.Table, findings: pa.Table, mistake_pp: float) -> alt.LayerChart:
    """One two-player game's winning chances after every judged choice (report table
    game_race of one game), like a chess site's evaluation graph: one line per player (they
    add up to 1); choices that lost more than `mistake_pp` percentage points are dots on the
    line of the player who made them, findings are red rules at their seq."""
    rows = _rows(
        chances,
        ["seq", "kind", "player", "seat", "first_seat_chance", "chance_best", "chance_made", "loss_pp", "made", "best"],
    )
    seats: dict[int, str] = {}
    for r in rows:
        seats[r["seat"]] = r["player"]
    first, second = seats.get(1, "seat 1"), seats.get(2, "seat 2")
    points = []
    for r in rows:
        for name, chance in ((first, r["first_seat_chance"]), (second, 1.0 - r["first_seat_chance"])):
            costly = r["player"] == name and (r["loss_pp"] or 0.0) > mistake_pp
            points.append(
                {
                    "seq": r["seq"],
                    "player": name,
                    "chance": chance,
                    "costly": costly,
                    "choice": f"{r['player']}: {r['kind']} {r['made']} (best {r['best']})",
                    "loss_pp": r["loss_pp"],
                }
            )
    marks = [{"seq": f["seq"], "code": f.get("code")} for f in _rows(findings, ["seq", "code"]) if f["seq"] is not None]
    x = alt.X("seq:Q", title="Event of the game (seq)", axis=alt.Axis(format="d", tickMinStep=1))
    y = alt.Y(
        "chance:Q", title="Winning chance after the choice", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")
    )
    tooltip = [
        alt.Tooltip("seq:Q", title="seq"),
        alt.Tooltip("player:N", title="player"),
        alt.Tooltip("chance:Q", title="winning chance", format=".1%"),
        alt.Tooltip("choice:N", title="choice"),
        alt.Tooltip("loss_pp:Q", title="lost (pp)", format=".2f"),
    ]
    color = alt.Color("player:N", title="Player")
    line = (
        alt.Chart(alt.Data(values=points))
        .mark_line(interpolate="step-after")
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    layers = [line]
    costly = [p for p in points if p["costly"]]
    if costly:  # a layer of no data makes Vega warn of an infinite extent
        layers.append(
            alt.Chart(alt.Data(values=costly))
            .mark_point(filled=True, size=70)
            .encode(x=x, y=y, color=color, tooltip=tooltip)
        )
    if marks:
        layers.append(
            alt.Chart(alt.Data(values=marks))
            .mark_rule(color="#c0392b", strokeDash=[4, 3])
            .encode(x=alt.X("seq:Q"), tooltip=[alt.Tooltip("code:N", title="finding"), alt.Tooltip("seq:Q")])
        )
    return alt.layer(*layers).properties(  # type: ignore[return-value]
        width=WIDTH + 140,
        height=HEIGHT,
        title=_title(
            "Winning chance through the game (two players, best play by both from each moment)",
            f"Dots: choices that lost more than {mistake_pp:g} percentage points; red dashed rules: findings",
        ),
    )


def race_loss(table: pa.Table, players: list[str]) -> alt.LayerChart:
    """Each player's winning chance lost per two-player game (report table race_loss): the
    middle half of their games as a bar (25th to 75th percentile), the 10th to 90th as a
    line, the median as a tick."""
    rows = [
        r
        for r in _rows(table, ["player", "games", "mean_pp", "p10", "p25", "p50", "p75", "p90"])
        if r["player"] in players
    ]
    y = alt.Y("player:N", title=None, sort=alt.EncodingSortField("p50", order="ascending"))
    tooltip = [
        alt.Tooltip("player:N"),
        alt.Tooltip("games:Q", format=","),
        alt.Tooltip("mean_pp:Q", title="mean (pp)", format=".2f"),
        alt.Tooltip("p10:Q", title="10th pct", format=".2f"),
        alt.Tooltip("p25:Q", title="25th pct", format=".2f"),
        alt.Tooltip("p50:Q", title="median", format=".2f"),
        alt.Tooltip("p75:Q", title="75th pct", format=".2f"),
        alt.Tooltip("p90:Q", title="90th pct", format=".2f"),
    ]
    base = alt.Chart()
    whisker = base.mark_rule(color="#888").encode(
        x=alt.X("p10:Q", title="Winning chance lost in a game (percentage points)"), x2="p90:Q", y=y, tooltip=tooltip
    )
    box = base.mark_bar(size=12, color="#1f77b4", opacity=0.7).encode(x="p25:Q", x2="p75:Q", y=y, tooltip=tooltip)
    median = base.mark_tick(color="#111", thickness=2, size=14).encode(x="p50:Q", y=y, tooltip=tooltip)
    return alt.layer(whisker, box, median, data=alt.Data(values=rows)).properties(  # type: ignore[return-value]
        width=WIDTH,
        height=max(60, 22 * len(rows)),
        title=_title(
            "Winning chance lost per game (two-player games)",
            "Bar: the middle half of a player's games; line: 10th to 90th percentile; tick: median",
        ),
    )


FINDING_RED = "#c0392b"
FINDING_MARK = "finding"


def finding_marks(turns: pa.Table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One diamond per turn and player named by its findings, at that player's claimed total
    then (their latest turn up to this one), so it sits on their line, not on whoever's turn
    it was. A finding that names no player of the game marks the turn's player."""
    has_list = "finding_list" in turns.column_names
    columns = ["position", "player", "turn", "claimed_total", "codes"] + (["finding_list"] if has_list else [])
    played = sorted(_rows(turns, columns), key=lambda r: r["position"])
    seats = {r["player"] for r in played}
    totals: dict[str, int | None] = {}
    marks = []
    for turn in played:
        totals[turn["player"]] = turn["claimed_total"]
        findings = turn.get("finding_list") or []
        if not findings and turn["codes"]:  # a table without the list: the turn's own player
            findings = [{"player": turn["player"], "code": code, "seq": None} for code in turn["codes"].split(", ")]
        named: dict[str, list[dict[str, Any]]] = {}
        for f in findings:
            who = f.get("player") if f.get("player") in seats else turn["player"]
            named.setdefault(who, []).append(f)
        for who, theirs in named.items():
            seqs = [f"seq {f['seq']}" for f in theirs if f.get("seq") is not None]
            marks.append(
                {
                    "position": turn["position"],
                    "player": who,
                    "total": totals.get(who) or 0,
                    "codes": ", ".join(dict.fromkeys(f["code"] for f in theirs)),
                    "where": ", ".join(dict.fromkeys(seqs)),
                    "in_turn": f"{turn['player']}, turn {turn['turn']}",
                    "mark": FINDING_MARK,
                }
            )
    return marks


# --------------------------------------------------------------------------- snapshots
def spec_skeleton(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The data-independent part of a chart's spec: data values, axis tick values, scale
    bounds that follow the data (domainMin/domainMax) and the picker's player list replaced by
    placeholders (what tests/snapshots pins)."""
    spec = copy.deepcopy(chart.to_dict())

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key == "values" and isinstance(value, list):
                    out[key] = "<data>"
                elif key in ("domainMin", "domainMax"):  # bounds that follow the data
                    out[key] = "<data>"
                elif key == "datasets":
                    out[key] = "<data>"
                elif key in ("options", "labels") and isinstance(value, list):
                    out[key] = value[:1] + (["<players>"] if len(value) > 1 else [])
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(spec)

"""The league charts: each player's rating over time and the head-to-head matrix.

Pure functions from the league tables (pipeline.report.league) to Altair charts, as in
pipeline.report.charts: SQL computed every figure, a builder only reshapes rows (a time as
text, a cell's label) and says how to draw them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import altair as alt
import pyarrow as pa

from pipeline.report.charts import MAX_ROWS, WIDTH, TooManyRows

DAY_FORMAT = "%Y-%m-%d"
GAME_FORMAT = "%Y-%m-%d %H:%M"
LEGEND_LIMIT = 200  # names a legend lists before it drops the rest (Vega-Lite's default is 30)


def _rows(table: pa.Table, columns: list[str]) -> list[dict[str, Any]]:
    """The table's rows as dicts, refused past charts.MAX_ROWS as every chart's are."""
    if table.num_rows > MAX_ROWS:
        raise TooManyRows(f"{table.num_rows} rows for one chart (limit {MAX_ROWS}): aggregate in SQL first")
    return table.select(columns).to_pylist()


def _title(text: str, subtitle: str) -> alt.Title:
    return alt.Title(text, subtitle=subtitle, anchor="start")


RATING_DIGITS = 3  # decimals of mu, sigma and the ordinal in the chart's data (the tooltips show 2)
STEP_WORDS = {"game": "game started", "day": "day", "week": "week from"}


def _utc_text(moment: dt.datetime, unit: str) -> tuple[str, str]:
    """(the instant as ISO text Vega reads as UTC, the same for a tooltip)."""
    moment = moment.astimezone(dt.timezone.utc)
    iso = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return iso, moment.strftime(GAME_FORMAT if unit == "game" else DAY_FORMAT) + " UTC"


def rating_points(steps: pa.Table) -> tuple[str, list[dict[str, Any]]]:
    """(the step: game, day or week; the chart's rows): the dated rows of
    rpt_report_rating_steps, `moment` as ISO text, the ratings to RATING_DIGITS decimals."""
    rows = _rows(steps, ["player", "moment", "unit", "games", "rated_games", "mu", "sigma", "ordinal"])
    unit = next((r["unit"] for r in rows if r["unit"] is not None), "game")
    out = []
    for row in rows:
        if row.pop("unit") is None:
            continue  # rated games without a time: said under the chart
        row["moment"], row["when"] = _utc_text(row["moment"], unit)
        for name in ("mu", "sigma", "ordinal"):
            row[name] = round(row[name], RATING_DIGITS)
        out.append(row)
    return unit, out


def rating_history(steps: pa.Table, players: list[str]) -> alt.LayerChart:
    """Each player's ordinal (mu - 3 sigma, what the standings sort by) after every rated
    game, or after the last game of each day or week, on a date axis; `players` orders the
    legend (best rated first). Clicking a name in the legend brings that player's line forward."""
    unit, rows = rating_points(steps)
    pick = alt.selection_point(fields=["player"], bind="legend", name="rating_player")
    x = alt.X("moment:T", title="Date (UTC)", scale=alt.Scale(type="utc"), axis=alt.Axis(labelAngle=-40))
    y = alt.Y("ordinal:Q", title="Rating (ordinal: μ − 3σ)", scale=alt.Scale(zero=False))
    color = alt.Color(
        "player:N",
        title="Player (click to pick)",
        sort=players,
        scale=alt.Scale(domain=players, scheme="tableau20"),
        legend=alt.Legend(orient="right", symbolLimit=LEGEND_LIMIT),
    )
    tooltip = [
        alt.Tooltip("player:N", title="player"),
        alt.Tooltip("when:N", title=STEP_WORDS[unit]),
        alt.Tooltip("rated_games:Q", title="rated games so far", format=","),
        alt.Tooltip(
            "games:Q", title="rated games " + ("at this time" if unit == "game" else f"that {unit}"), format=","
        ),
        alt.Tooltip("ordinal:Q", title="ordinal (μ − 3σ)", format=".2f"),
        alt.Tooltip("mu:Q", title="μ", format=".2f"),
        alt.Tooltip("sigma:Q", title="σ", format=".2f"),
    ]
    opacity = alt.condition(pick, alt.value(1.0), alt.value(0.15))
    lines = (
        alt.Chart(name="rating_lines")  # a fixed view name: the legend pick is bound to it
        .mark_line(strokeWidth=1.5)
        .encode(x=x, y=y, color=color, opacity=opacity)
        .add_params(pick)
    )
    points = (
        alt.Chart().mark_point(filled=True, size=18).encode(x=x, y=y, color=color, opacity=opacity, tooltip=tooltip)
    )
    step = "after every rated game" if unit == "game" else f"after the last game of each {unit}"
    return alt.layer(lines, points, data=alt.Data(values=rows)).properties(  # type: ignore[return-value]  # .properties() is typed for any chart
        width=WIDTH,
        height=300,
        title=_title("Rating over time", f"openskill Plackett-Luce ordinal {step}"),
    )


def head_to_head(cells: pa.Table, rows: list[str], columns: list[str], min_decided: int) -> alt.LayerChart:
    """Who finishes above whom (rpt_head_to_head): a cell per pair that met, coloured by the
    row player's share of the games one of the two finished above the other; cells with fewer
    than `min_decided` such games stay grey, their counts still written in them."""
    data = _rows(
        cells,
        [
            "player",
            "opponent",
            "games",
            "above",
            "below",
            "tied",
            "share",
            "share_lo",
            "share_hi",
            "before_games",
            "before_share",
            "after_games",
            "after_share",
        ],
    )
    for row in data:
        row["decided"] = row["above"] + row["below"]
        row["label"] = f"{row['above']}–{row['below']}"
    x = alt.X(
        "opponent:N",
        title="Opponent",
        sort=columns,
        scale=alt.Scale(domain=columns),
        axis=alt.Axis(labelAngle=-40, orient="top"),
    )
    y = alt.Y("player:N", title="Player", sort=rows, scale=alt.Scale(domain=rows))
    tooltip = [
        alt.Tooltip("player:N", title="player"),
        alt.Tooltip("opponent:N", title="opponent"),
        alt.Tooltip("games:Q", title="games together", format=","),
        alt.Tooltip("above:Q", title="player finished above", format=","),
        alt.Tooltip("below:Q", title="player finished below", format=","),
        alt.Tooltip("tied:Q", title="tied", format=","),
        alt.Tooltip("share:Q", title="share above (ties left out)", format=".1%"),
        alt.Tooltip("share_lo:Q", title="95 % interval from", format=".1%"),
        alt.Tooltip("share_hi:Q", title="95 % interval to", format=".1%"),
        alt.Tooltip("before_games:Q", title="games player sat first", format=","),
        alt.Tooltip("before_share:Q", title="share above, sitting first", format=".1%"),
        alt.Tooltip("after_games:Q", title="games opponent sat first", format=","),
        alt.Tooltip("after_share:Q", title="share above, sitting after", format=".1%"),
    ]
    enough = alt.datum.decided >= min_decided
    fill = alt.condition(
        enough,
        alt.Color(
            "share:Q",
            title="Share finished above (%)",
            scale=alt.Scale(domain=[0, 1], scheme="redblue", domainMid=0.5),
            legend=alt.Legend(format="%"),
        ),
        alt.value("#e6e6e6"),
    )
    cells_chart = alt.Chart().mark_rect(stroke="white").encode(x=x, y=y, color=fill, tooltip=tooltip)
    strong = (alt.datum.share > 0.8) | (alt.datum.share < 0.2)
    labels = (
        alt.Chart()
        .mark_text(fontSize=10)
        .encode(
            x=x,
            y=y,
            text=alt.Text("label:N"),
            color=alt.condition(enough & strong, alt.value("white"), alt.value("black")),
            tooltip=tooltip,
        )
    )
    side = max(len(rows), len(columns), 1)
    step = 34 if side <= 12 else 26
    return alt.layer(cells_chart, labels, data=alt.Data(values=data)).properties(  # type: ignore[return-value]  # .properties() is typed for any chart
        width=alt.Step(step),
        height=alt.Step(step),
        title=_title(
            "Head to head",
            "Games the row player finished above – below the opponent, on corrected final totals",
        ),
    )

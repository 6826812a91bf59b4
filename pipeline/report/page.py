"""The HTML page: one self-contained file, every section, every chart, one embedded bundle.

Layout: a header (title, what the figures cover), a table of contents, then the sections of
SECTIONS in order (the dispute view first when the report is about one game). Each chart is
a <figure data-chart=ID> holding an empty <div> and a caption saying how to read it; its
Vega-Lite spec sits in <script type="application/json" id="spec-ID">. One script at the end
hands every spec to vegaEmbed (SVG renderer) and marks each figure data-rendered="ok" or
"error" (the error text goes into the figure), then sets <body data-charts="done">.

Offline by construction: the Vega/Vega-Lite/Vega-Embed bundle is inlined once, the page loads
no URL, and a Content-Security-Policy forbids it to (no connect, no remote image, font, style
or script); a violation would be written into #csp-violations. Everything from the logs
(player names, game ids, messages) is HTML-escaped, and JSON in script tags has <, > and &
escaped, so a hostile name cannot end a script.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from dataclasses import dataclass
from typing import Any, Callable

import altair as alt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.report import charts
from pipeline.report.data import LEADERBOARD_ROWS, ReportData, game_rows
from pipeline.strategy.judge import DEFAULT_BLUNDER_THRESHOLD
from pipeline.report.sheet import SheetView
from pipeline.report.verdict import verdict
from pipeline.stats.significance import ALPHA, format_p

CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
EMBED_OPTIONS = {
    "renderer": "svg",
    "actions": {"export": True, "source": False, "compiled": False, "editor": False},
}

# Section id -> heading, in page order ("dispute" only with --game).
SECTIONS: dict[str, str] = {
    "overview": "Overview",
    "dispute": "Dispute view",
    # the league (pipeline.report.league_page.LEAGUE_SECTIONS)
    "standings": "Standings",
    "rating": "Rating over time",
    "head_to_head": "Head to head",
    "bust": "Bust rate by dice left",
    "turns": "Turn value",
    "decisions": "Bank or roll",
    "quality": "Decision quality",
    "players": "Players",
    "findings": "Audit findings",
    "dice": "Dice fairness",
    "each_player": "Player by player",
}

# Chart id -> the sentence under it saying how to read it.
HOW_TO_READ: dict[str, str] = {
    "bust": (
        "Each dot is the share of rolls with that many dice that scored nothing, the blue bar its 95 % "
        "interval, the red tick the exact odds of the rules played. Hover for the exact test: a row is "
        "flagged when its p-value, corrected for testing every player and dice count at once (Holm), is "
        "below 0.05; a tick just outside a short bar of few rolls is no evidence on its own."
    ),
    "turns": (
        "The bars spread the finished turns over their points; the red bar is the turns lost to a "
        "farkle, which count as 0. Pick a player to see their turns instead of everyone's."
    ),
    "decisions": (
        "Each cell is one situation after a keep: how many dice were left to roll and how many points "
        "the turn held. Dark cells are where players mostly banked, pale ones where they rolled on; "
        f"grey cells saw fewer than {charts.MIN_CELL_CHOICES} choices and show their count instead, as "
        "a share of one or two choices says nothing. Hover for the counts."
    ),
    "quality_state": (
        "Each cell is one situation: on the left the keeps taken from rolls of that many dice, on the right "
        "the bank-or-roll choices with that many dice left to roll, by the turn's points before the choice. "
        "Darker cells give up more expected points per choice; the darkest colour means that much or more "
        "(the scale ends at the 95th percentile of the cells, so one extreme cell cannot pale the rest), and "
        f"grey cells hold fewer than {charts.MIN_CELL_CHOICES} choices. Hover for how many choices a cell holds."
    ),
    "quality_players": (
        "Each bar is a player's mean loss: the expected points, by the single-turn model, that their keeps "
        "and bank-or-roll choices gave up against the best play. Shorter is better; the colour is the share "
        "of choices that were exactly optimal."
    ),
    "race_loss": (
        "Each row is a player's two-player games: how many percentage points of winning chance their choices "
        "gave up in a game, against best play by both (the winning-chance yardstick). The bar holds the middle "
        "half of their games, the line runs from the 10th to the 90th percentile, the tick is the median."
    ),
    "dispute_race": (
        "Each line is a player's chance of winning the game after every judged choice (win plus half a tie, best "
        "play by both from that moment on, two players): the lines add up to 100 %. A dot marks a choice that gave "
        "up more than the mistake threshold; red dashed rules mark findings."
    ),
    "findings_by_code": (
        "Each bar counts the audit's findings of one kind: red are errors (the log breaks the rules "
        "or miscounts), orange are warnings (such as a log that stops before the game ends)."
    ),
    "findings_over_time": (
        "Bars stack the findings of each period, placed by the time of the line they are about (or the "
        "start of their game when that line has no time); the axis spans every game covered, so a tall "
        "bar points at a period worth a closer look. A colour is a code, or, when there are more codes "
        f"than {len(charts.CODE_COLORS)} distinct colours, a kind of finding (hover for its codes)."
    ),
    "dice": (
        "Bars show how often each face came up; with fair dice every bar sits near the dashed 1/6 line. "
        "The p-value is the chance that fair dice show an imbalance at least this large (exact up to 100 "
        "dice); the table below corrects it for testing every player at once."
    ),
    "dispute": (
        "Each step is a player's banked total after a turn: the wide pale line as the dice allow, the thin "
        "dashed line on top as claimed in the log. Where the two lines part, a claim was wrong. A red-ringed "
        "diamond marks a finding, on the line and in the colour of the player it names; hover for the codes."
    ),
}


@dataclass
class Figure:
    id: str
    chart: alt.TopLevelMixin
    caption: str


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON safe inside a <script> element (no '</script>', no '<!--')."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fmt_int(value: Any) -> str:
    return "–" if value is None else f"{int(value):,}"


def fmt_pct(value: Any, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * float(value):.{digits}f} %"


def fmt_num(value: Any, digits: int = 0) -> str:
    return "–" if value is None else f"{float(value):,.{digits}f}"


def fmt_p(value: Any) -> str:
    """A p-value the one way every output prints it (significance.format_p)."""
    return format_p(None if value is None else float(value), missing="–")


def plural(n: Any, word: str, words: str | None = None) -> str:
    """'1 error', '3 errors' (n formatted with thousands separators)."""
    return f"{fmt_int(n)} {word if n == 1 else (words or word + 's')}"


def fmt_ts(value: dt.datetime | None) -> str:
    return "–" if value is None else value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def dice_text(dice: list[int] | None) -> str:
    return " ".join(str(d) for d in dice) if dice else "–"


# --------------------------------------------------------------------------- sections
def describe_filters(data: ReportData) -> str:
    f = data.filters
    parts = []
    if f.game:
        parts.append(f"game {f.game}")
    if f.players:
        parts.append(f"{'player' if len(f.players) == 1 else 'players'} {', '.join(f.players)}")
    if f.rules is not None:
        parts.append(f"rules {f.rules.name}")
    if f.since:
        parts.append(f"games started on or after {f.since.isoformat()}")
    if f.until:
        parts.append(f"games started on or before {f.until.isoformat()}")
    return "; ".join(parts) if parts else "all games"


def overview(data: ReportData) -> str:
    o = data.report["overview"].to_pylist()[0]
    period = "no timestamps" if o["games"] else "no games"
    if o["first_ts"] is not None:
        seconds = (o["last_ts"] - o["first_ts"]).total_seconds()
        # a single moment (one game, or games logged with one timestamp) is said as such,
        # not as "X to X (0.0 hours)"
        if seconds < 60:
            period = f"{fmt_ts(o['first_ts'])} (every event within a minute)"
        else:
            days = seconds / 86400
            span = (
                f"{days:,.1f} days"
                if days >= 1
                else f"{days * 24:,.1f} hours"
                if seconds >= 3600
                else f"{seconds / 60:,.0f} minutes"
            )
            period = f"{fmt_ts(o['first_ts'])} to {fmt_ts(o['last_ts'])} ({span})"
        if o["games_without_time"]:
            period += f"; {fmt_int(o['games_without_time'])} games without timestamps"
    tiles = [
        (
            "Games",
            fmt_int(o["games"]),
            f"{fmt_int(o['complete_games'])} complete"
            + (f", {fmt_int(o['abandoned_games'])} of them abandoned" if o.get("abandoned_games") else ""),
        ),
        ("Players", fmt_int(o["players"]), ""),
        ("Turns", fmt_int(o["turns"]), f"{fmt_int(o['rolls'])} rolls"),
        ("Events", fmt_int(o["events"]), "valid log lines of these games"),
        ("Findings", fmt_int(o["findings"]), findings_sub(o)),
    ]
    cells = "".join(
        f'<div class="tile" data-figure="{esc(name.lower())}"><div class="label">{esc(name)}</div>'
        f'<div class="value">{value}</div><div class="sub">{esc(sub)}</div></div>'
        for name, value, sub in tiles
    )
    notes = [f"<b>Period covered:</b> {esc(period)}."]
    if o["rulesets"]:
        notes.append(f"<b>Rules:</b> {esc(', '.join(o['rulesets']))}.")
    notes.append(f"<b>Covers:</b> {esc(describe_filters(data))}.")
    outside = o["findings_outside_games"]
    if outside:
        notes.append(
            f"{plural(outside, 'finding belongs', 'findings belong')} to no stored game (unreadable lines, "
            f"events of unknown games): {'it is' if outside == 1 else 'they are'} counted in the findings, "
            f"not in any game, so the games' findings add up to {fmt_int(o['findings'] - outside)}."
        )
    if o["games"] == 0:
        notes.append(f'<span class="empty">{esc(no_games_text(data))}</span>')
    return f'<div class="tiles">{cells}</div><p class="notes">{" ".join(notes)}</p>'


def findings_sub(o: dict) -> str:
    """The findings tile's small print: errors and warnings, and how many are in no game, so
    that the tile agrees with the per-game counts below it."""
    parts = [plural(o["error_findings"], "error")]
    if o["other_findings"]:
        parts.append(plural(o["other_findings"], "warning"))
    text = ", ".join(parts)
    if o["findings_outside_games"]:
        text += f"; {fmt_int(o['findings_outside_games'])} in no game"
    return text


def no_games_text(data: ReportData) -> str:
    if describe_filters(data) == "all games":
        return "No games: this dataset holds no game yet, so there is nothing to chart."
    return "No games match these filters, so there is nothing to chart."


def figure_html(fig: Figure) -> str:
    return (
        f'<figure class="chart" id="chart-{fig.id}" data-chart="{fig.id}">'
        f'<div class="vega"></div>'
        f'<figcaption class="how">{esc(fig.caption)}</figcaption>'
        f'<script type="application/json" id="spec-{fig.id}">{script_json(fig.chart.to_dict())}</script>'
        f"</figure>"
    )


def picker_note(data: ReportData) -> str:
    if data.players_total > len(data.players):
        return (
            f'<p class="note">The player picker lists the {len(data.players)} players with the most turns '
            f"(of {data.players_total:,}); `--player NAME` reports on anyone.</p>"
        )
    return ""


LEADERBOARD_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("games", "games", fmt_int),
    ("wins", "wins", fmt_int),
    ("win_rate", "win rate", fmt_pct),
    ("turns", "turns", fmt_int),
    ("mean_turn_value", "mean turn (points)", fmt_num),
    ("bust_rate", "bust rate (per roll)", fmt_pct),
    ("hot_dice_per_100_turns", "hot dice / 100 turns", lambda v: fmt_num(v, 1)),
    ("banks_below_300", "banks < 300", fmt_int),
    ("findings", "findings", fmt_int),
    ("claimed_points", "points claimed", fmt_int),
    ("corrected_points", "points by the dice", fmt_int),
    ("overclaimed_points", "overclaimed", fmt_int),
]


def leaderboard(data: ReportData) -> str:
    summary = data.stats["player_summary"]
    players = summary.filter(pc.equal(summary["scope"], "player")).sort_by(
        [("wins", "descending"), ("win_rate", "descending"), ("games", "descending"), ("player", "ascending")]
    )
    overall = summary.filter(pc.equal(summary["scope"], "overall")).to_pylist()
    shown = players.slice(0, LEADERBOARD_ROWS).to_pylist()
    head = "".join(f'<th data-sort="num">{esc(title)}</th>' for _, title, _ in LEADERBOARD_COLUMNS)

    def row(r: dict, name: str, cls: str = "") -> str:
        cells = "".join(
            f'<td data-value="{esc(r[col] if r[col] is not None else "")}">{fmt(r[col])}</td>'
            for col, _, fmt in LEADERBOARD_COLUMNS
        )
        return f'<tr class="{cls}"><th scope="row" data-value="{esc(name)}">{esc(name)}</th>{cells}</tr>'

    body = "".join(row(r, r["player"]) for r in shown)
    foot = "".join(row(r, "all players", "total") for r in overall)
    more = ""
    if players.num_rows > len(shown):
        more = f'<p class="note">Showing the {len(shown)} players with the most wins of {players.num_rows:,}.</p>'
    if overall and (overall[0]["wins"] or 0) > (overall[0]["games"] or 0):
        more += (
            f'<p class="note ties">Wins add up to {fmt_int(overall[0]["wins"])} over '
            f'{plural(overall[0]["games"], "game")}: a tied game counts as a win for each tied player.</p>'
        )
    return (
        '<div class="scroll"><table class="sortable leaderboard">'
        f'<thead><tr><th data-sort="text">player</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody><tfoot>{foot}</tfoot></table></div>{more}"
        '<p class="how">One row per player, most wins first; click a heading to sort. Wins and win rate count '
        "complete games won on the corrected scores; bust rate is farkles per roll; overclaimed is the points "
        "claimed beyond what the dice were worth, summed over the player's final totals.</p>"
    )


BLUNDER_ROWS = 15  # worst blunders listed on the page


def quality_note(data: ReportData) -> str:
    """The single-turn caveat, and what was judged."""
    rows = data.stats["decision_quality"]
    overall = rows.filter(pc.equal(rows["scope"], "overall")).to_pylist()
    counts = ""
    if overall:
        o = overall[0]
        counts = (
            f" {fmt_int(o['judged'])} choices judged (keeps and bank-or-roll), mean loss "
            f"{fmt_num(o['mean_loss'], 1)} points, {fmt_pct(o['optimal_share'])} optimal; "
            f"{fmt_int(o['not_judged'])} not judged (their state was not valid: findings in the turn)."
        )
    return (
        '<p class="notes"><b>A single-turn model.</b> Choices are judged against the exact play that maximises '
        "the points banked in one turn: farkle penalties and the race to the target are "
        f"outside it, so a player near the target or facing a penalty can be right to play otherwise."
        f"{esc(counts)}</p>"
    )


def race_note(data: ReportData) -> str:
    """The winning-chance yardstick of two-player games, and what it judged."""
    rows = data.stats.get("race_quality")
    if rows is None or rows.num_rows == 0:
        return ""
    overall = rows.filter(pc.equal(rows["scope"], "overall")).to_pylist()
    o = overall[0] if overall else None
    counts = (
        f" {fmt_int(o['judged'])} choices of two-player games judged, {fmt_num(o['loss_per_choice'], 3)} "
        f"percentage points lost per choice, {fmt_num(o['loss_per_game'], 2)} per player and game; accuracy "
        f"{fmt_num(o['accuracy'], 1)}; mistakes (> {fmt_num(o['mistake_pp'], 1)} pp) {fmt_int(o['mistakes'])}, "
        f"blunders (> {fmt_num(o['blunder_pp'], 1)} pp) {fmt_int(o['blunders'])}."
        if o
        else ""
    )
    return (
        "<h3>Two-player games: the winning chance each choice cost</h3>"
        '<p class="notes"><b>The game, not the turn.</b> In two-player games each choice is also judged by the '
        "chance of winning the game it gave up (win plus half a tie, under best play by both, final round "
        "included; games of three or more players keep the single-turn yardstick above)."
        f"{esc(counts)}</p>"
    )


COSTLIEST_ROWS = 15


def costliest_table(data: ReportData) -> str:
    table = data.stats.get("race_costliest")
    if table is None or data.stats["race_quality"].num_rows == 0:
        return ""
    worst = table.slice(0, COSTLIEST_ROWS).to_pylist()
    if not worst:
        return '<p class="how">No choice of a two-player game lost more than the mistake threshold.</p>'
    rows = "".join(
        f'<tr><th scope="row">{esc(r["player"])}</th><td>{esc(r["game_id"])}</td><td>{fmt_int(r["seq"])}</td>'
        f'<td>{esc(r["scores"])}</td><td>{fmt_int(r["points"])}</td>'
        f'<td>{esc("keep from " + r["roll"] if r["kind"] == "keep" else "bank or roll")}</td>'
        f'<td>{esc(r["made"])}</td><td>{esc(r["best"])}</td><td>{fmt_pct(r["chance_best"])}</td>'
        f'<td>{fmt_num(r["loss_pp"], 2)}</td></tr>'
        for r in worst
    )
    return (
        "<h3>Costliest choices of two-player games</h3>"
        '<div class="scroll"><table class="compact costliest"><thead><tr><th>player</th><th>game</th><th>seq</th>'
        "<th>totals</th><th>turn points</th><th>choice</th><th>made</th><th>best</th><th>chance before</th>"
        f"<th>lost (pp)</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def blunders_table(data: ReportData) -> str:
    table = data.stats["blunders"]
    worst = table.slice(0, BLUNDER_ROWS).to_pylist()
    if not worst:
        return '<p class="how">No blunders: no choice gave up more than the threshold.</p>'
    threshold = data.stats["decision_quality"].column("blunder_threshold")[0].as_py()
    rows = "".join(
        f'<tr><th scope="row">{esc(r["player"])}</th><td>{esc(r["game_id"])}</td><td>{fmt_int(r["seq"])}</td>'
        f'<td>{esc("keep from " + r["roll"] if r["kind"] == "keep" else "bank or roll")}</td>'
        f'<td>{fmt_int(r["points"])}</td><td>{fmt_int(r["dice"])}</td><td>{esc(r["made"])}</td>'
        f'<td>{esc(r["best"])}</td><td>{fmt_num(r["loss"], 1)}</td></tr>'
        for r in worst
    )
    return (
        "<h3>Worst blunders</h3>"
        '<div class="scroll"><table class="compact blunders"><thead><tr><th>player</th><th>game</th><th>seq</th>'
        "<th>choice</th><th>turn points</th><th>dice</th><th>made</th><th>best</th><th>loss (points)</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
        f'<p class="how">The {len(worst)} choices that gave up the most expected points (of {table.num_rows:,} '
        f"above {fmt_num(threshold)} points), worst first. A keep is judged with the turn points before its roll, "
        "a bank-or-roll with the points after the keep. `farkle-logs audit LOGS --game ID --coach` annotates every "
        "choice of a game.</p>"
    )


def fairness_table(data: ReportData) -> str:
    table = data.stats["dice_fairness"]
    players = table.filter(pc.and_(pc.equal(table["scope"], "player"), pc.is_valid(table["p_value"])))
    lowest = players.sort_by([("p_value", "ascending"), ("player", "ascending")]).slice(0, 10).to_pylist()
    if not lowest:
        return ""
    rows = "".join(
        f'<tr class="{"flag" if r.get("off") else ""}"><th scope="row">{esc(r["player"])}</th>'
        f'<td>{fmt_int(r["dice"])}</td><td>{fmt_num(r["chi2"], 1)}</td><td>{fmt_p(r["p_value"])}</td>'
        f'<td>{fmt_p(r.get("p_adjusted"))}</td></tr>'
        for r in lowest
    )
    return (
        "<h3>Least uniform dice, by player</h3>"
        '<table class="compact"><thead><tr><th>player</th><th>dice rolled</th><th>chi² (5 df)</th>'
        f"<th>p-value</th><th>corrected for {plural(players.num_rows, 'player')}</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f'<p class="how">The {len(lowest)} players whose faces stray furthest from uniform, smallest p-value '
        "first. The p-value is exact up to 100 dice; the corrected one (Holm's) allows for testing every player "
        f"at once, and a row is highlighted when it is below {ALPHA:g}: among many fair players a few small "
        "p-values happen by chance, a highlighted row does not.</p>"
    )


def game_anchor(data: ReportData, game_id: str) -> str:
    if game_id == data.dispute_game:
        return "dispute"
    return f"game-{data.detailed_games.index(game_id) + 1}"


def _winner_by_dice(row: dict) -> str:
    """The winner by the dice, or why there is none: an abandoned game has no winner."""
    if row.get("how_ended") == "abandoned":
        return "– (abandoned)"
    return esc(", ".join(row["winner_corrected"] or []) or "–")


def _how_ended(meta: dict) -> str:
    """How the game's log ends, as the game's facts say it."""
    if meta.get("how_ended") == "abandoned":
        return "abandoned (stopped before its end: no winner by the dice)"
    return "complete" if meta.get("complete") else "log ends before game_end"


def disputed_games(data: ReportData) -> str:
    rows = data.report["disputed_games"].to_pylist()
    if not rows:
        return '<h3>Most disputed games</h3><p class="note">No game has findings.</p>'
    body = "".join(
        "<tr>"
        f'<th scope="row"><a href="#{game_anchor(data, r["game_id"])}">{esc(r["game_id"])}</a></th>'
        f"<td>{esc(r['started'] or '–')}</td><td>{fmt_int(r['errors'])}</td><td>{fmt_int(r['findings'])}</td>"
        f"<td class=\"text\">{esc(', '.join(r['codes'] or []))}</td>"
        f"<td class=\"text\">{esc(', '.join(r['winner_claimed'] or []) or '–')}</td>"
        f'<td class="text{" flag" if r["winner_changed"] else ""}">{_winner_by_dice(r)}</td>'
        f"<td>{fmt_int(r['overclaimed_points'])}</td>"
        "</tr>"
        for r in rows
    )
    return (
        "<h3>Most disputed games</h3>"
        '<div class="scroll"><table class="compact"><thead><tr><th>game</th><th>started (UTC)</th><th>errors</th>'
        "<th>findings</th><th class=\"text\">codes</th><th class=\"text\">winner claimed</th>"
        "<th class=\"text\">winner by the dice</th><th>overclaimed</th>"
        f"</tr></thead><tbody>{body}</tbody></table></div>"
        f'<p class="how">The {len(rows)} games with the most errors (a changed winner first); follow a game id to '
        "the turns where things went wrong. A highlighted winner is not the one the log claimed.</p>"
    )


def _roll_html(roll: dict) -> str:
    dice = dice_text(roll["dice"])
    if not roll["scored"] and roll["kept"] is None:
        return f'<div class="roll bust">{esc(dice)} <i>scores nothing</i></div>'
    if roll["kept"] is None:
        return f'<div class="roll">{esc(dice)}</div>'
    claimed, worth = roll["kept_claimed"], roll["kept_value"]
    value = esc(fmt_int(claimed))
    cls = "roll"
    if claimed != worth:  # the claim is struck through, what the dice were worth is not
        value = (
            f'claimed <span class="wrong">{esc(fmt_int(claimed))}</span>, '
            f'<span class="worth">worth {esc(fmt_int(worth))}</span>'
        )
        cls += " off"
    return f'<div class="{cls}">{esc(dice)} → kept <b>{esc(dice_text(roll["kept"]))}</b>: {value}</div>'


def _points(claimed: Any, corrected: Any) -> str:
    if claimed == corrected:
        return fmt_int(claimed)
    return f'<span class="wrong">{fmt_int(claimed)}</span> → {fmt_int(corrected)}'


def _finding_html(f: dict) -> str:
    return f'<div class="finding {esc(f["severity"])}"><code>{esc(f["code"])}</code> {esc(f["message"])}</div>'


def _span(first: Any, last: Any) -> str:
    if first is None:
        return "–"
    return f"{first}" if first == last else f"{first}–{last}"


def _lines(t: dict) -> str:
    """The log lines of a turn's events; with the file names when the game's lines are in
    several files (a game split across files)."""
    if t.get("first_line") is None:
        return "–"
    if (t.get("line_files") or 1) > 1:
        return f"{esc(t['first_file'])}:{t['first_line']}–{esc(t['last_file'])}:{t['last_line']}"
    return _span(t["first_line"], t["last_line"])


def _sheet_cell(sheet: SheetView, t: dict) -> str:
    """The sheet's row for the turn: its points and total, each struck through where the
    dice say otherwise, with the sheet's line; or that the sheet has no row for it."""
    row = sheet.for_turn(t["player"], t["turn"])
    if row is None:
        if t["outcome"] == "open":
            return '<td class="sheet">–</td>'
        return '<td class="sheet flag">no row on the sheet</td>'
    wrong = bool(sheet.findings_at(line=row.line))
    points = esc(fmt_int(row.points))
    total = esc(fmt_int(row.total))
    if row.points != t["corrected_points"]:
        points = f'<span class="wrong">{points}</span>'
    if row.total != t["corrected_total"]:
        total = f'<span class="wrong">{total}</span>'
    return f'<td class="sheet{" flag" if wrong else ""}">{points} / {total} <small>line {row.line}</small></td>'


def turns_table(turns: list[dict], caption: str, sheet: SheetView | None = None) -> str:
    body = []
    for t in turns:
        severity = "error" if t["errors"] else ("warning" if t["finding_list"] else "")
        rolls = "".join(_roll_html(r) for r in t["roll_list"]) or "–"
        findings = "".join(_finding_html(f) for f in t["finding_list"])
        if sheet is not None:
            row = sheet.for_turn(t["player"], t["turn"])
            mine = sheet.findings_at(line=row.line) if row is not None else []
            if row is None and t["end_seq"] is not None:
                mine = sheet.findings_at(seq=t["end_seq"], code="sheet_missing_turn")
            findings += "".join(_finding_html(f.to_dict()) for f in mine)
        body.append(
            f'<tr class="{severity}" id="{esc(t["game_id"])}-seq-{t["start_seq"]}">'
            f'<td>{t["position"]}</td><td class="seq">{_span(t["start_seq"], t["end_seq"])}</td>'
            f'<td class="seq">{_lines(t)}</td>'
            f'<th scope="row">{esc(t["player"])} <small>turn {t["turn"]}</small></th>'
            f"<td>{rolls}</td><td>{esc(t.get('outcome_label') or t['outcome'])}</td>"
            f'<td>{_points(t["claimed_points"], t["corrected_points"])}</td>'
            f'<td>{_points(t["claimed_total"], t["corrected_total"])}</td>'
            + (_sheet_cell(sheet, t) if sheet is not None else "")
            + f"<td>{findings}</td></tr>"
        )
    sheet_head = "<th>scoresheet: points / total</th>" if sheet is not None else ""
    return (
        '<div class="scroll"><table class="timeline"><thead><tr><th>#</th><th>seq</th><th>line</th><th>player</th>'
        "<th>rolls (dice → kept: points)</th><th>outcome</th><th>points: claimed → by the dice</th>"
        f"<th>total: claimed → by the dice</th>{sheet_head}<th>findings</th></tr></thead>"
        f'<tbody>{"".join(body)}</tbody></table></div><p class="how">{esc(caption)}</p>'
    )


def result_table(seats: list[dict]) -> str:
    rows = "".join(
        f'<tr><th scope="row">{esc(s["player"])}</th><td>{_points(s["claimed_total"], s["corrected_total"])}</td>'
        f'<td>{"yes" if s["won_claimed"] else ""}</td>'
        f'<td class="{"flag" if s["won_claimed"] != s["won_corrected"] else ""}">{"yes" if s["won_corrected"] else ""}</td></tr>'
        for s in seats
        if s["player"] is not None
    )
    return (
        '<table class="compact"><thead><tr><th>player</th><th>final total: claimed → by the dice</th>'
        f"<th>won as claimed</th><th>won by the dice</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def dispute_verdict(data: ReportData) -> str:
    game_id = data.dispute_game or ""
    return game_verdict(
        game_rows(data, "game_players", game_id),
        game_rows(data, "game_turns", game_id),
        game_rows(data, "game_findings", game_id),
    )


def game_verdict(seats: list[dict], turns: list[dict], loose: list[dict]) -> str:
    findings = [f for t in turns for f in t["finding_list"]] + loose
    meta = seats[0] if seats else {}
    return f'<p class="verdict"><b>{esc(verdict(seats, findings, bool(meta.get("complete"))))}</b></p>'


SHEET_EXTRA_ROWS = 10  # sheet rows matching no turn listed one by one; the rest are counted


def sheet_notes(sheet: SheetView) -> str:
    """The sheet's verdict, its hint, and what matched no turn (extra rows, unreadable ones)."""
    parts = [f'<p class="notes sheet-verdict">{esc(sheet.summary())}</p>']
    parts += [f'<p class="notes hint">Hint: {esc(hint)}</p>' for hint in sheet.hints]
    extra = [f for f in sheet.findings if f.code == "sheet_extra_turn"]
    if extra:
        shown = "".join(_finding_html(f.to_dict()) for f in extra[:SHEET_EXTRA_ROWS])
        more = len(extra) - SHEET_EXTRA_ROWS
        if more > 0:
            shown += f'<p class="note">and {plural(more, "more row")} like these.</p>'
        parts.append("<h4>Scoresheet rows that match no turn</h4>" + shown)
    if sheet.problems:
        parts.append(
            "<h4>Scoresheet rows that could not be read</h4>"
            + "".join(f'<div class="finding error">line {p.line}: {esc(p.reason)}</div>' for p in sheet.problems)
        )
    return "".join(parts)


def game_detail(data: ReportData, game_id: str, full: bool, with_verdict: bool = True) -> str:
    """A game's result, findings and turns (`full`: every turn, else those with findings);
    `with_verdict`: starting with its verdict (the dispute view says it above its chart)."""
    seats = game_rows(data, "game_players", game_id)
    turns = game_rows(data, "game_turns", game_id)
    loose = game_rows(data, "game_findings", game_id)
    meta = seats[0] if seats else {}
    facts = (
        f"Rules {esc(meta.get('ruleset_name') or '–')}; {fmt_int(meta.get('events'))} events; "
        f"{esc(meta.get('started') or '–')} to {esc(meta.get('ended') or '–')} UTC; "
        f"{_how_ended(meta)}."
    )
    sheet = data.sheet if full and data.sheet is not None and data.sheet.game_id == game_id else None
    parts = [game_verdict(seats, turns, loose)] if with_verdict else []
    parts += [f'<p class="notes">{facts}</p>', result_table(seats)]
    if sheet is not None:
        parts.append(sheet_notes(sheet))
    if loose:
        parts.append("<h4>Findings about the whole game</h4>" + "".join(_finding_html(f) for f in loose))
    if full:
        parts.append(
            "<h4>Turn by turn</h4>"
            + turns_table(
                turns,
                "One row per turn, in the order played: its seq and log lines, every roll's dice, what was kept "
                "and the points claimed for it (with what the dice were worth where they differ), then the turn's "
                "points and the banked total, claimed → by the dice"
                + ("; the scoresheet's row beside it (struck through where the dice say otherwise)" if sheet else "")
                + ". Rows with findings are highlighted.",
                sheet,
            )
        )
    else:
        flagged = [t for t in turns if t["finding_list"]]
        if flagged:
            parts.append(
                "<h4>Turns with findings</h4>"
                + turns_table(
                    flagged,
                    "Only the turns with findings; write the whole timeline with "
                    f"`farkle-logs report {data.dataset} --game {game_id} -o game.html`.",
                )
            )
    return "".join(parts)


def detailed_games_html(data: ReportData) -> str:
    out = []
    for game_id in data.detailed_games:
        if game_id == data.dispute_game:
            continue
        n = data.detailed_games.index(game_id) + 1
        turns = game_rows(data, "game_turns", game_id)
        loose = game_rows(data, "game_findings", game_id)
        count = sum(len(t["finding_list"]) for t in turns) + len(loose)
        out.append(
            f'<details class="game" id="game-{n}"><summary>Game <b>{esc(game_id)}</b>: {plural(count, "finding")}</summary>'
            f"{game_detail(data, game_id, full=False)}</details>"
        )
    return "".join(out)


# --------------------------------------------------------------------------- the page
NOTHING_TO_CHART = {
    "bust": "No rolls: no bust rates to chart.",
    "turns": "No finished turns: no turn values to chart.",
    "decisions": "No bank-or-roll choices to chart.",
    "quality_state": "No judged choices to chart.",
    "findings_by_code": "No findings: the audit found nothing to chart.",
    "findings_over_time": "No findings with a time (a timestamp of their own or of their game) to chart.",
    "dice": "No dice rolled: no faces to chart.",
}


def _has_rows(table: pa.Table, column: str | None = None) -> bool:
    if table.num_rows == 0:
        return False
    return column is None or pc.sum(pc.is_valid(table[column])).as_py() > 0


def figures(data: ReportData) -> dict[str, list[Figure | str]]:
    """The charts of each section; a chart with no data is replaced by a sentence saying so
    (an empty Vega chart only draws empty axes and warns in the browser's console)."""
    stats, report = data.stats, data.report
    if data.report["overview"].to_pylist()[0]["games"] == 0:
        return {}
    if data.dispute_game is not None:
        turns = data.games["game_turns"]
        one = turns.filter(pc.equal(turns["game_id"], data.dispute_game))
        out_dispute: list[Figure | str] = [Figure("dispute", charts.dispute_totals(one), HOW_TO_READ["dispute"])]
        race_rows = data.games.get("game_race")
        if race_rows is not None and race_rows.num_rows:
            from pipeline.stats import RACE_MISTAKE_PP

            findings = data.games["game_findings"]
            mine = findings.filter(pc.equal(findings["game_id"], data.dispute_game))
            chances = race_rows.filter(pc.equal(race_rows["game_id"], data.dispute_game))
            out_dispute.append(
                Figure("dispute_race", charts.dispute_race(chances, mine, RACE_MISTAKE_PP), HOW_TO_READ["dispute_race"])
            )
        return {"dispute": out_dispute}
    periods = report["findings_by_period"]
    unit = periods["unit"][0].as_py() if periods.num_rows else "day"
    # findings that cannot be placed in time (a line of no game, a game without timestamps)
    # are off the time axis: say how many, so the bars need not add up to the findings tile
    undated = pc.sum(pc.if_else(pc.is_null(periods["period"]), periods["findings"], 0)).as_py() or 0
    over_time = HOW_TO_READ["findings_over_time"].replace("each period", f"each {unit}")
    if undated:
        over_time += (
            f" {plural(undated, 'finding')} with no time (a line of no game, or a game without "
            f"timestamps) {'is' if undated == 1 else 'are'} counted by code above but not here."
        )

    def figure(chart_id: str, has_data: bool, build: Callable[[], alt.TopLevelMixin], how: str) -> Figure | str:
        return Figure(chart_id, build(), how) if has_data else NOTHING_TO_CHART[chart_id]

    out: dict[str, list[Figure | str]] = {
        "bust": [
            figure(
                "bust",
                _has_rows(stats["bust_rate_by_dice_left"]),
                lambda: charts.bust_rate(stats["bust_rate_by_dice_left"], data.players),
                HOW_TO_READ["bust"],
            )
        ],
        "turns": [
            figure(
                "turns",
                _has_rows(stats["turn_value_buckets"]),
                lambda: charts.turn_value(stats["turn_value_buckets"], stats["turn_value"], data.players),
                HOW_TO_READ["turns"],
            )
        ],
        "decisions": [
            figure(
                "decisions",
                _has_rows(report["bank_heatmap"]),
                lambda: charts.bank_heatmap(report["bank_heatmap"]),
                HOW_TO_READ["decisions"],
            )
        ],
        "quality": [
            figure(
                "quality_state",
                _has_rows(stats["decision_loss_by_state"]),
                lambda: charts.decision_loss(stats["decision_loss_by_state"]),
                HOW_TO_READ["quality_state"],
            ),
            Figure(
                "quality_players",
                charts.players_by_loss(stats["decision_quality"], data.players),
                HOW_TO_READ["quality_players"],
            ),
        ]
        if "decision_quality" in stats and _has_rows(stats["decision_loss_by_state"])
        else [],
        "race": [
            Figure("race_loss", charts.race_loss(report["race_loss"], data.players), HOW_TO_READ["race_loss"]),
        ]
        if "race_loss" in report and _has_rows(report["race_loss"])
        else [],
        "findings": [
            figure(
                "findings_by_code",
                _has_rows(report["findings_by_code"]),
                lambda: charts.findings_by_code(report["findings_by_code"]),
                HOW_TO_READ["findings_by_code"],
            ),
            figure(
                "findings_over_time",
                _has_rows(periods, "period"),
                lambda: charts.findings_over_time(periods, unit),
                over_time,
            ),
        ],
        "dice": [
            figure(
                "dice",
                _has_rows(stats["dice_fairness"]),
                lambda: charts.dice_faces(stats["dice_fairness"], data.players),
                HOW_TO_READ["dice"],
            )
        ],
    }
    if data.league is not None:
        from pipeline.report import league_page  # it imports this module's helpers

        out.update(league_page.figures(data.league))
    return out


def section_bodies(data: ReportData, figs: dict[str, list[Figure | str]]) -> dict[str, str]:
    def charts_of(section: str) -> str:
        return "".join(
            figure_html(f) if isinstance(f, Figure) else f'<p class="note">{esc(f)}</p>' for f in figs.get(section, [])
        )

    if data.report["overview"].to_pylist()[0]["games"] == 0:
        return {"overview": overview(data)}
    quality_missing = (
        '<p class="notes">This dataset was written before rolls and decisions carried the corrected '
        "turn state choices are judged in: ingest the logs again for this section.</p>"
    )
    if data.dispute_game is not None:
        return {
            "overview": overview(data),
            "dispute": dispute_verdict(data)
            + charts_of("dispute")
            + game_detail(data, data.dispute_game, full=True, with_verdict=False),
            "players": leaderboard(data),
            "quality": (
                quality_note(data) + blunders_table(data) if "decision_quality" in data.stats else quality_missing
            ),
        }
    return {
        "overview": overview(data),
        **league_bodies(data, figs),
        "bust": charts_of("bust") + picker_note(data),
        "turns": charts_of("turns"),
        "decisions": charts_of("decisions"),
        "quality": (
            quality_note(data)
            + charts_of("quality")
            + picker_note(data)
            + blunders_table(data)
            + race_note(data)
            + charts_of("race")
            + costliest_table(data)
            if "decision_quality" in data.stats
            else quality_missing
        ),
        "players": leaderboard(data),
        "findings": charts_of("findings") + disputed_games(data) + detailed_games_html(data),
        "dice": charts_of("dice") + fairness_table(data),
    }


def league_bodies(data: ReportData, figs: dict[str, list[Figure | str]]) -> dict[str, str]:
    """The league sections (pipeline.report.league_page), when the page has a league."""
    if data.league is None:
        return {}
    from pipeline.report import league_page  # it imports this module's helpers

    table = data.stats.get("decision_quality")
    threshold = (
        table.column("blunder_threshold")[0].as_py()
        if table is not None and table.num_rows
        else DEFAULT_BLUNDER_THRESHOLD
    )

    def game_link(game_id: str) -> str | None:
        return game_anchor(data, game_id) if game_id in data.detailed_games else None

    league = data.league
    return {
        "standings": league_page.standings(league),
        "rating": league_page.rating_section(league, figs.get("rating", [])),
        "head_to_head": league_page.head_to_head_section(league, figs.get("head_to_head", [])),
        "each_player": league_page.player_panels(league, threshold, game_link),
    }


def render(data: ReportData, title: str, bundle: str, generated: dt.datetime | None = None) -> str:
    """The whole page as one string."""
    if "</script" in bundle.lower():
        raise ValueError("the JavaScript bundle contains '</script': it cannot be inlined")
    generated = generated or dt.datetime.now(dt.timezone.utc)
    figs = figures(data)
    bodies = section_bodies(data, figs)
    order = [s for s in SECTIONS if s in bodies]
    toc = "".join(f'<li><a href="#{s}">{esc(SECTIONS[s])}</a></li>' for s in order)
    sections = "".join(
        f'<section id="{s}" data-section="{s}"><h2>{esc(SECTIONS[s])}</h2>{bodies[s]}</section>' for s in order
    )
    heading = dispute_heading(data) if data.dispute_game else ""
    return TEMPLATE.format(
        csp=esc(CSP),
        title=esc(title),
        heading=heading,
        dataset=esc(data.dataset),
        covers=esc(describe_filters(data)),
        generated=esc(generated.strftime("%Y-%m-%d %H:%M UTC")),
        toc=toc,
        sections=sections,
        style=STYLE,
        bundle=bundle,
        options=script_json(EMBED_OPTIONS),
        runner=RUNNER,
    )


def dispute_heading(data: ReportData) -> str:
    return f'<p class="lead">Dispute view of game <b>{esc(data.dispute_game)}</b>: this page covers that game only.</p>'


STYLE = """
:root { --ink: #1d2530; --muted: #5f6b7a; --line: #d9dee5; --err: #fdecea; --warn: #fff4e0; --accent: #1f77b4; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1100px; padding: 0 24px 48px; }
header { border-bottom: 1px solid var(--line); padding: 20px 0 8px; }
h1 { margin: 0 0 4px; font-size: 26px; }
h2 { margin-top: 40px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin-top: 28px; }
.meta, .note, .how, figcaption { color: var(--muted); }
.how, figcaption { max-width: 760px; margin: 6px 0 18px; }
nav ol { display: flex; flex-wrap: wrap; gap: 6px 18px; list-style: none; padding: 0; margin: 12px 0 0; }
nav a, a { color: var(--accent); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; }
.tile { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.tile .label { color: var(--muted); font-size: 13px; text-transform: uppercase; letter-spacing: .04em; }
.tile .value { font-size: 26px; font-weight: 600; }
.tile .sub { color: var(--muted); font-size: 13px; }
figure.chart { margin: 18px 0 8px; }
figure.chart[data-rendered="error"] .vega { color: #c0392b; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: right; vertical-align: top; }
th[scope=row], thead th:first-child, td.text, th.text, .timeline td:nth-child(5), .timeline td:last-child,
.timeline th { text-align: left; }
table.compact td, table.leaderboard td { white-space: nowrap; }
table.timeline { width: 100%; }
.timeline td:nth-child(5) { min-width: 260px; }
.timeline td:last-child { min-width: 220px; }
.timeline small { color: var(--muted); white-space: nowrap; }
thead th { background: #f4f6f8; position: sticky; top: 0; }
table.sortable thead th { cursor: pointer; }
tfoot tr.total th, tfoot tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
tr.error { background: var(--err); }
tr.warning { background: var(--warn); }
td.flag, tr.flag { background: var(--err); font-weight: 600; }
.wrong { color: #c0392b; text-decoration: line-through; }
.roll.off { color: #c0392b; }
.roll .worth { color: var(--ink); font-weight: 600; }
.roll.bust { color: var(--muted); }
.finding { margin: 2px 0; }
.finding.error code { color: #c0392b; }
.finding.warning code { color: #b9770e; }
details.game { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 12px; }
details.game summary { cursor: pointer; }
details.game:target { outline: 2px solid var(--accent); }
.lead { font-size: 17px; }
tr.few th, tr.few td { color: var(--muted); }
article.player { border-top: 1px solid var(--line); margin-top: 28px; }
.verdict { font-size: 17px; margin: 10px 0; }
td.seq, td.sheet { white-space: nowrap; }
td.sheet small { color: var(--muted); }
.empty { color: #c0392b; font-weight: 600; }
#csp-violations:empty { display: none; }
#csp-violations { color: #c0392b; }
@media print { nav, .vega-actions { display: none; } }
"""

RUNNER = """
(function () {
  var options = JSON.parse(document.getElementById('embed-options').textContent);
  var figures = Array.prototype.slice.call(document.querySelectorAll('figure[data-chart]'));
  function fail(figure, error) {
    figure.setAttribute('data-rendered', 'error');
    figure.querySelector('.vega').textContent = 'This chart could not be drawn: ' + error;
  }
  if (typeof vegaEmbed !== 'function') {
    figures.forEach(function (f) { fail(f, 'the embedded Vega library did not load'); });
    document.body.setAttribute('data-charts', 'done');
    return;
  }
  Promise.all(figures.map(function (figure) {
    var id = figure.getAttribute('data-chart');
    var spec;
    try { spec = JSON.parse(document.getElementById('spec-' + id).textContent); }
    catch (e) { fail(figure, e); return Promise.resolve(); }
    return vegaEmbed(figure.querySelector('.vega'), spec, options).then(
      function () { figure.setAttribute('data-rendered', 'ok'); },
      function (error) { fail(figure, error); });
  })).then(function () { document.body.setAttribute('data-charts', 'done'); });

  // A link to a game opens its <details> (a closed one would hide the target).
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (target && target.tagName === 'DETAILS') { target.open = true; target.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();

  // Sortable tables: click a heading; numbers sort by their data-value.
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = th.getAttribute('data-sort') === 'num';
        var down = th.getAttribute('aria-sort') !== 'descending';
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute('data-value'), y = b.cells[col].getAttribute('data-value');
          if (numeric) { x = x === '' ? -Infinity : +x; y = y === '' ? -Infinity : +y; }
          var c = x < y ? -1 : x > y ? 1 : 0;
          return down ? -c : c;
        });
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="farkle-logs report">
<title>{title}</title>
<style>{style}</style>
<script>
document.addEventListener('securitypolicyviolation', function (e) {{
  var box = document.getElementById('csp-violations');
  if (box) {{ box.textContent += 'Blocked by the page policy: ' + e.blockedURI + ' (' + e.violatedDirective + ')\\n'; }}
}});
</script>
<script>
{bundle}
</script>
</head>
<body>
<header>
<h1>{title}</h1>
{heading}
<p class="meta">Dataset <code>{dataset}</code>; covers {covers}; written {generated} by <code>farkle-logs report</code>.
Works offline: everything this page needs is inside it.</p>
<noscript><p class="empty">The charts need JavaScript; the tables below work without it.</p></noscript>
<pre id="csp-violations"></pre>
<nav><ol>{toc}</ol></nav>
</header>
<main>
{sections}
</main>
<script type="application/json" id="embed-options">{options}</script>
<script>
{runner}
</script>
</body>
</html>
"""

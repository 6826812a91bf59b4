"""The league sections of the page: standings, rating over time, head to head, and a panel
per player (their rating, trends, opponents, costliest choices and games with findings).

HTML only, from pipeline.report.league's tables; every value from the logs goes through
`esc`, as in pipeline.report.page. Rates are printed beside the counts they come from, and
a rate over few games says so, so a small league does not read like a large one.
"""

from __future__ import annotations

from typing import Any, Callable

import pyarrow.compute as pc

from pipeline.report import league_charts
from pipeline.report.league import (
    MATRIX_PLAYERS,
    MIN_DECIDED,
    MIN_PERIOD_GAMES,
    PLAYER_CHOICES,
    PLAYER_OPPONENTS,
    RATING_POINTS,
    STANDINGS_ROWS,
    LeagueData,
    matrix_cells,
    rows_of,
)
from pipeline.report.page import Figure, esc, figure_html, fmt_int, fmt_num, fmt_pct, fmt_ts, plural

# Section id -> heading, in page order; pipeline.report.page.SECTIONS places them.
LEAGUE_SECTIONS: dict[str, str] = {
    "standings": "Standings",
    "rating": "Rating over time",
    "head_to_head": "Head to head",
    "each_player": "Player by player",
}

HOW_TO_READ = {
    "rating": (
        "Each line is a player's rating after their rated games: the ordinal, μ − 3σ, which the standings sort "
        "by. It starts at 0 and climbs as the player finishes above rated opponents and as the rating grows more "
        "certain (σ shrinks). Hover a point for μ and σ; click a name in the legend to bring that line forward."
    ),
    "head_to_head": (
        "Each cell reads across: how many games the row player finished above the opponent, then below them, on "
        "the corrected final totals of the finished games they both sat in. Blue cells are mostly above, red mostly "
        "below; a grey cell has fewer than {min} games that one of the two finished above the other, too few for a "
        "colour. Hover for ties, the share with its 95 % interval and the split by who sat first."
    ),
}


def player_anchor(data: LeagueData, player: str) -> str | None:
    """The id of a player's panel (by position, so no name from a log becomes an id)."""
    return f"player-{data.shown.index(player) + 1}" if player in data.shown else None


def _player_cell(data: LeagueData, player: str) -> str:
    anchor = player_anchor(data, player)
    name = esc(player)
    return f'<a href="#{anchor}">{name}</a>' if anchor else name


def _signed(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{float(value):+.{digits}f}"


def left_out_note(data: LeagueData, figure: str, what: str) -> str:
    """What a league figure counts and leaves out (rpt_games_left_out)."""
    r = data.left_out.get(figure)
    if not r:
        return ""
    parts = []
    if r["unfinished"]:
        parts.append(f"{plural(r['unfinished'], 'game')} not finished")
    if r["one_player"]:
        parts.append(f"{plural(r['one_player'], 'game')} of one player")
    out = f"; left out: {', '.join(parts)}" if parts else ""
    return f'<p class="note">{esc(what)} count {plural(r["counted"], "finished game")} of {fmt_int(r["games"])}{esc(out)}.</p>'


# --------------------------------------------------------------------------- standings
STANDINGS_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("ordinal", "rating (μ − 3σ)", lambda v: fmt_num(v, 2)),
    ("mu", "μ", lambda v: fmt_num(v, 2)),
    ("sigma", "σ", lambda v: fmt_num(v, 2)),
    ("games", "rated games", fmt_int),
    ("wins", "wins", fmt_int),
    ("win_share", "win share", fmt_pct),
    ("mean_final_total", "mean final total", fmt_num),
    ("change_last_10", "change, last 10 games", _signed),
]


def standings(data: LeagueData) -> str:
    rows = data.ratings.to_pylist()
    note = left_out_note(data, "ratings", "Ratings")
    if not rows:
        return (
            '<p class="note">No player is rated: no finished game with two or more players in these games.</p>' + note
        )
    shown = rows[:STANDINGS_ROWS]
    head = "".join(f'<th data-sort="num">{esc(title)}</th>' for _, title, _ in STANDINGS_COLUMNS)
    body = "".join(
        f'<tr><td data-value="{i}">{i}</td>'
        f'<th scope="row" data-value="{esc(r["player"])}">{_player_cell(data, r["player"])}</th>'
        + "".join(
            f'<td data-value="{esc("" if r[col] is None else r[col])}">{fmt(r[col])}</td>'
            for col, _, fmt in STANDINGS_COLUMNS
        )
        + "</tr>"
        for i, r in enumerate(shown, start=1)
    )
    more = ""
    if len(rows) > len(shown):
        more = f'<p class="note">Showing the {len(shown)} best rated players of {len(rows):,}.</p>'
    if data.league.min_games:
        more += (
            f'<p class="note">Players with fewer than {plural(data.league.min_games, "rated game")} are not listed '
            "(they are rated all the same, and count for their opponents).</p>"
        )
    return (
        '<div class="scroll"><table class="sortable standings">'
        f'<thead><tr><th data-sort="num">#</th><th data-sort="text">player</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>{more}{note}"
        '<p class="how">Ratings by openskill\'s Plackett-Luce model with the library\'s defaults (μ 25, σ 25/3): '
        "each finished game of two or more players is one free-for-all match, players ranked by their corrected "
        "final totals (equal totals share a place), games rated in the order they started. The table sorts by the "
        "ordinal μ − 3σ, a rating the player is very probably above, so a player with few games (a large σ) does "
        "not top it by luck. Wins count the games with the highest corrected total (a tie is a win for each tied "
        "player); the change is the ordinal's over the player's last 10 rated games. Click a heading to sort.</p>"
    )


# --------------------------------------------------------------------------- charts
def figures(data: LeagueData) -> dict[str, list[Figure | str]]:
    """The rating chart and the head-to-head matrix, or a sentence where there is nothing to draw."""
    dated = [s for s in data.rating_steps.to_pylist() if s["moment"] is not None]
    rating: Figure | str = "No rated game with a time: no rating to chart."
    if dated:
        rating = Figure("rating", league_charts.rating_history(data.rating_steps, data.shown), HOW_TO_READ["rating"])
    cells = matrix_cells(data)
    matrix: Figure | str = "No two players met in a finished game: no head to head to chart."
    if cells.num_rows:
        matrix = Figure(
            "head_to_head",
            league_charts.head_to_head(cells, data.matrix_rows, data.matrix_columns, MIN_DECIDED),
            HOW_TO_READ["head_to_head"].format(min=MIN_DECIDED),
        )
    return {"rating": [rating], "head_to_head": [matrix]}


def _charts(figs: list[Figure | str]) -> str:
    return "".join(figure_html(f) if isinstance(f, Figure) else f'<p class="note">{esc(f)}</p>' for f in figs)


def rating_section(data: LeagueData, figs: list[Figure | str]) -> str:
    notes = []
    rated = data.ratings.num_rows
    if not data.filtered and rated > len(data.shown):
        notes.append(
            f"The chart draws the {len(data.shown)} best rated players of {rated:,}; "
            "`--player NAME` (repeatable) draws anyone."
        )
    if data.rating_unit != "game":
        step = "a day (UTC)" if data.rating_unit == "day" else "a week (from Monday, UTC)"
        notes.append(
            f"These players have more than {RATING_POINTS:,} rated games, so each point is a player's rating after "
            f"their last game of {step}, not after every game."
        )
    undated = [s for s in data.rating_steps.to_pylist() if s["moment"] is None]
    if undated:
        count = sum(s["games"] for s in undated)
        notes.append(
            f"{plural(len(undated), 'player has', 'players have')} rated games without a timestamp "
            f"({fmt_int(count)}, counted per player). Such games are rated last, after every dated one, and "
            "cannot be placed on the date axis: the lines end before them; the standings count them."
        )
    return _charts(figs) + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)


def head_to_head_section(data: LeagueData, figs: list[Figure | str]) -> str:
    notes = []
    if data.filtered:
        met = len({r["opponent"] for r in data.head_to_head.to_pylist()})
        if met > len(data.matrix_columns):
            notes.append(f"The matrix shows the {len(data.matrix_columns)} opponents met most often, of {met:,}.")
    elif data.ratings.num_rows > len(data.matrix_rows):
        notes.append(
            f"The matrix shows the {len(data.matrix_rows)} best rated players of {data.ratings.num_rows:,} "
            f"(at most {MATRIX_PLAYERS}); `farkle-logs stats DATASET --section head-to-head` lists every pair."
        )
    return (
        _charts(figs)
        + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
        + left_out_note(data, "head_to_head", "Head to head")
    )


# --------------------------------------------------------------------------- one player
def rating_line(data: LeagueData, player: str) -> str:
    rows = data.ratings.to_pylist()
    mine = [(i, r) for i, r in enumerate(rows, start=1) if r["player"] == player]
    if not mine:
        if data.league.min_games:
            return (
                f"Not in the standings: fewer than {plural(data.league.min_games, 'rated game')}, or no finished "
                "game with two or more players."
            )
        return "Not rated: no finished game with two or more players."
    place, r = mine[0]
    return (
        f"Place {place} of {len(rows):,} in the standings: rating {fmt_num(r['ordinal'], 2)} "
        f"(μ {fmt_num(r['mu'], 2)}, σ {fmt_num(r['sigma'], 2)}), {plural(r['games'], 'rated game')}, "
        f"{plural(r['wins'], 'win')} ({fmt_pct(r['win_share'])}), mean final total {fmt_num(r['mean_final_total'])}, "
        f"change over the last 10 games {_signed(r['change_last_10'])}."
    )


def trends_table(data: LeagueData, player: str) -> str:
    if data.trends is None:
        return (
            '<p class="note">This dataset was written before rolls and decisions carried the corrected turn state '
            "the trends' decision loss needs: ingest the logs again for the trends.</p>"
        )
    rows = rows_of(data.trends, player)
    if not rows:
        return '<p class="note">No games in these filters.</p>'
    by = data.league.by
    body = "".join(
        f'<tr class="{"few" if (r["finished_games"] or 0) < MIN_PERIOD_GAMES else ""}">'
        f"<th scope=\"row\">{esc(r['period'].isoformat() if r['period'] is not None else 'no time')}</th>"
        f"<td>{fmt_int(r['games'])}</td><td>{fmt_int(r['finished_games'])}</td><td>{fmt_int(r['wins'])}</td>"
        f"<td>{fmt_pct(r['win_share'])}</td><td>{fmt_int(r['rolls'])}</td><td>{fmt_pct(r['bust_rate'])}</td>"
        f"<td>{fmt_int(r['turns'])}</td><td>{fmt_num(r['mean_turn_value'])}</td>"
        f"<td>{fmt_int(r['judged_choices'])}</td><td>{fmt_num(r['mean_decision_loss'], 1)}</td></tr>"
        for r in rows
    )
    return (
        f'<div class="scroll"><table class="compact trends"><thead><tr><th>{esc(by)} from</th><th>games</th>'
        "<th>finished</th><th>wins</th><th>win share</th><th>rolls</th><th>bust rate</th><th>turns</th>"
        "<th>mean turn</th><th>choices judged</th><th>mean loss</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def opponents_table(data: LeagueData, player: str) -> str:
    rows = sorted(rows_of(data.head_to_head, player), key=lambda r: (-r["games"], r["opponent"]))
    if not rows:
        return '<p class="note">No finished game against another player.</p>'
    shown = rows[:PLAYER_OPPONENTS]

    def share(r: dict, prefix: str = "") -> str:
        value = r[f"{prefix}share"]
        return "–" if value is None else fmt_pct(value, 0)

    def seated(r: dict, prefix: str) -> str:
        """The share over the games of one seating, with how many there were."""
        games = r[f"{prefix}games"]
        return f"{share(r, prefix)} of {fmt_int(games)}" if games else "–"

    body = "".join(
        f"<tr><th scope=\"row\">{_player_cell(data, r['opponent'])}</th><td>{fmt_int(r['games'])}</td>"
        f"<td>{fmt_int(r['above'])}</td><td>{fmt_int(r['below'])}</td><td>{fmt_int(r['tied'])}</td>"
        f"<td>{share(r)}</td><td>{fmt_pct(r['share_lo'], 0)} – {fmt_pct(r['share_hi'], 0)}</td>"
        f"<td>{seated(r, 'before_')}</td><td>{seated(r, 'after_')}</td></tr>"
        for r in shown
    )
    more = f" The {len(shown)} opponents met most often, of {len(rows):,}." if len(rows) > len(shown) else ""
    return (
        '<div class="scroll"><table class="compact opponents"><thead><tr><th>opponent</th><th>games</th>'
        "<th>above</th><th>below</th><th>tied</th><th>share above</th><th>95 % interval</th>"
        "<th>sitting first</th><th>sitting after</th></tr></thead>"
        f'<tbody>{body}</tbody></table></div><p class="how">Share above leaves ties out; with few games its '
        f"interval is wide, so read the counts.{esc(more)}</p>"
    )


def choices_table(data: LeagueData, player: str, threshold: Any) -> str:
    if data.blunders is None:
        return '<p class="note">Choices are not judged for this dataset (see Decision quality).</p>'
    mine = data.blunders.filter(pc.equal(data.blunders["player"], player))  # worst first, as rpt_blunders
    if not mine.num_rows:
        return (
            f'<p class="note">No choice gave up more than {fmt_num(threshold)} expected points (the blunder '
            "threshold of Decision quality).</p>"
        )
    shown = mine.slice(0, PLAYER_CHOICES).to_pylist()
    body = "".join(
        f"<tr><td>{esc(r['game_id'])}</td><td>{fmt_int(r['seq'])}</td>"
        f"<td>{esc('keep from ' + r['roll'] if r['kind'] == 'keep' else 'bank or roll')}</td>"
        f"<td>{fmt_int(r['points'])}</td><td>{fmt_int(r['dice'])}</td><td>{esc(r['made'])}</td>"
        f"<td>{esc(r['best'])}</td><td>{fmt_num(r['loss'], 1)}</td></tr>"
        for r in shown
    )
    return (
        '<div class="scroll"><table class="compact choices"><thead><tr><th>game</th><th>seq</th><th>choice</th>'
        "<th>turn points</th><th>dice</th><th>made</th><th>best</th><th>loss (points)</th></tr></thead>"
        f'<tbody>{body}</tbody></table></div><p class="how">The {len(shown)} choices that gave up the most expected '
        f"points in one turn, of {mine.num_rows:,} above {fmt_num(threshold)} points (single-turn model, see Decision "
        "quality).</p>"
    )


def games_table(data: LeagueData, player: str, game_link: Callable[[str], str | None]) -> str:
    rows = rows_of(data.player_games, player)
    if not rows:
        return '<p class="note">No game of theirs has a finding.</p>'

    def game_cell(game_id: str) -> str:
        anchor = game_link(game_id)
        return f'<a href="#{anchor}">{esc(game_id)}</a>' if anchor else esc(game_id)

    body = "".join(
        f'<tr class="{"error" if r["errors"] else "warning"}"><th scope="row">{game_cell(r["game_id"])}</th>'
        f"<td>{esc(fmt_ts(r['started']))}</td><td>{fmt_int(r['errors'])}</td><td>{fmt_int(r['findings'])}</td>"
        f"<td>{fmt_int(r['own_findings'])}</td><td class=\"text\">{esc(', '.join(r['codes'] or []))}</td>"
        f"<td>{'yes' if r['won_claimed'] else ''}</td>"
        f'<td class="{"flag" if r["won_claimed"] != r["won_corrected"] else ""}">{"yes" if r["won_corrected"] else ""}</td>'
        "</tr>"
        for r in rows
    )
    total = rows[0]["of_games"]
    return (
        '<div class="scroll"><table class="compact games"><thead><tr><th>game</th><th>started</th><th>errors</th>'
        '<th>findings</th><th>naming them</th><th class="text">codes</th><th>won as claimed</th>'
        f"<th>won by the dice</th></tr></thead><tbody>{body}</tbody></table></div>"
        f'<p class="how">{esc(plural(total, "game"))} of theirs with findings; '
        f"{'all listed' if total == len(rows) else f'the {len(rows)} with the most errors listed'}. "
        "`farkle-logs report DATASET --game ID` shows one whole; `farkle-logs games DATASET --player NAME "
        "--with-findings` lists them all.</p>"
    )


def player_panels(data: LeagueData, threshold: Any, game_link: Callable[[str], str | None]) -> str:
    if not data.shown:
        return '<p class="note">No player is rated, so no player has a panel.</p>'
    panels = []
    for player in data.shown:
        panels.append(
            f'<article class="player" id="{player_anchor(data, player)}"><h3>{esc(player)}</h3>'
            f'<p class="notes">{esc(rating_line(data, player))}</p>'
            f"<h4>Trends by {esc(data.league.by)}</h4>{trends_table(data, player)}"
            f"<h4>Head to head</h4>{opponents_table(data, player)}"
            f"<h4>Costliest choices</h4>{choices_table(data, player, threshold)}"
            f"<h4>Games with findings</h4>{games_table(data, player, game_link)}"
            "</article>"
        )
    intro = (
        f"One panel per player of the standings, best rated first ({len(data.shown)} of {data.ratings.num_rows:,}; "
        "`--player NAME` gives anyone's)."
        if not data.filtered
        else "One panel per player named with --player."
    )
    return (
        f'<p class="how">{esc(intro)} Trends are per {esc(data.league.by)} of game start (UTC): rows in grey have '
        f"fewer than {MIN_PERIOD_GAMES} finished games, too few for their rates to mean much. Mean loss is the "
        "expected points per judged choice given up against the best single-turn play.</p>" + "".join(panels)
    )

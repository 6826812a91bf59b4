"""A real browser draws every chart of the report, offline.

Headless Chromium opens the page from disk with background networking off and every host
unresolvable (so a page that needed the network would fail here), runs its scripts under a
virtual time budget and dumps the DOM. Each chart's <figure> must then say
data-rendered="ok" and hold an <svg>; the page's CSP violation box must be empty.

Skipped, with the reason shown, only where no Chromium is installed (.ci/run installs
Debian's `chromium`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pipeline.report import build_report
from tests.test_report import GENERATED, build_dataset

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)

pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium to render the report in (install Debian's `chromium`; .ci/run does)",
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no name resolves: nothing can be fetched
    "--proxy-server=127.0.0.1:9",
    "--virtual-time-budget=30000",
]


def render_dom(page: Path, profile: Path, console: list[str] | None = None) -> str:
    """The DOM of `page` after its scripts ran, as Chromium serialises it; the page's
    console messages (Vega's warnings among them) are appended to `console` if given."""
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            BROWSER,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<body" in done.stdout, done.stderr[-2000:]
    if console is not None:
        console.extend(line for line in done.stderr.splitlines() if "CONSOLE" in line)
    return done.stdout


def screenshot(page: Path, profile: Path, out: Path, height: int = 4000) -> bytes:
    """A PNG of `page` as Chromium draws it, 1200 pixels wide."""
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            BROWSER,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--hide-scrollbars",
            f"--window-size=1200,{height}",
            f"--screenshot={out}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out.read_bytes()


def png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, unfiltered scanlines) of an 8-bit RGB/RGBA PNG, with the standard
    library only: enough to tell a drawn page from a blank one."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


class Charts(HTMLParser):
    """Each <figure data-chart> with its data-rendered state, its svg count and its text."""

    def __init__(self, dom: str):
        super().__init__(convert_charrefs=True)
        self.figures: dict[str, dict] = {}
        self.body: dict[str, str | None] = {}
        self.csp = ""
        self._figure: str | None = None
        self._depth = 0
        self._in_csp = False
        self._in_script = False
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "pre" and a.get("id") == "csp-violations":
            self._in_csp = True
        if tag == "script":
            self._in_script = True
        if self._figure is not None:
            if tag == "figure":
                self._depth += 1
            if tag in ("svg", "canvas"):
                self.figures[self._figure]["drawn"] += 1
        elif tag == "figure" and a.get("data-chart"):
            self._figure = a["data-chart"]
            self._depth = 1
            self.figures[self._figure] = {"state": a.get("data-rendered"), "drawn": 0, "text": ""}

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_csp = False
        if tag == "script":
            self._in_script = False
        if self._figure is not None and tag == "figure":
            self._depth -= 1
            if self._depth == 0:
                self._figure = None

    def handle_data(self, data):
        if self._in_csp:
            self.csp += data
        if self._figure is not None and not self._in_script:
            self.figures[self._figure]["text"] += data


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    from pipeline.ingest import ingest

    root = tmp_path_factory.mktemp("browser")
    dataset = build_dataset(root)
    (root / "empty.jsonl").write_text("")
    ingest([str(root / "empty.jsonl")], root / "empty")
    out = {}
    for name, ds, kwargs in (("report", dataset, {}), ("game", dataset, {"game": "g2"}), ("empty", root / "empty", {})):
        path = root / f"{name}.html"
        path.write_text(build_report(ds, generated=GENERATED, **kwargs), encoding="utf-8")
        out[name] = path
    return out


@pytest.mark.parametrize(
    "name, charts",
    [
        (
            "report",
            {
                "rating",
                "head_to_head",
                "bust",
                "turns",
                "decisions",
                "quality_state",
                "quality_players",
                "race_loss",
                "findings_by_code",
                "findings_over_time",
                "dice",
            },
        ),
        ("game", {"dispute", "dispute_race"}),  # the dispute page is about its game: no population charts
        ("empty", set()),
    ],
)
def test_every_chart_draws_offline_without_a_warning(pages, tmp_path, name, charts):
    console: list[str] = []
    dom = render_dom(pages[name], tmp_path / "profile", console)
    found = Charts(dom)
    assert found.body.get("data-charts") == "done", "the page's chart script did not finish"
    assert set(found.figures) == charts
    for chart, fig in found.figures.items():
        assert fig["state"] == "ok", f"{chart}: {fig['text'][:300]}"
        assert fig["drawn"] >= 1, f"{chart} holds no svg"
        assert "could not be drawn" not in fig["text"] and "Error" not in fig["text"], chart
    assert found.csp.strip() == ""
    assert not [line for line in console if "WARN" in line or "ERROR" in line], console
    if name == "report":  # the player picker rendered as a real drop-down with every pickable player
        assert re.search(r'<select[^>]*name="bust_player"', dom)
        assert ">ana<" in dom


def _figure(dom: str, chart: str) -> str:
    return re.search(rf'<figure class="chart" id="chart-{chart}".*?</figure>', dom, re.S).group(0)


def _axis_labels(figure: str) -> list[list[str]]:
    """The label texts of each axis of a drawn chart, axis by axis."""
    return [
        re.findall(r">([^<]*)</text>", group)
        for group in re.findall(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', figure, re.S)
    ]


def test_count_axes_have_whole_number_ticks(pages, tmp_path):
    """A count axis over one or two findings used to read 0 1 1 1 2 2: each tick must be a
    whole number, once, in order."""
    dom = render_dom(pages["report"], tmp_path / "profile")
    for chart in ("findings_by_code", "findings_over_time"):
        numeric = [
            labels
            for labels in _axis_labels(_figure(dom, chart))
            if labels and all(re.fullmatch(r"[\d,]+", t) for t in labels)
        ]
        assert numeric, chart
        for labels in numeric:
            values = [int(t.replace(",", "")) for t in labels]
            assert values == sorted(set(values)) and values[0] == 0, (chart, labels)


def test_the_dispute_page_shows_its_game(pages, tmp_path):
    dom = render_dom(pages["game"], tmp_path / "profile")
    sections = re.findall(r'<section id="(\w+)"', dom)
    assert sections == ["overview", "dispute", "quality", "players"]
    chart = _figure(dom, "dispute")
    # the legend draws both kinds of line, each with a visible stroke, dashed only when claimed
    legend = re.findall(r'<g class="mark-symbol role-legend-symbol"[^>]*>(.*?)</g>', chart, re.S)
    samples = [
        re.search(r'stroke="([^"]+)" stroke-width="([\d.]+)"(?: stroke-dasharray="([^"]+)")?', path)
        for group in legend
        for path in re.findall(r"<path[^>]*>", group)
    ]
    lines = {m.group(3): float(m.group(2)) for m in samples if m and m.group(3)}
    assert set(lines) == {"6,3", "1,0"}, samples  # claimed dashed, by the dice solid
    assert lines["1,0"] > lines["6,3"]  # by the dice is the wide line under the claim
    assert all(m.group(1) not in ("transparent", "none") for m in samples if m)
    assert ">claimed</text>" in chart and ">by the dice</text>" in chart
    # the game's turns, its finding and its result are on the page; nothing of other games is
    assert "scoring_error" in dom and 'id="g2-seq-' in dom
    assert "won by the dice" in dom
    assert "g1" not in re.sub(r"<script.*?</script>", "", dom, flags=re.S)


def test_a_report_over_no_games_says_so(pages, tmp_path):
    dom = render_dom(pages["empty"], tmp_path / "profile")
    assert "No games: this dataset holds no game yet, so there is nothing to chart." in dom
    assert "<figure" not in dom


@pytest.mark.parametrize("name", ["report", "game"])
def test_screenshots_are_drawn(pages, tmp_path, name):
    """Chromium draws the page: a screenshot is not blank, and the dispute chart's area holds
    many colours (lines, diamonds, legend). Set FARKLE_SCREENSHOTS=DIR to keep the PNGs and
    look at them."""
    import os
    import shutil

    out = tmp_path / f"{name}.png"
    width, height, rows = png_rows(screenshot(pages[name], tmp_path / "profile", out))
    assert width == 1200
    colours = {row[i : i + 3] for row in rows[::7] for i in range(0, len(row), 3 * 11)}
    assert len(colours) > 40, f"{name}: the screenshot looks blank ({len(colours)} colours)"
    if os.environ.get("FARKLE_SCREENSHOTS"):
        keep = Path(os.environ["FARKLE_SCREENSHOTS"])
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, keep / out.name)


def test_a_broken_chart_or_a_remote_request_is_caught(pages, tmp_path):
    """The checks above can fail: a spec Vega rejects is marked 'error', and a request for a
    remote resource is blocked by the page's policy and reported."""
    text = pages["report"].read_text(encoding="utf-8")
    bad_spec = (
        '{"data":{"values":[{"a":1}]},"mark":"no-such-mark","encoding":{"x":{"field":"a","type":"quantitative"}}}'
    )
    broken = re.sub(
        r'(<script type="application/json" id="spec-dice">).*?(</script>)',
        lambda m: m.group(1) + bad_spec + m.group(2),
        text,
        count=1,
        flags=re.S,
    )
    assert broken != text
    broken = broken.replace("<main>", '<main><img alt="" src="https://example.com/pixel.png">', 1)
    page = tmp_path / "broken.html"
    page.write_text(broken, encoding="utf-8")
    found = Charts(render_dom(page, tmp_path / "profile"))
    assert found.figures["dice"]["state"] == "error"
    assert "could not be drawn" in found.figures["dice"]["text"]
    assert found.figures["bust"]["state"] == "ok"
    assert "example.com" in found.csp

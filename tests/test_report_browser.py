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


def render_dom(page: Path, profile: Path) -> str:
    """The DOM of `page` after its scripts ran, as Chromium serialises it."""
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [BROWSER, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<body" in done.stdout, done.stderr[-2000:]
    return done.stdout


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
    root = tmp_path_factory.mktemp("browser")
    dataset = build_dataset(root)
    out = {}
    for name, kwargs in {"report": {}, "game": {"game": "g2"}}.items():
        path = root / f"{name}.html"
        path.write_text(build_report(dataset, generated=GENERATED, **kwargs), encoding="utf-8")
        out[name] = path
    return out


@pytest.mark.parametrize("name, charts", [
    ("report", {"bust", "turns", "decisions", "quality_state", "quality_players", "findings_by_code",
                "findings_over_time", "dice"}),
    ("game", {"dispute", "bust", "turns", "decisions", "quality_state", "quality_players", "findings_by_code",
              "findings_over_time", "dice"}),
])
def test_every_chart_draws_offline(pages, tmp_path, name, charts):
    dom = render_dom(pages[name], tmp_path / "profile")
    found = Charts(dom)
    assert found.body.get("data-charts") == "done", "the page's chart script did not finish"
    assert set(found.figures) == charts
    for chart, fig in found.figures.items():
        assert fig["state"] == "ok", f"{chart}: {fig['text'][:300]}"
        assert fig["drawn"] >= 1, f"{chart} holds no svg"
        assert "could not be drawn" not in fig["text"] and "Error" not in fig["text"], chart
    assert found.csp.strip() == ""
    # The player picker rendered as a real drop-down with every pickable player.
    assert re.search(r'<select[^>]*name="bust_player"', dom)
    assert ">ana<" in dom


def test_a_broken_chart_or_a_remote_request_is_caught(pages, tmp_path):
    """The checks above can fail: a spec Vega rejects is marked 'error', and a request for a
    remote resource is blocked by the page's policy and reported."""
    text = pages["report"].read_text(encoding="utf-8")
    bad_spec = '{"data":{"values":[{"a":1}]},"mark":"no-such-mark","encoding":{"x":{"field":"a","type":"quantitative"}}}'
    broken = re.sub(r'(<script type="application/json" id="spec-dice">).*?(</script>)',
                    lambda m: m.group(1) + bad_spec + m.group(2), text, count=1, flags=re.S)
    assert broken != text
    broken = broken.replace("<main>", '<main><img alt="" src="https://example.com/pixel.png">', 1)
    page = tmp_path / "broken.html"
    page.write_text(broken, encoding="utf-8")
    found = Charts(render_dom(page, tmp_path / "profile"))
    assert found.figures["dice"]["state"] == "error"
    assert "could not be drawn" in found.figures["dice"]["text"]
    assert found.figures["bust"]["state"] == "ok"
    assert "example.com" in found.csp

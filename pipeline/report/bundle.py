"""The Vega, Vega-Lite and Vega-Embed JavaScript, embedded once per page so it works offline.

`vl_convert.javascript_bundle` (the same bundle Altair's `inline=True` embeds) builds it from
the copies inside vl-convert-python: no network. Building takes several seconds, so the
result is kept in memory and, when possible, in the user's cache directory
($XDG_CACHE_HOME/farkle-logs, else ~/.cache/farkle-logs), keyed by the vl-convert and
Vega-Lite versions. A cache that cannot be read or written is skipped silently.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path

import vl_convert as vlc
from altair.utils._importers import vl_version_for_vl_convert


def vegalite_version() -> str:
    """The Vega-Lite version (e.g. '6.4') matching the specs Altair writes."""
    return vl_version_for_vl_convert()


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "farkle-logs"


def _cache_name(vl_version: str) -> str:
    key = (
        f"{getattr(vlc, '__version__', 'unknown')}|{vl_version}|{vlc.get_vega_version()}|{vlc.get_vega_embed_version()}"
    )
    return f"vega-bundle-{hashlib.sha256(key.encode()).hexdigest()[:16]}.js"


@cache
def javascript_bundle() -> str:
    """Vega + Vega-Lite + Vega-Embed as one script defining window.vega, vegaLite, vegaEmbed."""
    vl_version = vegalite_version()
    path = _cache_dir() / _cache_name(vl_version)
    try:
        text = path.read_text(encoding="utf-8")
        if "window.vegaEmbed=" in text[-1000:]:  # a whole bundle (written atomically anyway)
            return text
    except (OSError, UnicodeDecodeError):
        pass
    text = vlc.javascript_bundle(vl_version=vl_version)  # type: ignore[call-arg]  # the stub requires `snippet`
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
            tmp.write(text)
        os.replace(tmp.name, path)
    except OSError:
        pass
    return text

"""The games table's JSON columns: msgspec writes what json would, whatever the names."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from pipeline.dataset.batches import _dumps_totals

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
names = st.text(st.characters(), max_size=12)  # control characters, quotes, surrogates, emoji
points = st.one_of(st.none(), st.integers(-(2**62), 2**62))


@given(st.dictionaries(names, points, max_size=6))
def test_totals_are_written_as_json_would_write_them(totals):
    assert _dumps_totals(totals) == _json(totals)


def test_a_lone_surrogate_name_falls_back_to_json():
    assert _dumps_totals({"\ud800x": 5, "bo": None}) == '{"\ud800x":5,"bo":null}'

"""schemas/tables/*.json are generated from pipeline/dataset/tables.py and must not drift from it."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.dataset.tables import DATASET_VERSION, TABLES, schema_as_json, write_schema_files

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas" / "tables"


def test_schema_files_match_pipeline_tables(tmp_path):
    write_schema_files(tmp_path)
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.json")}
    stored = {p.name: p.read_text() for p in SCHEMAS.glob("*.json")}
    assert stored == fresh, "run: python -m pipeline.dataset.tables"


def test_every_table_has_a_schema_file_with_its_columns():
    for name, schema in TABLES.items():
        data = json.loads((SCHEMAS / f"{name}.json").read_text())
        assert data["table"] == name and data["dataset_version"] == DATASET_VERSION
        assert data["columns"] == schema_as_json(schema)

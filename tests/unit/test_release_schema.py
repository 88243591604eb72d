"""The release specs: a column a dbt model has is described by that model's yml (one
declaration, docs/release.md "Column descriptions"); the README template ships as package data."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from warehouse.config import REPO_ROOT
from warehouse.errors import WarehouseError
from warehouse.release import schema
from warehouse.release.dbt_docs import column_description
from warehouse.release.export import README_TEMPLATE, readme_text
from warehouse.release.tables import Column, TableSpec

SPECS = [v for v in vars(schema).values() if isinstance(v, TableSpec)]
# keys a column entry of a model yml may carry; any other key means YAML split an unquoted
# flow-style description at a comma (the description is then cut short)
COLUMN_KEYS = {"name", "description", "data_type", "data_tests", "tests", "config", "meta"}


def test_every_released_column_has_a_description() -> None:
    for spec in SPECS:
        for col in spec.columns:
            assert col.description.strip(), (spec.path, col.name)
            assert "{{" not in col.description and "\n" not in col.description


def test_dbt_described_columns_exist_in_their_model() -> None:
    described = [(s.path, c) for s in SPECS for c in s.columns if c.model]
    assert len(described) > 50
    for path, col in described:
        assert column_description(col.model, col.name), (path, col.name)


def test_model_yml_column_entries_are_not_split_by_yaml() -> None:
    for folder in ("models", "python_models"):
        for path in sorted((REPO_ROOT / folder).rglob("*.yml")):
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            for model in doc.get("models") or ():
                for col in model.get("columns") or ():
                    extra = set(col) - COLUMN_KEYS
                    assert not extra, f"{path}: {model['name']}.{col['name']} (quote it): {extra}"


def test_column_description_expands_doc_blocks_and_names_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text('model-paths: ["m"]\n', encoding="utf-8")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "docs.md").write_text(
        "{% docs origin %}\nWhere the row\n  comes from.\n{% enddocs %}\n", encoding="utf-8"
    )
    (tmp_path / "m" / "x.yml").write_text(
        "version: 2\nmodels:\n  - name: t\n    columns:\n"
        "      - {name: a, description: \"{{ doc('origin') }}\"}\n"
        '      - {name: b, description: "One, two."}\n      - {name: c}\n',
        encoding="utf-8",
    )
    assert column_description("t", "a", root=tmp_path) == "Where the row comes from."
    assert column_description("t", "b", root=tmp_path) == "One, two."
    with pytest.raises(WarehouseError, match="no description for column 'c'"):
        column_description("t", "c", root=tmp_path)
    with pytest.raises(WarehouseError, match="no dbt model 'u'"):
        column_description("u", "a", root=tmp_path)


def test_a_column_has_either_a_text_or_a_model() -> None:
    assert Column("x", "int", "Text.").description == "Text."
    with pytest.raises(ValueError):
        Column("x", "int")
    with pytest.raises(ValueError):
        Column("x", "int", "Text.", model="dim_products")


def test_importing_the_specs_reads_no_yml() -> None:
    code = (
        "import warehouse.release.schema, warehouse.release.dbt_docs as d; "
        "print(d._model_columns.cache_info().currsize, d._doc_blocks.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0"]


def test_readme_template_is_package_data_and_renders() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["warehouse"]
    assert any(fnmatch.fnmatch(f"release/{README_TEMPLATE}", p) for p in patterns)
    text = readme_text([(schema.PRODUCTS, 3)], "simulation")
    assert "${" not in text and "data_origin = SIMULATED" in text
    assert f"| `{schema.PRODUCTS.path}` | 3 | {schema.PRODUCTS.description} |" in text

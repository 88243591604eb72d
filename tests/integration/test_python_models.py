"""Every dbt Python model is a thin call of tested functions (``warehouse.<domain>.marts``): run
outside dbt, on the relations its ``dbt.ref``/``dbt.source`` name in the fixture warehouse and with
that build's settings, each model returns its built table, row for row.

dbt's child process is not measured by coverage (``NOT_INHERITED``, warehouse/pipeline/dbt.py):
this test is where the lines the models run are counted, in-process."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from warehouse.config import REPO_ROOT
from warehouse.pipeline.state import state_dir

pytestmark = pytest.mark.integration
MODELS = sorted((REPO_ROOT / "python_models").rglob("*.py"))


class _Config:
    """``dbt.config``: the call a model makes (dbt read it when parsing) and ``.get``, the
    node's configuration as dbt recorded it in the manifest."""

    def __init__(self, node: dict) -> None:
        self._values = node["config"]

    def __call__(self, **kwargs) -> None:
        assert all(self._values.get(k) == v for k, v in kwargs.items()), kwargs

    def get(self, key: str, default=None):
        return self._values.get(key, default)


class _Dbt:
    """The ``dbt`` object dbt-duckdb hands a Python model, on a read-only connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection, manifest: dict, node: dict) -> None:
        self._con, self._manifest = con, manifest
        self.config, self.is_incremental = _Config(node), False

    def _relation(self, node: dict) -> duckdb.DuckDBPyRelation:
        return self._con.sql(f"select * from {node['relation_name']}")

    def ref(self, name: str) -> duckdb.DuckDBPyRelation:
        nodes = self._manifest["nodes"]
        (node,) = (nodes[f"{kind}.tastebench.{name}"] for kind in ("model", "seed")
                   if f"{kind}.tastebench.{name}" in nodes)  # fmt: skip
        return self._relation(node)

    def source(self, source: str, table: str) -> duckdb.DuckDBPyRelation:
        return self._relation(self._manifest["sources"][f"source.tastebench.{source}.{table}"])


@pytest.fixture(scope="module")
def built(fixture_warehouse, monkeypatch_module) -> tuple[duckdb.DuckDBPyConnection, dict]:
    settings = fixture_warehouse[0]
    for key, value in settings.as_env().items():
        monkeypatch_module.setenv(key, value)
    manifest = json.loads((state_dir(settings.db_path) / "manifest.json").read_text())
    con = duckdb.connect(str(settings.db_path), read_only=True)
    yield con, manifest
    con.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_a_python_model_run_outside_dbt_returns_its_built_table(path: Path, built) -> None:
    con, manifest = built
    node = manifest["nodes"][f"model.tastebench.{path.stem}"]
    spec = importlib.util.spec_from_file_location(f"python_model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = module.model(_Dbt(con, manifest, node), con)
    assert isinstance(got, pl.DataFrame), type(got)  # polars where data moves
    table = con.sql(f"select * from {node['relation_name']}").pl()
    assert got.columns == table.columns
    assert_frame_equal(got, table, check_dtypes=False)

"""The dbt unit tests (issue #23): the SQL logic of the benchmark models, pinned on small
hand-computed rows in each model folder's YAML (`unit_tests:`), runs and passes.

dbt unit tests need only the column types of a model's inputs, which dbt reads from the built
relations: they run on a copy of the session's default warehouse, not on its data.
`dbt build` runs them too, before the model each one tests; a failing one skips that model and
fails the build.
"""

from __future__ import annotations

import json
import shutil

import pytest

from warehouse.pipeline.dbt import run_dbt

pytestmark = pytest.mark.integration

# The SQL models with logic, each with at least one unit test: nutrition per 100 g, panel means,
# pairs, blocks, product selection (inclusion, analog rule, subsets), the categories and
# products dimensions, the ratings' renaming and the joins of the predictions.
UNIT_TESTED_MODELS = {
    "stg_nectar__ratings",
    "stg_tastebench__gold_pairs",
    "stg_tastebench__oof_predictions",
    "int_products_selected",
    "dim_blocks",
    "dim_categories",
    "dim_products",
    "fct_nutrition_per_100g",
    "fct_panel_means",
    "fct_within_block_pairs",
    "fct_within_category_pairs",
    "fct_oof_predictions",
}
MIN_UNIT_TESTS = 14


def _unit_results(target) -> list[dict]:
    results = json.loads((target / "run_results.json").read_text())["results"]
    return [r for r in results if r["unique_id"].startswith("unit_test.")]


def test_dbt_unit_tests_pass(default_warehouse, tmp_path) -> None:
    settings, result = default_warehouse
    copy = tmp_path / "unit.duckdb"  # dbt opens its database for writing: never the live file
    shutil.copyfile(result.db_path, copy)
    run_dbt(["test", "--select", "test_type:unit"], settings, copy, tmp_path)
    unit = _unit_results(tmp_path / "dbt" / "target")
    failed = [r["unique_id"] for r in unit if r["status"] != "pass"]
    assert not failed, f"dbt unit tests that did not pass: {failed}"
    assert len(unit) >= MIN_UNIT_TESTS
    tested = {r["unique_id"].split(".")[2] for r in unit}  # unit_test.<project>.<model>.<name>
    assert tested >= UNIT_TESTED_MODELS, f"no unit test: {UNIT_TESTED_MODELS - tested}"


def test_the_build_ran_the_unit_tests(default_warehouse) -> None:
    settings, _ = default_warehouse
    unit = _unit_results(settings.build_dir / "dbt" / "target")
    assert len(unit) >= MIN_UNIT_TESTS
    assert {r["status"] for r in unit} == {"pass"}

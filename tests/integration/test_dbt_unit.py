"""The dbt unit tests (issue #23): the SQL logic of the benchmark models, pinned on small
hand-computed rows in each model folder's YAML (`unit_tests:`), runs and passes.

`dbt build` runs them before the model each one tests (a failing one skips that model and fails
the build): the test reads what the session's default build ran. docs/testing.md shows how to run
them alone on a copy of a warehouse (dbt reads the inputs' column types from it).
"""

from __future__ import annotations

import json

import pytest

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


def test_the_build_ran_every_unit_test_and_all_passed(default_warehouse) -> None:
    """The session's default build ran the unit tests (`dbt build` runs each before its model):
    every one passed, at least MIN_UNIT_TESTS ran, every SQL model with logic has one."""
    settings, _ = default_warehouse
    unit = _unit_results(settings.build_dir / "dbt" / "target")
    failed = [r["unique_id"] for r in unit if r["status"] != "pass"]
    assert not failed, f"dbt unit tests that did not pass: {failed}"
    assert len(unit) >= MIN_UNIT_TESTS
    tested = {r["unique_id"].split(".")[2] for r in unit}  # unit_test.<project>.<model>.<name>
    assert tested >= UNIT_TESTED_MODELS, f"no unit test: {UNIT_TESTED_MODELS - tested}"

"""The results report's main tables (issue #21 §7): a warehouse fit, which has no display name,
is labelled once (Figure 1b labelled each model twice), a published model by its display name
over its file stem, and the interval sits under the point so the table can fit 1,400 px (the
browser check itself is tests/integration/test_browser_pages.py)."""

from __future__ import annotations

import polars as pl

from warehouse.evaluate.results_report import _main_table, _warehouse_section
from warehouse.metrics.core import METRIC_NAMES, TABLE2_METRICS


def _metrics(model_id: str, source: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model_id": model_id,
            "metric": list(METRIC_NAMES),
            "point": 0.6,
            "ci_lo": 0.55,
            "ci_hi": 0.65,
            "is_degenerate": False,
            "is_default_ci": True,
            "ci_method": "ustat_t",
            "is_trivial_policy": False,
            "n_products": 215,
            "source": source,
            "data_origin": "simulation" if source == "warehouse_fit" else "tastebench_public",
        }
    )


def _published() -> pl.DataFrame:
    return pl.DataFrame(
        {"model_file_stem": ["ridge_SNCTI_bench"], "display_name": ["Ridge"]}
        | {m: [0.6] for m in TABLE2_METRICS}
    )


def test_a_warehouse_fit_is_labelled_once() -> None:
    page = _warehouse_section(_metrics("ridge_SNCTI:3131f9d32fce", "warehouse_fit"), _published())
    assert page.count("ridge_SNCTI:3131f9d32fce") == 1
    assert "id='warehouse-table'" in page


def test_a_published_model_shows_its_name_over_its_stem_and_the_interval_below() -> None:
    table = _main_table(_metrics("ridge_SNCTI_bench", "tastebench_public"), _published())
    assert "Ridge<br><span class='small'>ridge_SNCTI_bench</span>" in table
    assert "0.600<br><span class='small'>[0.550, 0.650]</span>" in table

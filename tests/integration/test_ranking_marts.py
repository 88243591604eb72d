"""The warehouse's own food-ranking models on the default (simulated) build: every model and
ensemble of the default stage has out-of-fold rows for all 215 analogs in fct_oof_predictions,
BCa-scored by the metrics marts beside the public files, listed in dim_food_fits, read back by
agg_ablation_metrics, and labelled `simulation` in the HTML report (issue #11 "Must show")."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import built_once
from warehouse.config import environment
from warehouse.evaluate.results_report import write_report
from warehouse.ranking.models import DISTANCE, SUPERVISED
from warehouse.sources.readonly import connect_read_only

pytestmark = pytest.mark.integration

MODELS = {
    # the seven food models (ranking.models), then the ensembles
    *SUPERVISED,
    *DISTANCE,
    "nested_bt_gemini_nnls",
    "nested_bt_gemini_rank",
    "nested_bt_gemini_mean",
    # every other supervised model's rank-average and mean ensembles (their NNLS needs
    # `tastebench train food --grid ensembles`)
    *(f"nested_{m}_gemini_{k}" for m in ("hbt", "ksvm", "lgbm", "ridge") for k in ("rank", "mean")),
}


@pytest.fixture(scope="module")
def db(default_warehouse):
    # the read-only connection the commands use: DuckDB refuses a second connection to one file
    # with another configuration in the same process (the report test opens one)
    con = connect_read_only(default_warehouse[1].db_path)
    yield con
    con.close()


def df(con, sql: str) -> pd.DataFrame:
    return con.execute(sql).df()


def test_every_default_model_has_all_analogs_in_fct_oof_predictions(db) -> None:
    oof = df(db, "select * from marts.fct_oof_predictions where source = 'warehouse_fit'")
    counts = oof.groupby("model_name")["product_code"].count()
    assert set(counts.index) == MODELS and (counts == 215).all()
    assert (oof["data_origin"] == "simulation").all() and oof["fit_id"].notna().all()
    gold = df(db, "select category, product_code, panel_mean from marts.fct_panel_means")
    merged = oof.merge(gold, on=["category", "product_code"], how="left")
    assert (merged["gold_value"] == merged["panel_mean"]).all()
    fits = df(db, "select * from marts.dim_food_fits")
    assert len(fits) == 18 and set(fits["fit_id"]) == set(oof["fit_id"])
    assert fits["config_hash"].str.fullmatch("[0-9a-f]{64}").all()
    assert fits["library_versions_json"].str.contains("scikit-learn").all()


def test_metrics_marts_score_them_with_bca_intervals(db) -> None:
    m = df(
        db,
        "select * from marts.agg_model_metrics where source = 'warehouse_fit' "
        "and metric = 'pairwise_accuracy'",
    )
    assert len(m) == 36 and (m["n_products"] == 215).all()
    # both conventions: the published main-table BCa and the default (issue #14), marked
    bca = m[m["ci_method"] == "published_bca"]
    assert len(bca) == 18 and not bca["is_default_ci"].any()
    assert (bca["ci_lo"] < bca["ci_hi"]).all()
    m = m[m["is_default_ci"]]
    assert len(m) == 18 and set(m["model_id"]) == set(bca["model_id"])
    assert (m["ci_lo"] < m["point"]).all() and (m["point"] < m["ci_hi"]).all()
    assert (m["data_origin"] == "simulation").all()
    # simulated panel means carry no feature signal: BT is not resolved above chance
    bt = m[m["model_id"].str.startswith("bradley_terry_")].iloc[0]
    assert bt["ci_lo"] < 0.5, bt
    comps = df(db, "select * from marts.agg_model_comparisons")
    warehouse_ids = set(df(db, "select model_id from marts.dim_food_fits")["model_id"])
    mixed = comps["model_a"].isin(warehouse_ids) != comps["model_b"].isin(warehouse_ids)
    assert not mixed.any() and len(comps) == 36 + 153  # within each source only


def test_ablation_mart_reads_the_default_stage_from_the_cache(db) -> None:
    ab = df(db, "select * from marts.agg_ablation_metrics")
    assert len(ab) == 7 and ab["is_default_stage"].all()
    assert (ab["n_grid_fits_missing"] == ab["n_grid_fits"] - 7).all()
    assert ab["pairwise_accuracy_lo"].notna().all()


def test_report_lists_them_labelled_simulation(default_warehouse, tmp_path) -> None:
    page = write_report(default_warehouse[1].db_path, tmp_path / "r.html").read_text()
    assert "id='warehouse-table'" in page and "id='main-table'" in page
    table = page.split("id='warehouse-table'")[1]
    assert "bradley_terry_SNCTI:" in table and "nested_bt_gemini_nnls_SNCTI:" in table
    assert "features carry no signal" in page and ">simulation<" in page
    assert "reproduce the public gold order" in page  # why the Gemini ensembles are not


def _train_food(settings, root: Path) -> list[tuple[int, str, str]]:
    """`train food` three ways on the default build: (exit code, output, exception) each."""
    from typer.testing import CliRunner

    from warehouse.cli import app

    runs = []
    with environment(settings.as_env()):
        for args in (["--n-jobs", "1"], ["--check-signal", "N", "--n-jobs", "1"],
                     ["--grid", "everything"]):  # fmt: skip
            run = CliRunner().invoke(app, ["train", "food", *args])
            runs.append((run.exit_code, run.output, str(run.exception)))
    return runs


def test_train_food_cli_reads_the_build_cache_and_checks_a_block(
    default_warehouse, tmp_path_factory
) -> None:
    """Run once and kept between runs while nothing it depends on changed (``built_once``)."""
    make = partial(_train_food, default_warehouse[0])
    (code, out, exc), (code_n, out_n, exc_n), (code_grid, _, exc_grid) = built_once(
        tmp_path_factory, "train_food", make
    )
    assert code == 0, (out, exc)
    assert "18 fits (0 fitted, 18 read)" in out  # the build's own fit ids
    assert code_n == 0, (out_n, exc_n)
    assert "permuted" in out_n and "bradley_terry" in out_n
    assert code_grid != 0 and "--grid ensembles" in exc_grid

"""The default build (simulated NECTAR bundle) yields the benchmark and a calibrated human
baseline (issue #3 "Must show")."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def db(default_warehouse):
    settings, result = default_warehouse
    assert (settings.default_simulation_dir / "simulation_manifest.json").exists()
    con = duckdb.connect(str(result.db_path), read_only=True)
    yield con
    con.close()


def df(con, sql: str) -> pd.DataFrame:
    return con.execute(sql).df()


def test_within_category_pairs_equal_public_gold(db, public_dir: Path) -> None:
    pairs = df(db, "select * from marts.fct_within_category_pairs")
    assert len(pairs) == 935
    assert int(pairs["is_tie"].sum()) == 3
    gold = pd.read_csv(public_dir / "food_similarity" / "data" / "pairs.csv")
    gold["a"] = gold[["product_code_1", "product_code_2"]].min(axis=1)
    gold["b"] = gold[["product_code_1", "product_code_2"]].max(axis=1)
    ours = pairs[~pairs["is_tie"]].rename(columns={"product_code_a": "a", "product_code_b": "b"})
    merged = gold.merge(ours, on=["category", "a", "b"], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all()
    assert (merged["higher_rated_product"] == merged["winner_product_code"]).all()
    ties = pairs[pairs["is_tie"]].sort_values("category")
    assert list(zip(ties.category, ties.product_code_a, ties.product_code_b, strict=True)) == [
        ("Barista_Milk", 4, 8),
        ("Cheddar_Cheese", 1, 3),
        ("Deli_Ham", 2, 3),
    ]


def test_products_and_categories(db) -> None:
    counts = df(db, "select count(*) n, sum(is_analog::int) analogs from marts.dim_products")
    assert counts.iloc[0].tolist() == [247, 215]
    cats = df(db, "select * from marts.dim_categories")
    assert len(cats) == 24 and cats["n_within_category_pairs"].sum() == 935
    assert int(cats.loc[cats.category == "Milk", "n_analogs"].iloc[0]) == 18


def test_blocks_match_public_structure(db, public_dir: Path) -> None:
    public = pd.read_csv(public_dir / "human_baseline" / "results" / "individual_loo_accuracy.csv")
    expected = (
        public.groupby(["category", "block_id"])
        .agg(n_respondents=("n_pairs", "size"), n_analogs=("n_analogs", "first"))
        .reset_index()
    )
    blocks = df(db, "select category, block_id, n_respondents, n_analogs from marts.dim_blocks")
    merged = expected.merge(blocks, on=["category", "block_id"], suffixes=("_pub", ""))
    assert len(blocks) == len(expected) == len(merged) == 49
    assert (merged["n_respondents_pub"] == merged["n_respondents"]).all()
    assert (merged["n_analogs_pub"] == merged["n_analogs"]).all()
    assert len(df(db, "select * from marts.fct_panelist_block_accuracy")) == 4664


def test_calibration_lands_near_published(db) -> None:
    summary = df(
        db, "select metric, warehouse_value, published_value from marts.agg_human_baseline"
    )
    v = dict(zip(summary.metric, summary.warehouse_value, strict=True))
    assert 0.60 <= v["panelist_accuracy_median"] <= 0.70
    assert 0.45 <= v["panelist_accuracy_q25"] <= 0.55
    assert 0.70 <= v["panelist_accuracy_q75"] <= 0.80
    assert 0.05 <= v["alpha_mean"] <= 0.11
    assert 0.79 <= v["split_half_median"] <= 0.86
    curve = df(db, "select k, median_accuracy from marts.agg_group_size_curve order by k")
    acc = dict(zip(curve.k, curve.median_accuracy, strict=True))
    assert acc[5] > acc[3] > acc[1]
    assert v["panel5_accuracy"] == acc[5] and v["panel3_accuracy"] == acc[3]
    assert len(curve) == 75


def test_respondent_ids_never_leave_staging(db) -> None:
    cols = df(
        db,
        "select table_schema, table_name, column_name from information_schema.columns "
        "where table_schema not in ('raw', 'staging')",
    )
    leaked = cols[
        cols.column_name.str.contains("respondent", case=False)
        & ~cols.column_name.isin(["n_respondents"])
    ]
    assert leaked.empty, leaked


def test_every_mart_carries_its_data_origin(db) -> None:
    """Marts built from the NECTAR bundle say 'simulation'; the others name their own source."""
    tables = df(
        db,
        "select table_name from information_schema.tables "
        "where table_schema='marts' and table_type='BASE TABLE'",
    )
    nectar_marts = {
        "dim_categories",
        "dim_products",
        "fct_panel_means",
        "fct_within_category_pairs",
        "fct_within_block_pairs",
        "dim_blocks",
        "fct_nutrition_per_100g",
        "fct_block_products",
        "fct_block_respondents",
        "fct_panelist_block_accuracy",
        "agg_block_reliability",
        "agg_split_half_reliability",
        "agg_group_size_curve",
        "agg_human_baseline",
        # feature blocks: built from the bundle's labels and photos
        "fct_features_subset",
        "fct_features_nutrition",
        "fct_features_compound",
        "fct_features_compound_variants",
        "fct_features_ingredient_matches",
        "fct_features_text",
        "fct_features_image",
        "agg_feature_coverage",
        # the warehouse's own food-ranking fits: panel means of the bundle
        "fct_food_oof_predictions",
        "dim_food_fits",
        "agg_ablation_metrics",
    }
    # public out-of-fold files beside the warehouse's own fits
    mixed_marts = {
        "fct_oof_predictions",
        "agg_model_metrics",
        "agg_model_metrics_per_category",
        "agg_model_comparisons",
    }
    seen = set()
    for t in tables.table_name:
        cols = df(db, f"describe marts.{t}")["column_name"].tolist()
        assert "data_origin" in cols, t
        origins = set(df(db, f"select distinct data_origin from marts.{t}")["data_origin"])
        assert origins and None not in origins, t
        if t in nectar_marts:
            assert origins == {"simulation"}, (t, origins)
            seen.add(t)
        elif t in mixed_marts:
            assert origins == {"tastebench_public", "simulation"}, (t, origins)
        else:
            assert origins <= {"tastebench_public", "fartdb", "derived"}, (t, origins)
    assert seen == nectar_marts

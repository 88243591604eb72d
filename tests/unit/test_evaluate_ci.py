"""Interval conventions of `tastebench evaluate` and the metrics marts' frames (issue #14):
``--ci published_bca`` is the schema-1 output bit for bit, the default names its methods and
holds for strong predictors, and the marts carry both conventions for every source (default marked).

The fixture ``tests/fixtures/evaluate/schema1_published_nnls_ridge_1000.json`` is the output of
``evaluate_files([nested_bt_gemini_nnls.csv, ridge_SNCTI_bench.csv], n_boot=1000)`` at main
104fd0e (schema version 1, before the interval methods), ``source_file`` removed and the
mirror's path written ``{PUBLIC_DIR}``: derived figures of the public files, frozen so the
published convention cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from warehouse.config import REPO_ROOT, load_settings
from warehouse.evaluate.contract import SCHEMA_VERSION, check_result_shape
from warehouse.evaluate.files import evaluate_files
from warehouse.metrics.intervals import DEFAULT_CI_METHODS, INTERVAL_METRICS
from warehouse.metrics.scoring import score_model, score_per_category
from warehouse.metrics.tables import model_metrics_per_category_table, model_metrics_table

OOF = "food_similarity/results/oof_predictions"
FILES = ("nested_bt_gemini_nnls", "ridge_SNCTI_bench")
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "evaluate" / "schema1_published_nnls_ridge_1000.json"
METHOD_FIELDS = {"ci_method", "is_degenerate", "ci_note", "ci", "schema_version", "source_file"}
FAST = 200


def _strip(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in METHOD_FIELDS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def paths(public_dir: Path) -> list[Path]:
    return [public_dir / OOF / f"{name}.csv" for name in FILES]


def test_published_bca_is_schema1_output_bit_for_bit(paths, public_dir: Path) -> None:
    res = evaluate_files(paths, settings=load_settings(), n_boot=1000, ci="published_bca")
    check_result_shape(res)
    assert res["schema_version"] == SCHEMA_VERSION == 3
    assert res["ci"]["convention"] == "published_bca"
    assert res["ci"]["comparisons"] == "pair_bootstrap"
    frozen = json.loads(FIXTURE.read_text())
    assert frozen["schema_version"] == 1
    # JSON text equality: every float identical to the last bit
    # the fixture names the mirror as {PUBLIC_DIR}: the check must not depend on where it sits
    ours = json.dumps(_strip(json.loads(json.dumps(res))), sort_keys=True)
    ours = ours.replace(f"{public_dir.resolve()}/", "{PUBLIC_DIR}/").replace(
        f"{public_dir}/", "{PUBLIC_DIR}/"
    )
    assert ours == json.dumps(_strip(frozen), sort_keys=True)
    for model in res["models"]:
        for metric in INTERVAL_METRICS:
            assert model["metrics"][metric]["ci_method"] == "published_bca"
        assert model["metrics"]["pairwise_accuracy_pooled"]["ci_method"] == "none"


def test_default_names_its_methods(paths) -> None:
    res = evaluate_files(paths, settings=load_settings(), n_boot=FAST)
    check_result_shape(res)
    assert res["ci"]["convention"] == "default"
    assert res["ci"]["methods"] == DEFAULT_CI_METHODS
    for model in res["models"]:
        for metric, method in DEFAULT_CI_METHODS.items():
            iv = model["metrics"][metric]
            assert iv["ci_method"] == method
            assert iv["ci_lo"] <= iv["point"] <= iv["ci_hi"] or iv["is_degenerate"]
        for cat in model["per_category"].values():
            assert cat["pairwise_accuracy"]["ci_method"] == "distinct_percentile"
    (comp,) = res["comparisons"]
    assert comp["ci_method"] == res["ci"]["comparisons"] == "ustat_t"
    assert comp["ci_lo"] <= comp["diff"] <= comp["ci_hi"]
    # the published convention's points are the default's points
    pub = evaluate_files(paths, settings=load_settings(), n_boot=FAST, ci="published_bca")
    for a, b in zip(res["models"], pub["models"], strict=True):
        assert {m: v["point"] for m, v in a["metrics"].items()} == {
            m: v["point"] for m, v in b["metrics"].items()
        }


def _untied(public_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    df = pl.read_csv(public_dir / OOF / f"{FILES[0]}.csv")
    cat = df["category"].to_numpy()
    gold = df["true_rank"].cast(pl.Float64).to_numpy() + 1e-6 * np.arange(len(df))
    return cat, gold


@pytest.mark.parametrize("case", ["perfect", "near_perfect"])
def test_scoring_engine_default_holds_for_strong_predictors(public_dir, case) -> None:
    """Through the engine every marts/evaluate number goes through: each default interval
    contains its point, or is flagged degenerate with the reason."""
    cat, gold = _untied(public_dir)
    pred = 2.0 * gold
    if case == "near_perfect":  # swap the two lowest products of the first category
        rows = np.flatnonzero(cat == sorted(set(cat))[0])
        lo2 = rows[np.argsort(gold[rows])[:2]]
        pred[lo2] = pred[lo2[::-1]]
    score = score_model(cat, gold, pred, n_boot=1000)
    for metric in INTERVAL_METRICS:
        iv = score["metrics"][metric]
        assert iv["ci_lo"] <= iv["point"] <= iv["ci_hi"], (metric, iv)
        if iv["is_degenerate"]:
            assert iv["ci_lo"] == iv["ci_hi"] and iv["ci_note"], (metric, iv)
    degenerate = {m for m in INTERVAL_METRICS if score["metrics"][m]["is_degenerate"]}
    if case == "perfect":
        assert {"pairwise_accuracy", "kendall_tau", "pairwise_accuracy_macro"} <= degenerate
    else:
        assert "pairwise_accuracy" not in degenerate
    # the published convention misses its own estimate here (why the default exists)
    pub = score_model(cat, gold, pred, n_boot=1000, ci="published_bca")
    if case == "near_perfect":
        p = pub["metrics"]["pairwise_accuracy"]
        assert not p["ci_lo"] <= p["point"] <= p["ci_hi"]
        assert "outside" in p["ci_note"]
    per_cat = score_per_category(cat, gold, pred, n_boot=1000)
    ok = (per_cat["ci_lo"] <= per_cat["pairwise_accuracy"]) & (
        per_cat["pairwise_accuracy"] <= per_cat["ci_hi"]
    )
    assert (ok | per_cat["is_degenerate"]).all()


def _oof(public_dir: Path, source: str, name: str) -> pl.DataFrame:
    df = pl.read_csv(public_dir / OOF / f"{FILES[1]}.csv")
    return df.select(
        pl.lit(name).alias("model_id"),
        "category",
        "product_code",
        pl.col("true_rank").alias("gold_value"),
        "predicted_score",
        pl.lit(source).alias("source"),
        pl.lit(source).alias("data_origin"),
    )


def test_marts_both_conventions_for_every_source(public_dir) -> None:
    """A public file and a warehouse fit (same rows under another source) both get
    published_bca (issue #11: own fits' BCa beside the published models') and the default, with
    the same numbers under each method; ``is_default_ci`` marks one row per model and metric."""
    oof = pl.concat(
        [
            _oof(public_dir, "tastebench_public", "ridge_SNCTI_bench"),
            _oof(public_dir, "warehouse_fit", "ridge:fit1"),
        ]
    )
    pairs = pl.read_csv(public_dir / "food_similarity" / "data" / "pairs.csv")
    table = model_metrics_table(oof, pairs, n_boot=FAST)
    assert table["model_metric_key"].n_unique() == len(table)
    methods = {m: set(g["ci_method"]) for (m,), g in table.group_by("model_id")}
    assert "published_bca" in methods["ridge_SNCTI_bench"]
    assert methods["ridge:fit1"] == methods["ridge_SNCTI_bench"]
    default = table.filter(pl.col("is_default_ci"))
    assert not default.select("model_id", "metric").is_duplicated().any()
    default = {(r["model_id"], r["metric"]): r for r in default.iter_rows(named=True)}
    for metric in INTERVAL_METRICS:
        a, b = default[("ridge_SNCTI_bench", metric)], default[("ridge:fit1", metric)]
        assert a["ci_method"] == b["ci_method"] == DEFAULT_CI_METHODS[metric]
        assert (a["ci_lo"], a["ci_hi"]) == (b["ci_lo"], b["ci_hi"])
    bca = table.filter(pl.col("ci_method") == "published_bca")
    assert not bca["is_default_ci"].any()
    bca = {(r["model_id"], r["metric"]): r for r in bca.iter_rows(named=True)}
    assert {m for _, m in bca} >= {"pairwise_accuracy", "spearman", "recall_at_1"}
    for (model, metric), row in bca.items():
        if model == "ridge:fit1":
            twin = bca[("ridge_SNCTI_bench", metric)]
            assert (row["ci_lo"], row["ci_hi"]) == (twin["ci_lo"], twin["ci_hi"])
    per_cat = model_metrics_per_category_table(oof, n_boot=FAST)
    assert per_cat["model_category_key"].n_unique() == len(per_cat)
    pc = {m: set(g["ci_method"]) for (m,), g in per_cat.group_by("model_id")}
    assert pc["ridge_SNCTI_bench"] == {"published_bca", "distinct_percentile"}
    assert pc["ridge:fit1"] == {"published_bca", "distinct_percentile"}

"""`tastebench evaluate` engine: published Table 2 from the public out-of-fold files, the JSON
contract, bad input, coverage, comparisons, trivial policies, slices, the CLI and the marts'
frames (warehouse/evaluate/, warehouse/metrics/scoring.py, warehouse/metrics/tables.py)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from rich.console import Console
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.config import REPO_ROOT, load_settings
from warehouse.errors import DataValidationError, WarehouseError
from warehouse.evaluate.contract import check_result_shape
from warehouse.evaluate.files import evaluate_files, load_predictions
from warehouse.evaluate.render import render_table
from warehouse.metrics import METRIC_NAMES
from warehouse.metrics.core import TABLE2_METRICS
from warehouse.metrics.scoring import pair_table
from warehouse.metrics.tables import (
    model_comparisons_table,
    model_metrics_per_category_table,
    model_metrics_table,
)

OOF = "food_similarity/results/oof_predictions"
TABLE2 = TABLE2_METRICS
TOL3 = 0.0005 + 1e-9  # a published 3-decimal value is reproduced within half a unit (+ slack)
NNLS = "nested_bt_gemini_nnls"
FAST = 200  # bootstrap replicates where only shapes and points matter


@pytest.fixture(scope="module")
def oof_files(public_dir: Path) -> list[Path]:
    files = sorted((public_dir / OOF).glob("*.csv"))
    assert len(files) == 9
    return files


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return pd.read_csv(REPO_ROOT / "seeds" / "published_table2.csv").set_index("model_file_stem")


@pytest.fixture(scope="module")
def fast_result(oof_files) -> dict:
    return evaluate_files(oof_files, settings=load_settings(), n_boot=FAST)


def _render(result: dict, **kwargs) -> str:
    console = Console(width=400, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_table(result, **kwargs))
    return console.export_text()


def _write(df: pd.DataFrame, path: Path) -> Path:
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def nnls_frame(public_dir: Path) -> pd.DataFrame:
    return pd.read_csv(public_dir / OOF / f"{NNLS}.csv")


# --------------------------------------------------------------------------- published numbers


def test_reproduces_published_table2_for_every_model(fast_result, published) -> None:
    assert fast_result["gold"] == "file"
    assert fast_result["data_origin"] == "tastebench_public"
    names = [m["name"] for m in fast_result["models"]]
    assert sorted(names) == sorted(published.index)
    for model in fast_result["models"]:
        assert model["n_products"] == 215 and model["n_pairs"] == 935
        assert model["coverage"] == 1.0 and model["missing_products"] == []
        for metric in TABLE2:
            ours = model["metrics"][metric]["point"]
            assert abs(ours - published.loc[model["name"], metric]) <= TOL3, (model["name"], metric)


def test_nnls_pairwise_bca_bounds_at_10000(public_dir) -> None:
    """Main-table BCa (docs/benchmark.md section 4): [.653, .740]; within +/- .005 of the printed
    [.654, .740]."""
    res = evaluate_files(
        [public_dir / OOF / f"{NNLS}.csv"],
        settings=load_settings(),
        n_boot=10000,
        seed=42,
        ci="published_bca",
    )
    iv = res["models"][0]["metrics"]["pairwise_accuracy"]
    assert iv["ci_method"] == "published_bca"
    assert abs(iv["point"] - 0.683) <= TOL3
    assert abs(iv["ci_lo"] - 0.654) <= 0.005 and abs(iv["ci_hi"] - 0.740) <= 0.005
    assert round(iv["ci_lo"], 3) == 0.653 and round(iv["ci_hi"], 3) == 0.740
    for metric in METRIC_NAMES:
        m = res["models"][0]["metrics"][metric]
        if m["ci_lo"] is not None:
            assert m["ci_lo"] <= m["ci_hi"]


def test_every_metric_has_a_value_and_the_six_table2_metrics_a_ci(fast_result) -> None:
    for model in fast_result["models"]:
        assert list(model["metrics"]) == list(METRIC_NAMES)
        for metric in METRIC_NAMES:
            assert model["metrics"][metric]["point"] is not None
        for metric in (*TABLE2, "pairwise_accuracy_macro"):
            assert model["metrics"][metric]["ci_lo"] is not None
        assert model["metrics"]["pairwise_accuracy_pooled"]["ci_lo"] is None


def test_per_category_block(fast_result) -> None:
    model = fast_result["models"][0]
    assert len(model["per_category"]) == 24
    assert sum(c["n_products"] for c in model["per_category"].values()) == 215
    assert sum(c["n_pairs"] for c in model["per_category"].values()) == 935
    milk = model["per_category"]["Milk"]
    assert milk["n_products"] == 18 and milk["n_pairs"] == 153
    assert milk["pairwise_accuracy"]["ci_lo"] <= milk["pairwise_accuracy"]["ci_hi"]


# --------------------------------------------------------------------------- JSON contract


def test_json_shape_validates_and_round_trips(fast_result) -> None:
    check_result_shape(fast_result)
    again = json.loads(json.dumps(fast_result, allow_nan=False))
    check_result_shape(again)


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda r: r.pop("trivial_policies"), "trivial_policies"),
        (lambda r: r["models"][0]["metrics"].pop("kendall_tau"), "kendall_tau"),
        (lambda r: r["models"][0].__setitem__("n_pairs", "935"), "n_pairs"),
        (lambda r: r.__setitem__("gold", "oracle"), "gold"),
        (lambda r: r["comparisons"].pop(), "comparisons"),
        (
            lambda r: r["models"][1]["metrics"]["spearman"].__setitem__("point", float("nan")),
            "point",
        ),
    ],
)
def test_shape_check_rejects_broken_results(fast_result, mutate, where) -> None:
    broken = json.loads(json.dumps(fast_result))
    mutate(broken)
    with pytest.raises(ValueError, match=where):
        check_result_shape(broken)


# --------------------------------------------------------------------------- comparisons


def test_comparisons_cover_every_pair_with_holm(fast_result) -> None:
    comps = fast_result["comparisons"]
    assert len(comps) == 36
    for c in comps:
        assert c["n_pairs"] == 935 and c["n_products"] == 215
        assert c["p_holm"] >= c["p_value"]
        assert c["ci_lo"] <= c["diff"] <= c["ci_hi"]
        accs = {
            m["name"]: m["metrics"]["pairwise_accuracy"]["point"] for m in fast_result["models"]
        }
        assert c["diff"] == pytest.approx(accs[c["model_a"]] - accs[c["model_b"]], abs=1e-12)
        if c["is_resolved"]:
            assert c["p_holm"] < 0.05 and (c["ci_lo"] > 0 or c["ci_hi"] < 0)


def test_comparisons_on_shared_products_when_coverage_differs(
    tmp_path, nnls_frame, public_dir
) -> None:
    a = _write(nnls_frame, tmp_path / "full.csv")
    part = nnls_frame[nnls_frame["category"] != "Milk"]
    b = _write(part, tmp_path / "no_milk.csv")
    res = evaluate_files([a, b], settings=load_settings(), n_boot=FAST)
    (c,) = res["comparisons"]
    assert c["n_pairs"] == 935 - 153 and c["n_products"] == 215 - 18
    assert c["diff"] == pytest.approx(0.0) and c["p_value"] == 1.0 and not c["is_resolved"]


def test_pair_table_keys_ignore_row_order(nnls_frame) -> None:
    shuffled = nnls_frame.sample(frac=1.0, random_state=3)
    args = ("category", "product_code", "true_rank", "predicted_score")
    a = pair_table(*(nnls_frame[c] for c in args)).sort("pair_key")
    b = pair_table(*(shuffled[c] for c in args)).sort("pair_key")
    assert_frame_equal(a, b)


def test_files_whose_gold_disagrees_cannot_be_compared(tmp_path, nnls_frame) -> None:
    a = _write(nnls_frame, tmp_path / "a.csv")
    other = nnls_frame.copy()
    other.loc[other["category"] == "Bacon", "true_rank"] *= -1
    b = _write(other, tmp_path / "b.csv")
    with pytest.raises(DataValidationError, match="b.csv.*gold orders pair Bacon"):
        evaluate_files([a, b], settings=load_settings(), n_boot=FAST)


# --------------------------------------------------------------------------- trivial policies


def test_trivial_policies(fast_result) -> None:
    pols = {p["name"]: p for p in fast_result["trivial_policies"]}
    assert set(pols) == {"random", "slot1_wins", "lower_code_wins"}
    rnd = pols["random"]["metrics"]
    assert rnd["pairwise_accuracy"]["point"] == 0.5
    assert [round(rnd[f"recall_at_{k}"]["point"], 3) for k in (1, 2, 3)] == [0.121, 0.242, 0.363]
    slot1 = pols["slot1_wins"]
    assert slot1["n_pairs"] == 932 and slot1["ci_method"] == "clopper_pearson"
    s = slot1["metrics"]["pairwise_accuracy"]
    # 432 of the 932 public gold pairs list the winner first: below chance beyond the CI
    assert s["point"] == pytest.approx(432 / 932)
    assert s["ci_hi"] < 0.5 and slot1["differs_from_chance"] and not slot1["beats_chance"]
    lcw = pols["lower_code_wins"]
    assert lcw["n_products"] == 215 and not lcw["beats_chance"]
    assert (
        lcw["metrics"]["pairwise_accuracy"]["ci_lo"]
        < 0.5
        < lcw["metrics"]["pairwise_accuracy"]["ci_hi"]
    )
    assert set(lcw["flagged_metrics"]) <= set(TABLE2)


# --------------------------------------------------------------------------- bad input


def _bad(tmp_path: Path, frame: pd.DataFrame, name: str = "bad.csv") -> Path:
    return _write(frame, tmp_path / name)


def test_unknown_category_names_file_line_column(tmp_path, nnls_frame) -> None:
    df = nnls_frame.copy()
    df.loc[4, "category"] = "Tofu"
    path = _bad(tmp_path, df)
    with pytest.raises(DataValidationError) as exc:
        evaluate_files([path], settings=load_settings(), n_boot=FAST)
    msg = str(exc.value)
    assert str(path) in msg and "line 6" in msg and "'category'" in msg and "Tofu" in msg


def test_unknown_code_names_file_line_column(tmp_path, nnls_frame) -> None:
    df = nnls_frame.copy()
    df.loc[0, "product_code"] = 99
    path = _bad(tmp_path, df)
    with pytest.raises(DataValidationError, match=r"line 2, column 'product_code'.*99"):
        evaluate_files([path], settings=load_settings(), n_boot=FAST)


def test_duplicate_row_is_an_error(tmp_path, nnls_frame) -> None:
    df = pd.concat([nnls_frame, nnls_frame.iloc[[7]]], ignore_index=True)
    path = _bad(tmp_path, df)
    with pytest.raises(DataValidationError, match=r"line 217.*duplicate row.*first at line 9"):
        evaluate_files([path], settings=load_settings(), n_boot=FAST)


def test_nan_score_is_an_error(tmp_path, nnls_frame) -> None:
    df = nnls_frame.copy()
    df.loc[10, "predicted_score"] = np.nan
    path = _bad(tmp_path, df)
    with pytest.raises(DataValidationError, match=r"line 12, column 'predicted_score'.*NaN"):
        evaluate_files([path], settings=load_settings(), n_boot=FAST)


def test_non_numeric_score_is_an_error(tmp_path, nnls_frame) -> None:
    df = nnls_frame.astype({"predicted_score": object})
    df.loc[3, "predicted_score"] = "high"
    path = _bad(tmp_path, df)
    with pytest.raises(DataValidationError, match=r"line 5, column 'predicted_score'.*high"):
        evaluate_files([path], settings=load_settings(), n_boot=FAST)


def test_missing_column_and_missing_file(tmp_path, nnls_frame) -> None:
    path = _bad(tmp_path, nnls_frame.drop(columns="predicted_score"))
    with pytest.raises(DataValidationError, match="missing column 'predicted_score'"):
        load_predictions(path)
    with pytest.raises(DataValidationError, match="file not found"):
        load_predictions(tmp_path / "nope.csv")


def test_gold_file_requires_a_gold_column(tmp_path, nnls_frame) -> None:
    path = _bad(tmp_path, nnls_frame.drop(columns="true_rank"))
    with pytest.raises(DataValidationError, match="no gold column"):
        evaluate_files([path], gold="file", settings=load_settings(), n_boot=FAST)
    with pytest.raises(WarehouseError, match="unknown gold"):
        evaluate_files([path], gold="oracle", settings=load_settings(), n_boot=FAST)


def test_same_stem_twice_is_an_error(tmp_path, nnls_frame) -> None:
    (tmp_path / "x").mkdir()
    a = _write(nnls_frame, tmp_path / "m.csv")
    b = _write(nnls_frame, tmp_path / "x" / "m.csv")
    with pytest.raises(WarehouseError, match="share the name 'm'"):
        evaluate_files([a, b], settings=load_settings(), n_boot=FAST)


def test_missing_products_are_reported_as_coverage(tmp_path, nnls_frame) -> None:
    keep = nnls_frame.drop(index=[0, 1, 50])
    path = _write(keep, tmp_path / "partial.csv")
    res = evaluate_files([path], settings=load_settings(), n_boot=FAST)
    model = res["models"][0]
    assert model["n_products"] == 212 and model["n_expected_products"] == 215
    assert model["coverage"] == pytest.approx(212 / 215) and model["coverage"] < 1
    missing = {(m["category"], m["product_code"]) for m in model["missing_products"]}
    expected = {(r.category, int(r.product_code)) for r in nnls_frame.loc[[0, 1, 50]].itertuples()}
    assert missing == expected
    assert any("covers 212 of 215" in n for n in res["notes"])
    assert "covers 212 of 215" in _render(res)
    check_result_shape(res)


def test_extra_columns_are_ignored_and_row_order_does_not_matter(tmp_path, nnls_frame) -> None:
    df = nnls_frame.sample(frac=1.0, random_state=0)
    df["notes"] = "x"
    res = evaluate_files(
        [_write(df, tmp_path / "shuffled.csv")], settings=load_settings(), n_boot=FAST
    )
    ref = evaluate_files(
        [_write(nnls_frame, tmp_path / f"{NNLS}.csv")], settings=load_settings(), n_boot=FAST
    )
    for metric in METRIC_NAMES:
        assert res["models"][0]["metrics"][metric]["point"] == pytest.approx(
            ref["models"][0]["metrics"][metric]["point"], abs=1e-12
        )


def test_user_gold_is_not_called_public(tmp_path, nnls_frame) -> None:
    df = nnls_frame.rename(columns={"true_rank": "true_score"})
    df["true_score"] = df["true_score"] * 0.5 + 1
    res = evaluate_files(
        [_write(df, tmp_path / "scored.csv")], settings=load_settings(), n_boot=FAST
    )
    assert res["data_origin"] == "prediction_file"
    assert res["models"][0]["gold_column"] == "true_score"
    # an affine change of the gold keeps every pairwise-order metric
    assert abs(res["models"][0]["metrics"]["pairwise_accuracy"]["point"] - 0.683) <= TOL3


# --------------------------------------------------------------------------- slices and ECE


def test_delta_quintiles_on_rank_and_welch_needs_the_warehouse(fast_result) -> None:
    slices = fast_result["models"][0]["slices"]
    assert slices["delta_quintiles"]["delta_of"] == "true_rank"
    bins = slices["delta_quintiles"]["bins"]
    assert [b["bin"] for b in bins] == [1, 2, 3, 4, 5]
    assert sum(b["n_pairs"] for b in bins) == 935
    assert slices["clear_vs_ambiguous"] is None
    assert "warehouse" in slices["clear_vs_ambiguous_note"]


def test_ece_when_confidence_is_given(tmp_path, nnls_frame) -> None:
    df = nnls_frame.copy()
    df["confidence"] = np.linspace(0.5, 1.0, len(df))
    res = evaluate_files([_write(df, tmp_path / "conf.csv")], settings=load_settings(), n_boot=FAST)
    cal = res["models"][0]["calibration"]
    assert cal["n_pairs"] == 935 and cal["n_bins"] == 10 and 0 <= cal["ece"] <= 1
    assert "ECE" in _render(res)
    df.loc[2, "confidence"] = 1.5
    with pytest.raises(DataValidationError, match=r"line 4, column 'confidence'"):
        evaluate_files(
            [_write(df, tmp_path / "conf_bad.csv")], settings=load_settings(), n_boot=FAST
        )


# --------------------------------------------------------------------------- warehouse gold


@pytest.fixture(scope="module")
def tiny_warehouse(tmp_path_factory, public_dir) -> Path:
    """A DuckDB file with the three relations `--gold warehouse` reads, from the public gold:
    panel means = true_rank / 3 + 1 and 30 simulated ratings per product (data_origin
    simulation)."""
    gold = pd.read_csv(public_dir / OOF / f"{NNLS}.csv")[["category", "product_code", "true_rank"]]
    rng = np.random.default_rng(7)
    ratings = gold.loc[gold.index.repeat(30), ["category", "product_code", "true_rank"]].copy()
    ratings["similarity"] = ratings["true_rank"] / 3 + 1 + rng.normal(0, 1.0, len(ratings))
    means = ratings.groupby(["category", "product_code"], as_index=False)["similarity"].mean()
    pairs = pd.read_csv(public_dir / "food_similarity" / "data" / "pairs.csv")
    path = tmp_path_factory.mktemp("wh") / "tiny.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema marts; create schema staging")
    con.register("means", means)
    con.register("ratings", ratings)
    con.register("pairs", pairs)
    con.execute(
        "create table marts.fct_panel_means as select category, product_code, true as is_analog, "
        "similarity as panel_mean, 'simulation' as data_origin from means"
    )
    con.execute(
        "create table staging.stg_nectar__ratings as select category, product_code, similarity, "
        "true as is_benchmark_category, true as is_benchmark_year from ratings"
    )
    con.execute(
        "create table staging.stg_tastebench__gold_pairs as select pair_id, category, "
        "product_code_1, product_code_2, higher_rated_product as winner_product_code from pairs"
    )
    con.close()
    return path


def test_warehouse_gold_with_welch_slice(tmp_path, nnls_frame, tiny_warehouse) -> None:
    path = _write(nnls_frame.drop(columns="true_rank"), tmp_path / "nogold.csv")
    res = evaluate_files([path], settings=load_settings(), n_boot=FAST, db_path=tiny_warehouse)
    check_result_shape(res)
    assert res["gold"] == "warehouse" and res["data_origin"] == "simulation"
    assert any("not real results" in n for n in res["notes"])
    model = res["models"][0]
    assert model["gold_column"] == "panel_mean" and model["coverage"] == 1.0
    slices = model["slices"]
    assert slices["delta_quintiles"]["delta_of"] == "panel_mean"
    ca = {s["slice"]: s for s in slices["clear_vs_ambiguous"]}
    assert ca["clear"]["n_pairs"] + ca["ambiguous"]["n_pairs"] == 935
    assert ca["clear"]["n_pairs"] > 0 and ca["ambiguous"]["n_pairs"] > 0
    # a file with gold can still be scored against the warehouse
    with_gold = _write(nnls_frame, tmp_path / "withgold.csv")
    res2 = evaluate_files(
        [with_gold], gold="warehouse", db_path=tiny_warehouse, settings=load_settings(), n_boot=FAST
    )
    assert res2["models"][0]["metrics"] == model["metrics"]
    text = _render(res, per_category=True)
    assert "SIMULATED" in text and "clear" in text and "Bacon" in text


def test_warehouse_gold_without_a_warehouse(tmp_path, nnls_frame) -> None:
    path = _write(nnls_frame.drop(columns="true_rank"), tmp_path / "nogold.csv")
    with pytest.raises(WarehouseError, match="no warehouse at"):
        evaluate_files(
            [path], settings=load_settings(), n_boot=FAST, db_path=tmp_path / "absent.duckdb"
        )


# --------------------------------------------------------------------------- rendering and CLI


def test_render_table_lists_models_policies_and_comparisons(fast_result) -> None:
    text = _render(fast_result, per_category=True)
    for model in fast_result["models"]:
        assert model["name"] in text
    assert "policy: random" in text and "policy: slot1_wins (!)" in text
    assert "Paired comparisons" in text and "Per-category" in text and "Milk" in text
    assert "0.683 [0.6" in text


def test_cli_evaluate_writes_json(tmp_path, oof_files) -> None:
    out = tmp_path / "out" / "result.json"
    files = [str(f) for f in oof_files[:3]]
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            *files,
            "--alone",
            "--bootstrap",
            str(FAST),
            "--json",
            str(out),
            "--per-category",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    check_result_shape(data)
    assert [m["name"] for m in data["models"]] == [Path(f).stem for f in files]
    assert data["bootstrap"]["n_boot"] == FAST and len(data["comparisons"]) == 3
    assert "Per-category" in result.output
    assert data["ci"]["convention"] == "default" and "default methods" in result.output
    pub = tmp_path / "pub.json"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            files[0],
            "--alone",
            "--bootstrap",
            str(FAST),
            "--json",
            str(pub),
            "--ci",
            "published_bca",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(pub.read_text())["ci"]["convention"] == "published_bca"
    assert "published BCa" in result.output
    result = CliRunner().invoke(app, ["evaluate", files[0], "--ci", "bca"])
    assert isinstance(result.exception, WarehouseError) and "published_bca" in str(result.exception)


def test_cli_bad_input_exits_nonzero_without_traceback(tmp_path, nnls_frame) -> None:
    df = nnls_frame.copy()
    df.loc[4, "category"] = "Tofu"
    path = _bad(tmp_path, df)
    proc = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "evaluate", str(path), "--bootstrap", "50"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    err = " ".join(proc.stderr.split())
    assert "bad.csv" in err and "line 6" in err and "Tofu" in err


def test_nine_files_with_all_metrics_and_cis(oof_files) -> None:
    """All nine published files in one call: every model and all 36 comparisons. Its speed at
    10,000 replicates is a benchmark (benchmarks/evaluate_context.py scores them in context),
    not a timed test."""
    res = evaluate_files(oof_files, settings=load_settings(), n_boot=200)
    assert len(res["models"]) == 9 and len(res["comparisons"]) == 36


# --------------------------------------------------------------------------- marts' frames


@pytest.fixture(scope="module")
def oof_mart(oof_files) -> pl.DataFrame:
    parts = [
        pl.read_csv(f).select(
            pl.lit(f.stem).alias("model_id"),
            "category",
            "product_code",
            pl.col("true_rank").alias("gold_value"),
            "predicted_score",
            pl.lit("tastebench_public").alias("source"),
            pl.lit("tastebench_public").alias("data_origin"),
        )
        for f in oof_files
    ]
    # shuffled on purpose: the marts sort each model's rows themselves
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=1)


def test_metrics_mart_frame(oof_mart, public_dir, published, fast_result) -> None:
    pairs = pl.read_csv(public_dir / "food_similarity" / "data" / "pairs.csv").rename(
        {"higher_rated_product": "winner_product_code"}
    )
    table = model_metrics_table(oof_mart, pairs, n_boot=FAST)
    assert table["model_metric_key"].n_unique() == len(table)
    # public files: both conventions (7 interval metrics twice, pooled once as 'none')
    assert len(table.filter(~pl.col("is_trivial_policy"))) == 9 * (7 + 7 + 1)
    default = table.filter(pl.col("is_default_ci"))
    assert not default.select("model_id", "metric").is_duplicated().any()
    models = default.filter(~pl.col("is_trivial_policy"))
    assert len(models) == 9 * 8 and models["model_id"].n_unique() == 9
    for r in models.filter(pl.col("metric").is_in(TABLE2)).iter_rows(named=True):
        assert abs(r["point"] - published.loc[r["model_id"], r["metric"]]) <= TOL3
    # the same numbers as the evaluate JSON at the same seed and replicates
    ev = {m["name"]: m["metrics"] for m in fast_result["models"]}
    for r in models.iter_rows(named=True):
        want = ev[r["model_id"]][r["metric"]]
        assert r["point"] == pytest.approx(want["point"], abs=1e-12)
        if r["ci_lo"] is not None and not np.isnan(r["ci_lo"]):
            assert r["ci_lo"] == pytest.approx(want["ci_lo"], abs=1e-12)
    pols = table.filter(pl.col("is_trivial_policy"))
    assert set(pols["model_id"]) == {"policy:random", "policy:slot1_wins", "policy:lower_code_wins"}
    assert (table["data_origin"] == "tastebench_public").all()


def test_the_comparison_mart_is_the_library_table_computed_once(
    oof_mart, tmp_path, monkeypatch
) -> None:
    """agg_model_comparisons goes through the fit store's frame cache: the first call computes the
    library's table, the second reads it back identical to the bit and computes nothing."""
    from warehouse.metrics import marts, tables

    monkeypatch.setenv("TASTEBENCH_FITS_DIR", str(tmp_path))
    expected = model_comparisons_table(oof_mart, n_boot=FAST, seed=42)
    assert_frame_equal(marts.agg_model_comparisons(oof_mart, n_boot=FAST, seed=42), expected)
    monkeypatch.setattr(tables, "model_comparisons_table", _never_called(model_comparisons_table))
    assert_frame_equal(marts.agg_model_comparisons(oof_mart, n_boot=FAST, seed=42), expected)
    (entry,) = (tmp_path / "frames" / "model_comparisons_table").glob("*.parquet")
    assert_frame_equal(pl.read_parquet(entry), expected)


def _never_called(function):
    """``function``'s stand-in (same name, so the same cache entry) that refuses to run."""

    @functools.wraps(function)
    def refuse(*args, **kwargs):
        raise AssertionError("a cache hit must not recompute the table")

    return refuse


def test_per_category_and_comparison_mart_frames(oof_mart) -> None:
    per_cat = model_metrics_per_category_table(oof_mart, n_boot=FAST)
    assert len(per_cat) == 9 * 24 * 2
    assert per_cat["model_category_key"].n_unique() == len(per_cat)
    assert set(per_cat["ci_method"]) == {"published_bca", "distinct_percentile"}
    per_cat = per_cat.filter(pl.col("is_default_ci"))
    assert len(per_cat) == 9 * 24
    assert (per_cat.group_by("model_id").agg(pl.col("n_pairs").sum())["n_pairs"] == 935).all()
    comps = model_comparisons_table(oof_mart, n_boot=FAST)
    assert len(comps) == 36 and comps["comparison_key"].n_unique() == len(comps)
    assert (comps["ci_method"] == "ustat_t").all()
    assert (comps["model_a"] < comps["model_b"]).all()
    assert (comps["data_origin"] == "tastebench_public").all()


def test_input_errors_come_before_any_work(tmp_path, nnls_frame, monkeypatch) -> None:
    """A header-only file, a directory as input and a directory as --json are input errors
    naming the path and the fix, raised before the reference is read or anything is scored."""
    import warehouse.evaluate.files as files_mod

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the inputs were checked")

    monkeypatch.setattr(files_mod, "load_reference", no_work)
    header = tmp_path / "header.csv"
    header.write_text("category,product_code,predicted_score,true_rank\n")
    with pytest.raises(DataValidationError, match=r"header.csv, line 2: no data rows.*Fix: add"):
        evaluate_files(
            [_write(nnls_frame, tmp_path / "ok.csv"), header], settings=load_settings(), n_boot=FAST
        )
    with pytest.raises(DataValidationError, match=r"a directory, not a file. Fix: give the path"):
        evaluate_files([tmp_path], settings=load_settings(), n_boot=FAST)
    monkeypatch.setattr(files_mod, "evaluate_files", no_work)
    result = CliRunner().invoke(app, ["evaluate", str(header), "--json", str(tmp_path)])
    assert isinstance(result.exception, WarehouseError)
    assert f"--json {tmp_path} is a directory" in str(result.exception)
    assert "Fix: give a file path" in str(result.exception)


def test_a_long_file_stops_at_the_first_error_batch(tmp_path, nnls_frame) -> None:
    """Checks read at most one row more than there are known products: a long file of duplicate
    rows reports its first duplicate (line 217) and never reaches a broken row far below it."""
    df = pd.concat([nnls_frame, *[nnls_frame.iloc[[7]]] * 20_000], ignore_index=True)
    df = df.astype({"predicted_score": object})
    df.loc[len(df) - 1, "predicted_score"] = "not a number"
    path = _bad(tmp_path, df, "long.csv")
    with pytest.raises(DataValidationError, match=r"line 217.*duplicate row.*first at line 9"):
        evaluate_files([path], settings=load_settings(), n_boot=FAST)
    assert len(load_predictions(path, max_rows=300).frame) == 300
    assert len(load_predictions(path).frame) == len(df)


def test_a_bounded_read_is_the_head_of_the_whole_read(tmp_path) -> None:
    """The prefix read gives exactly the first rows of the whole-file read, also when a quoted
    note spans lines, when the file has no final newline, and when it is shorter than the bound."""
    rows = [f'Milk,{i},0.{i},"note {i}\nline two, with a comma"' for i in range(40)]
    path = tmp_path / "notes.csv"
    path.write_text("category,product_code,predicted_score,note\n" + "\n".join(rows))
    whole = load_predictions(path).frame
    assert whole.height == 40
    for n in (1, 7, 39, 40, 100):
        assert_frame_equal(load_predictions(path, max_rows=n).frame, whole.head(n))

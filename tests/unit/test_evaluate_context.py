"""`tastebench evaluate` in context (issue #26): a planted strong predictor and a random one
scored beside the nine published models, ranked with intervals and placed on the human scale
(public aggregates and a small warehouse with blocks), the JSON contract's new sections, the CLI
(`--alone` keeps today's behaviour) and the self-contained HTML page
(warehouse/evaluate/context.py, ranks.py, human_scale.py, context_html.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.config import load_settings
from warehouse.errors import DataValidationError, WarehouseError
from warehouse.evaluate.context import evaluate_in_context
from warehouse.evaluate.context_html import render_context_page
from warehouse.evaluate.contract import SCHEMA_VERSION, check_result_shape
from warehouse.evaluate.human_scale import kstar_record, within_block_accuracy
from warehouse.evaluate.ranks import model_ranks
from warehouse.metrics.scoring import pair_table
from warehouse.sources import registry

OOF = "food_similarity/results/oof_predictions"
NNLS = "nested_bt_gemini_nnls"
FAST = 200  # bootstrap replicates: the properties, not the numbers


@pytest.fixture(scope="module")
def gold_frame(public_dir: Path) -> pd.DataFrame:
    return pd.read_csv(public_dir / OOF / f"{NNLS}.csv")


def _planted(gold: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    """``strong``: gold plus small noise; ``random``: uniform scores (both keep true_rank)."""
    rng = np.random.default_rng(3)
    strong, rand = gold.copy(), gold.copy()
    strong["predicted_score"] = gold["true_rank"] + rng.normal(0, 0.3, len(gold))
    rand["predicted_score"] = rng.random(len(gold))
    folder.mkdir(parents=True, exist_ok=True)
    strong.to_csv(folder / "strong.csv", index=False)
    rand.to_csv(folder / "random.csv", index=False)
    return folder / "strong.csv", folder / "random.csv"


@pytest.fixture(scope="module")
def planted(tmp_path_factory, gold_frame) -> tuple[Path, Path]:
    return _planted(gold_frame, tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="module")
def in_context(planted) -> dict:
    return evaluate_in_context(list(planted), settings=load_settings(), n_boot=FAST)


def _wins(res: dict, name: str) -> list[str]:
    return [c["model_b"] for c in res["context"]["comparisons"] if c["winner"] == name]


def _weakest_published(res: dict, n: int) -> list[str]:
    pub = [m for m in res["models"] if m["role"] == "published"]
    pub.sort(key=lambda m: m["metrics"]["pairwise_accuracy"]["point"])
    return [m["name"] for m in pub[:n]]


# --------------------------------------------------------------------------- the planted pair


def test_strong_ranks_first_beats_the_weakest_and_passes_five_panelists(in_context) -> None:
    res = in_context
    check_result_shape(res)
    rank = {r["name"]: r for r in res["context"]["ranks"]}["strong"]
    assert rank["rank"] == 1 and rank["rank_ci_hi"] == 1 and rank["is_resolved"]
    assert rank["n_models"] == 10  # the nine published + strong
    assert set(_weakest_published(res, 3)) <= set(_wins(res, "strong"))
    human = {m["name"]: m for m in res["human_scale"]["models"]}["strong"]
    assert human["k_star"]["position"] == "above_largest_panel"
    assert human["k_star"]["k_star_min"] > 5


def test_random_sits_below_one_panelist_with_no_resolved_win(in_context) -> None:
    res = in_context
    assert _wins(res, "random") == []
    human = {m["name"]: m for m in res["human_scale"]["models"]}["random"]
    assert human["k_star"]["position"] == "below_one_panelist"
    assert human["accuracy"]["point"] < res["human_scale"]["panelist_accuracy"]["median"]
    rank = {r["name"]: r for r in res["context"]["ranks"]}["random"]
    assert rank["rank"] > 5 and rank["rank_ci_lo"] <= rank["rank"] <= rank["rank_ci_hi"]


def test_context_models_come_from_the_registry_by_hash(in_context) -> None:
    files = in_context["context"]["files"]
    published = [f for f in files if f["role"] == "published"]
    assert len(published) == 9
    for f in published:
        assert f["sha256"] == registry.get(f["registry_key"]).sha256
        assert registry.sha256_file(Path(f["source_file"])) == f["sha256"]
    users = [f for f in files if f["role"] == "user"]
    assert [f["name"] for f in users] == ["strong", "random"]
    assert all(len(f["sha256"]) == 64 for f in users)


def test_holm_is_over_the_users_comparisons_only(in_context) -> None:
    comps = in_context["context"]["comparisons"]
    assert len(comps) == 2 * 9 + 1  # each user model vs the nine, and the two users
    assert all(c["model_a"] in ("strong", "random") for c in comps)
    p = np.array([c["p_value"] for c in comps])
    ph = np.array([c["p_holm"] for c in comps])
    assert (ph >= p - 1e-15).all() and ph.max() <= 1
    # the smallest p is multiplied by the number of the user's comparisons
    i = int(np.argmin(p))
    assert ph[i] == pytest.approx(min(1.0, p[i] * len(comps)))


def test_public_gold_says_what_it_cannot_show(in_context) -> None:
    human = in_context["human_scale"]
    assert human["scope"] == "all_pairs" and not human["is_within_block"]
    assert "blocks are not public" in human["note"] and "--gold warehouse" in human["note"]
    assert [c["k"] for c in human["curve"]] == [1, 3, 5]
    assert human["panelist_accuracy"]["median"] == pytest.approx(0.650, abs=1e-9)


def test_json_round_trips_and_the_shape_check_catches_a_broken_context(in_context) -> None:
    data = json.loads(json.dumps(in_context, allow_nan=False))
    assert data["schema_version"] == SCHEMA_VERSION == 3
    check_result_shape(data)
    broken = json.loads(json.dumps(data))
    del broken["context"]["ranks"][0]["rank_ci_lo"]
    with pytest.raises(ValueError, match="rank_ci_lo"):
        check_result_shape(broken)
    broken = json.loads(json.dumps(data))
    broken["human_scale"]["models"][0]["k_star"]["position"] = "somewhere"
    with pytest.raises(ValueError, match="position"):
        check_result_shape(broken)
    broken = json.loads(json.dumps(data))
    broken["models"][0]["role"] = "published"
    with pytest.raises(ValueError, match="role"):
        check_result_shape(broken)


def test_a_published_file_given_by_the_user_is_not_counted_twice(public_dir) -> None:
    res = evaluate_in_context(
        [public_dir / OOF / f"{NNLS}.csv"], settings=load_settings(), n_boot=FAST
    )
    assert len(res["models"]) == 9
    assert [m["name"] for m in res["models"] if m["role"] == "user"] == [NNLS]
    assert any("is the published model" in n for n in res["context"]["notes"])


def test_bad_and_clashing_files_fail_before_any_work(tmp_path, gold_frame) -> None:
    bad = gold_frame.copy()
    bad.loc[4, "category"] = "Tofu"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(DataValidationError, match="line 6"):
        evaluate_in_context([tmp_path / "bad.csv"], settings=load_settings(), n_boot=FAST)
    clash = gold_frame.copy()
    clash["predicted_score"] = clash["predicted_score"] * 2 + 1
    clash.to_csv(tmp_path / f"{NNLS}.csv", index=False)
    with pytest.raises(WarehouseError, match="rename your file"):
        evaluate_in_context([tmp_path / f"{NNLS}.csv"], settings=load_settings(), n_boot=FAST)


# --------------------------------------------------------------------------- the pieces


def test_kstar_record_on_sparse_and_dense_curves() -> None:
    sparse = [(1, 0.65), (3, 0.685), (5, 0.725)]
    assert kstar_record(sparse, 0.5)["position"] == "below_one_panelist"
    assert kstar_record(sparse, 0.65)["k_star"] == 1
    mid = kstar_record(sparse, 0.70)
    assert (mid["k_star"], mid["k_star_min"], mid["k_star_max"]) == (None, 4, 5)
    top = kstar_record(sparse, 0.9)
    assert top["position"] == "above_largest_panel" and top["k_star_min"] == 6
    dense = [(k, 0.6 + 0.01 * k) for k in range(1, 21)]
    assert kstar_record(dense, 0.655)["k_star"] == 6
    assert kstar_record(dense, None)["position"] == "unknown"


def _frame(gold: np.ndarray, pred: np.ndarray, cats: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "category": cats,
            "product_code": list(range(1, len(gold) + 1)),
            "gold": gold.astype(float),
            "pred": pred.astype(float),
        }
    )


def test_ranks_are_paired_and_honest() -> None:
    rng = np.random.default_rng(0)
    cats = ["A"] * 12 + ["B"] * 12
    gold = rng.normal(size=24)
    frames = {
        "oracle": _frame(gold, gold, cats),
        "copy": _frame(gold, gold.copy(), cats),
        "noise": _frame(gold, rng.normal(size=24), cats),
    }
    ranks = {r["name"]: r for r in model_ranks(frames, ["oracle", "noise"], 300, 1)}
    # an exact copy ties: both share rank 1 in every draw (competition ranking)
    assert ranks["oracle"]["rank"] == 1 and ranks["oracle"]["rank_ci_hi"] == 1
    assert ranks["noise"]["rank"] == 3 and ranks["noise"]["rank_ci_lo"] == 3
    assert ranks["oracle"]["accuracy"] == 1.0


def test_within_block_accuracy_pools_block_pairs_with_a_block_interval() -> None:
    cats = ["A"] * 6
    gold = np.arange(6.0)
    pred = np.array([0, 1, 2, 5, 4, 3], dtype=float)  # right in block 0, reversed in block 1
    pairs = pair_table(cats, list(range(1, 7)), gold, pred)
    in_blocks = pl.DataFrame(
        {
            "block": [0, 0, 0, 1, 1, 1],
            "pair_key": ["A:1:2", "A:1:3", "A:2:3", "A:4:5", "A:4:6", "A:5:6"],
        }
    )
    acc = within_block_accuracy(pairs, in_blocks, n_boot=200, seed=1)
    assert acc["point"] == 0.5 and acc["n_blocks"] == 2 and acc["n_pairs"] == 6
    assert acc["ci_lo"] == 0.0 and acc["ci_hi"] == 1.0  # two blocks: all-wrong to all-right


# --------------------------------------------------------------------------- warehouse gold


@pytest.fixture(scope="module")
def block_warehouse(tmp_path_factory, gold_frame, public_dir) -> Path:
    """Panel means = true_rank, two overlapping blocks per category, a 1..20 group-size curve
    rising from .62 by .01 per respondent, 40 panelists per block at .60-.70 (simulation)."""
    g = gold_frame[["category", "product_code", "true_rank"]].copy()
    blocks = []
    for cat, grp in g.groupby("category"):
        codes = sorted(grp["product_code"])
        half = len(codes) // 2
        blocks += [(cat, 0, c) for c in codes[: half + 1]] + [(cat, 1, c) for c in codes[half:]]
    blocks = pd.DataFrame(blocks, columns=["category", "block_id", "product_code"])
    curve = pd.DataFrame({"k": range(1, 21)})
    curve["median_accuracy"] = 0.61 + 0.01 * curve["k"]
    curve["q025"], curve["q975"] = curve["median_accuracy"] - 0.05, curve["median_accuracy"] + 0.05
    loo = pd.DataFrame({"pairwise_accuracy": np.linspace(0.6, 0.7, 41)})
    pairs = pd.read_csv(public_dir / "food_similarity" / "data" / "pairs.csv")
    path = tmp_path_factory.mktemp("wh") / "blocks.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema marts; create schema staging")
    for name, frame in {
        "g": g,
        "blocks": blocks,
        "curve": curve,
        "loo": loo,
        "pairs": pairs,
    }.items():
        con.register(name, frame)
    con.execute(
        "create table marts.fct_panel_means as select category, product_code, true as is_analog, "
        "true_rank as panel_mean, 'simulation' as data_origin from g"
    )
    con.execute(
        "create table staging.stg_nectar__ratings as select category, product_code, "
        "true_rank as similarity, true as is_benchmark_category, true as is_benchmark_year from g"
    )
    con.execute(
        "create table staging.stg_tastebench__gold_pairs as select pair_id, category, "
        "product_code_1, product_code_2, higher_rated_product as winner_product_code from pairs"
    )
    con.execute(
        "create table marts.fct_block_products as select *, false as is_reference from blocks"
    )
    con.execute("create table marts.fct_panelist_block_accuracy as select * from loo")
    con.execute(
        "create table marts.agg_group_size_curve as select *, 'within_block' as pooling from curve"
    )
    con.execute(  # one warehouse fit: the gold reversed in every category
        "create table marts.fct_oof_predictions as select 'ridge_SNCTI:0123abcd' as model_id, "
        "'0123abcdef' as fit_id, 'warehouse_fit' as source, category, product_code, "
        "-true_rank as predicted_score from g"
    )
    con.close()
    return path


def test_warehouse_gold_places_models_within_blocks(block_warehouse, planted, tmp_path) -> None:
    res = evaluate_in_context(
        list(planted),
        gold="warehouse",
        db_path=block_warehouse,
        settings=load_settings(),
        n_boot=FAST,
    )
    check_result_shape(res)
    human = res["human_scale"]
    assert human["scope"] == "within_block" and human["is_simulated"]
    assert [c["k"] for c in human["curve"]] == list(range(1, 21))
    placed = {m["name"]: m for m in human["models"]}
    strong, rand = placed["strong"], placed["random"]
    assert strong["accuracy"]["ci_method"] == "block_bootstrap_percentile"
    assert 40 <= strong["accuracy"]["n_blocks"] <= 48  # blocks with at least one pair
    assert strong["k_star"]["position"] == "above_largest_panel"
    assert strong["k_star"]["k_star_min"] > 5
    assert rand["k_star"]["position"] == "below_one_panelist"
    # no resolved win over a published model (it does beat the planted reversed fit, below)
    assert _wins(res, "random") == ["ridge_SNCTI:0123abcd"]
    # the warehouse's own fit joins the context under the warehouse gold
    roles = {m["name"]: m["role"] for m in res["models"]}
    assert roles["ridge_SNCTI:0123abcd"] == "warehouse_fit" and len(roles) == 12
    fit = next(f for f in res["context"]["files"] if f["role"] == "warehouse_fit")
    assert fit["fit_id"] == "0123abcdef" and fit["sha256"] is None
    assert placed["ridge_SNCTI:0123abcd"]["accuracy"]["point"] < 0.01  # reversed (gold ties: .5)
    page = render_context_page(res)
    head = page[: page.index("<h2>")]
    assert "SIMULATED" in head  # the first lines say the human scale is simulated


# --------------------------------------------------------------------------- CLI and page


def test_cli_in_context_writes_json_and_a_self_contained_page(planted, tmp_path) -> None:
    out, page = tmp_path / "r.json", tmp_path / "page" / "ctx.html"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(planted[0]),
            "--bootstrap",
            "100",
            "--json",
            str(out),
            "--html",
            str(page),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    check_result_shape(data)
    assert data["context"]["user_models"] == ["strong"] and len(data["models"]) == 10
    assert "In context" in result.output and "k* > 5" in result.output
    text = page.read_text()
    assert text.count("src='data:image/png;base64,") == 3
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", text)  # nothing external
    assert "<script" not in text
    assert text.count("<tr class='user'>") == 2  # the summary row and the main-table row
    for section in (
        "Main table",
        "Per category",
        "On the human scale",
        "Resolved",
        "Not resolved",
        "Provenance",
    ):
        assert section in text
    assert registry.get("tastebench_oof_ridge_SNCTI_bench").sha256 in text


def test_cli_alone_keeps_todays_output(planted, tmp_path) -> None:
    out = tmp_path / "alone.json"
    result = CliRunner().invoke(
        app, ["evaluate", str(planted[0]), "--alone", "--bootstrap", "100", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [m["name"] for m in data["models"]] == ["strong"]
    assert "context" not in data and "human_scale" not in data
    result = CliRunner().invoke(
        app, ["evaluate", str(planted[0]), "--alone", "--html", str(tmp_path / "x.html")]
    )
    assert isinstance(result.exception, WarehouseError) and "--alone" in str(result.exception)


def test_file_gold_with_a_warehouse_says_why_its_fits_are_left_out(block_warehouse, planted):
    res = evaluate_in_context(
        [planted[0]], db_path=block_warehouse, settings=load_settings(), n_boot=FAST
    )
    assert res["gold"] == "file"
    assert {m["role"] for m in res["models"]} == {"user", "published"}
    assert any("fits are left out" in n for n in res["context"]["notes"])

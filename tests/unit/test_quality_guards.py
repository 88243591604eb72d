"""De-identification guards (BENCHMARK.md §7): a clean public frame passes; each planted leak
fails its rule with a message naming the table, the column and the rule."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from warehouse.quality import guards
from warehouse.quality.guards import GatedContext, GuardViolation

CATEGORIES = ("Bacon", "Burgers", "Milk", "Yogurt")
N_ANALOGS = 10
TABLE = "release/products.csv"


@pytest.fixture(scope="module")
def ctx() -> GatedContext:
    rng = np.random.default_rng(7)
    rows, cmap = [], []
    for cat in CATEGORIES:
        for code in range(1, N_ANALOGS + 2):
            analog = code <= N_ANALOGS
            mean = rng.uniform(2, 5.5) if analog else rng.uniform(5.5, 6.8)
            rows.append((cat, code, mean + rng.uniform(0, 1e-3), analog))
        perm = rng.permutation(N_ANALOGS) + 1
        cmap += [(cat, code, int(p)) for code, p in zip(range(1, N_ANALOGS + 1), perm, strict=True)]
        cmap.append((cat, N_ANALOGS + 1, N_ANALOGS + 1))
    means = pd.DataFrame(rows, columns=["category", "product_code", "panel_mean", "is_analog"])
    code_map = pd.DataFrame(cmap, columns=["category", "product_code", "public_code"])
    panelists = []
    for cat in CATEGORIES[:3]:
        for block in (0, 1):
            people = rng.choice(np.arange(1, 31), size=8, replace=False)
            order = rng.permutation(8) + 1
            panelists += [(cat, block, int(n), int(p)) for n, p in zip(order, people, strict=True)]
    panelists = pd.DataFrame(
        panelists, columns=["category", "block_id", "panelist_number", "respondent_id"]
    )
    ctx = GatedContext(
        panel_means=means,
        names=guards.brand_names(["Havtra", "Stone Bend Provisions"]),
        identifier_values={
            "upc": frozenset({guards._digits("087177842718")}),
            "join_key": frozenset({"2025_Bacon_1"}),
        },
        code_map=code_map,
        panelists=panelists,
    )
    # sanity: the fixture's own map is a valid permutation
    assert not guards._code_map_violations("map", "public_code", ctx)
    return ctx


@pytest.fixture()
def products(ctx: GatedContext) -> pd.DataFrame:
    """A clean public products table: public codes, brand-free text, a feature, released order."""
    rng = np.random.default_rng(11)
    frame = ctx.code_map[["category", "public_code"]].copy()
    frame["cleaned_ingredients"] = "Water | Pea Protein | Coconut Oil | Salt"
    frame["total_fat_g_per_100g"] = rng.uniform(1, 30, len(frame)).round(2)
    return frame.sort_values(["category", "public_code"]).reset_index(drop=True)


@pytest.fixture()
def panel_rows(ctx: GatedContext) -> pd.DataFrame:
    """A clean panelist-level table: per-block 1..n numbering, no person key."""
    p = ctx.panelists.sort_values(["category", "block_id", "panelist_number"])
    out = p[["category", "block_id", "panelist_number"]].reset_index(drop=True)
    out["pairwise_accuracy"] = np.linspace(0.3, 0.9, len(out))
    return out


def _assert_named(violations: list[GuardViolation], table: str, column: str, rule: str) -> str:
    hits = [v for v in violations if v.rule == rule and v.column == column and v.table == table]
    assert hits, f"no {rule} violation on {table}.{column}: {[v.message for v in violations]}"
    msg = hits[0].message
    assert f"table {table}" in msg and f"column {column}" in msg and f"rule {rule}" in msg
    return msg


def _raw_codes(frame: pd.DataFrame, ctx: GatedContext) -> pd.Series:
    m = frame.merge(ctx.code_map, on=["category", "public_code"], how="left")
    return m["product_code"]


def _panel_mean(frame: pd.DataFrame, ctx: GatedContext) -> pd.Series:
    m = frame.merge(ctx.code_map, on=["category", "public_code"], how="left")
    return m.merge(ctx.panel_means, on=["category", "product_code"], how="left")["panel_mean"]


# --- clean inputs pass ------------------------------------------------------------------------
def test_clean_public_tables_pass_every_rule(ctx, products, panel_rows) -> None:
    assert guards.guard_frame(TABLE, products, ctx) == []
    assert guards.guard_frame("release/panelists.csv", panel_rows, ctx) == []
    assert guards.guard_frames({TABLE: products, "release/panelists.csv": panel_rows}, ctx) == []


# --- one planted leak per rule ----------------------------------------------------------------
def test_forbidden_column_name(ctx, products) -> None:
    leaked = products.assign(Brand="Havtra", product_code=_raw_codes(products, ctx).to_numpy())
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["forbidden_column_name"])
    assert "a brand" in _assert_named(v, TABLE, "Brand", "forbidden_column_name")
    assert "raw product code" in _assert_named(v, TABLE, "product_code", "forbidden_column_name")
    counts = products.assign(n_respondents=30)  # counts are fine
    assert guards.guard_frame(TABLE, counts, ctx, rules=["forbidden_column_name"]) == []


def test_gated_identifier_values(ctx, products) -> None:
    leaked = products.assign(sku="0" + "87177842718", note="ref 2025_Bacon_1")
    leaked.loc[0, "note"] = "2025_Bacon_1"
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["gated_identifier_values"])
    assert "UPC" in _assert_named(v, TABLE, "sku", "gated_identifier_values")
    assert "join_key" in _assert_named(v, TABLE, "note", "gated_identifier_values")


def test_panel_mean_shape_renamed_column(ctx, products) -> None:
    leaked = products.assign(score=_panel_mean(products, ctx).to_numpy())
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["panel_mean_shape"])
    assert "joined on the product key" in _assert_named(v, TABLE, "score", "panel_mean_shape")


def test_panel_mean_shape_rescaled_and_unkeyed(ctx, products) -> None:
    rescaled = products.assign(similarity01=(_panel_mean(products, ctx).to_numpy() - 1) / 6)
    rescaled = rescaled.rename(columns={"similarity01": "x01"})
    v = guards.guard_frame(TABLE, rescaled, ctx, rules=["panel_mean_shape"])
    assert "rescaled" in _assert_named(v, TABLE, "x01", "panel_mean_shape")
    # no product key at all: sorted-value matching against the gated means
    values = ctx.panel_means["panel_mean"].sample(frac=1, random_state=3).round(6)
    unkeyed = pd.DataFrame({"value": values.to_numpy()})
    v = guards.guard_frame("release/values.csv", unkeyed, ctx, rules=["panel_mean_shape"])
    assert "sorted-value" in _assert_named(v, "release/values.csv", "value", "panel_mean_shape")


def test_brand_in_text(ctx, products) -> None:
    leaked = products.copy()
    leaked.loc[3, "cleaned_ingredients"] = "havtra plant-based bacon blend (Water, Salt) | Oil"
    leaked.loc[5, "cleaned_ingredients"] = "Water | STONE BEND seasoning"
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["brand_in_text"])
    msg = _assert_named(v, TABLE, "cleaned_ingredients", "brand_in_text")
    assert "2 row(s)" in msg
    # token boundaries: a longer word that contains the name is not a hit
    near = products.assign(cleaned_ingredients="Havtrax | Stonebend")
    assert guards.guard_frame(TABLE, near, ctx, rules=["brand_in_text"]) == []


def test_public_codes_equal_to_raw_codes(ctx, products) -> None:
    identity = ctx.code_map.assign(public_code=ctx.code_map["product_code"])
    bad = ctx.with_code_map(identity)
    v = guards.guard_frame(TABLE, products, bad, rules=["public_code_permutation"])
    assert "equal the raw codes" in _assert_named(
        v, TABLE, "public_code", "public_code_permutation"
    )


def test_public_codes_correlated_with_target(ctx, products) -> None:
    means = ctx.panel_means[ctx.panel_means["is_analog"]]
    ranked = means.assign(public_code=means.groupby("category")["panel_mean"].rank().astype(int))
    refs = ctx.code_map[ctx.code_map["public_code"] > N_ANALOGS]
    cmap = pd.concat([ranked[["category", "product_code", "public_code"]], refs])
    bad = ctx.with_code_map(cmap)
    v = guards.guard_frame(TABLE, products, bad, rules=["public_code_permutation"])
    msg = _assert_named(v, TABLE, "public_code", "public_code_permutation")
    assert "correlate with the target" in msg


def test_public_codes_without_a_map_cannot_pass(ctx, products) -> None:
    v = guards.guard_frame(TABLE, products, ctx.with_code_map(None), ["public_code_permutation"])
    assert "no gated code map" in _assert_named(v, TABLE, "public_code", "public_code_permutation")


def test_code_map_written_into_public_folder(ctx, products, tmp_path: Path) -> None:
    leaked = ctx.code_map.rename(columns={"product_code": "old", "public_code": "new"})
    v = guards.guard_frames({TABLE: products, "release/lookup.csv": leaked}, ctx)
    _assert_named(v, "release/lookup.csv", "old, new", "code_map_in_public")
    # and by file name in a release folder
    products.to_csv(tmp_path / "products.csv", index=False)
    (tmp_path / "gated_code_map.txt").write_text("nothing tabular\n")
    v = guards.guard_release_dir(tmp_path, ctx)
    _assert_named(v, "gated_code_map.txt", "(file name)", "code_map_in_public")


def test_row_order_follows_hidden_panel_mean(ctx, products) -> None:
    leaked = products.assign(_pm=_panel_mean(products, ctx).to_numpy())
    leaked = leaked.sort_values(["category", "_pm"]).drop(columns="_pm").reset_index(drop=True)
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["row_order_hidden_id"])
    assert "panel mean" in _assert_named(v, TABLE, "(row order)", "row_order_hidden_id")


def test_row_order_follows_raw_code(ctx, products) -> None:
    leaked = products.assign(_raw=_raw_codes(products, ctx).to_numpy())
    leaked = leaked.sort_values(["category", "_raw"]).drop(columns="_raw").reset_index(drop=True)
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["row_order_hidden_id"])
    assert "raw product code" in _assert_named(v, TABLE, "(row order)", "row_order_hidden_id")


def test_cross_block_panelist_key(ctx, panel_rows) -> None:
    people = panel_rows.merge(ctx.panelists, on=["category", "block_id", "panelist_number"])
    leaked = panel_rows.assign(
        panelist_hash=people["respondent_id"].map(
            lambda r: hashlib.sha256(str(r).encode()).hexdigest()[:10]
        )
    )
    table = "release/panelists.csv"
    v = guards.guard_frame(table, leaked, ctx, rules=["cross_block_panelist_key"])
    assert "across blocks" in _assert_named(v, table, "panelist_hash", "cross_block_panelist_key")
    # without the gated panelist map: a person-like key that recurs across blocks
    v = guards.guard_frame(
        table, leaked, ctx_without_panelists(ctx), rules=["cross_block_panelist_key"]
    )
    _assert_named(v, table, "panelist_hash", "cross_block_panelist_key")


def test_cross_block_rare_count_links_one_person(ctx, panel_rows) -> None:
    """A quasi-identifier (e.g. n_categories_rated) whose rare value is one person in 2 blocks."""
    people = panel_rows.merge(ctx.panelists, on=["category", "block_id", "panelist_number"])
    counts = people.groupby("respondent_id")["category"].transform("size")
    multi = people.loc[counts >= 2, "respondent_id"]
    assert len(multi), "fixture needs a respondent in two blocks"
    target = multi.iloc[0]
    leaked = panel_rows.assign(n_categories_rated=np.where(people["respondent_id"] == target, 9, 1))
    table = "release/panelists.csv"
    v = guards.guard_frame(table, leaked, ctx, rules=["cross_block_panelist_key"])
    msg = _assert_named(v, table, "n_categories_rated", "cross_block_panelist_key")
    assert "one panelist" in msg


def test_feature_and_target_tables_join(ctx, products) -> None:
    pairs = pd.DataFrame(
        {
            "category": ["Bacon", "Bacon", "Milk"],
            "public_code_a": [1, 2, 3],
            "public_code_b": [4, 5, 6],
            "public_code_winner": [4, 2, 3],
        }
    )
    v = guards.guard_frames({TABLE: products, "release/pairs.csv": pairs}, ctx)
    msg = _assert_named(v, "release/pairs.csv", "public_code_a", "feature_target_join")
    assert TABLE in msg
    # labels withheld: no target column, no leak
    unlabeled = pairs.drop(columns="public_code_winner")
    assert guards.check_feature_target_join({TABLE: products, "p.csv": unlabeled}) == []


# --- release folders and helpers --------------------------------------------------------------
def ctx_without_panelists(ctx: GatedContext) -> GatedContext:
    import dataclasses

    return dataclasses.replace(ctx, panelists=None)


def test_release_dir_clean_and_text_files(ctx, products, tmp_path: Path) -> None:
    products.to_csv(tmp_path / "products.csv", index=False)
    (tmp_path / "README.md").write_text("# Release\nPlant-based products, public codes only.\n")
    assert guards.guard_release_dir(tmp_path, ctx) == []
    (tmp_path / "README.md").write_text("# Release\nIncludes the Havtra bacon.\n")
    v = guards.guard_release_dir(tmp_path, ctx)
    _assert_named(v, "README.md", "(file text)", "brand_in_text")
    with pytest.raises(guards.GuardError, match="README.md"):
        guards.raise_for_violations(v)


def test_redact_names_rewrites_branded_blends() -> None:
    names = guards.brand_names(["Havtra", "Stone Bend Provisions"])
    assert "Stone Bend" in names
    text = pd.Series(["Havtra Plant-Based Bacon Blend (Water) | Salt", "Stone Bend's Oil", None])
    out = guards.redact_names(text, names)
    assert out.iloc[0] == "Plant-Based Bacon Blend (Water) | Salt"
    assert out.iloc[1] == "Oil" and pd.isna(out.iloc[2])


def test_draw_public_codes_is_a_per_category_permutation(ctx) -> None:
    products = ctx.panel_means[["category", "product_code", "is_analog"]]
    cmap = guards.draw_public_codes(products, ctx)
    merged = cmap.merge(products, on=["category", "product_code"])
    for _, g in merged.groupby("category"):
        n = int(g["is_analog"].sum())
        assert sorted(g.loc[g["is_analog"], "public_code"]) == list(range(1, n + 1))
        assert (g.loc[~g["is_analog"], "public_code"] > n).all()
    assert not guards._code_map_violations("m", "public_code", ctx.with_code_map(cmap))


def test_pooled_spearman_detects_order_not_noise() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(6), 10)
    x = np.tile(np.arange(10.0), 6)
    rho, z, n = guards.pooled_spearman(x, x + rng.normal(0, 0.1, 60), groups)
    assert rho > 0.9 and z > guards.Z_CRIT and n == 60
    rho, z, _ = guards.pooled_spearman(x, rng.normal(size=60), groups)
    assert abs(rho) < guards.RHO_TOL or abs(z) < guards.Z_CRIT

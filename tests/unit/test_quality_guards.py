"""De-identification guards (docs/benchmark.md §7): a clean public frame passes; each planted leak
fails its rule with a message naming the table, the rows, the column and the rule, and never the
gated value."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from warehouse.quality import guards
from warehouse.quality.guards import GatedContext, GuardViolation
from warehouse.quality.identifiers import fingerprint

CATEGORIES = ("Bacon", "Burgers", "Milk", "Yogurt")
N_ANALOGS = 10
TABLE = "release/products.csv"
UPC = "087177842718"
BRANDS = ["Havtra", "Stone Bend Provisions", "Ben & Jerry's", "Crème Verte", "Zo"]


@pytest.fixture(scope="module")
def ctx() -> GatedContext:
    rng = np.random.default_rng(7)
    rows, cmap = [], []
    for cat in CATEGORIES:
        for code in range(1, N_ANALOGS + 2):
            analog = code <= N_ANALOGS
            mean = rng.uniform(2, 5.5) if analog else rng.uniform(5.5, 6.8)
            rows.append((cat, code, mean + rng.uniform(0, 1e-3), analog, int(rng.integers(20, 90))))
        perm = rng.permutation(N_ANALOGS) + 1
        cmap += [(cat, code, int(p)) for code, p in zip(range(1, N_ANALOGS + 1), perm, strict=True)]
        cmap.append((cat, N_ANALOGS + 1, N_ANALOGS + 1))
    means = pl.DataFrame(
        rows,
        schema=["category", "product_code", "panel_mean", "is_analog", "n_ratings"],
        orient="row",
    )
    code_map = pl.DataFrame(cmap, schema=["category", "product_code", "public_code"], orient="row")
    panelists = []
    for cat in CATEGORIES[:3]:
        for block in (0, 1):
            people = rng.choice(np.arange(1, 31), size=8, replace=False)
            order = rng.permutation(8) + 1
            panelists += [(cat, block, int(n), int(p)) for n, p in zip(order, people, strict=True)]
    panelists = pl.DataFrame(
        panelists,
        schema=["category", "block_id", "panelist_number", "respondent_id"],
        orient="row",
    )
    ctx = GatedContext(
        panel_means=means,
        names=guards.brand_names(BRANDS),
        identifier_values={"upc": frozenset({UPC}), "join_key": frozenset({"2025_Bacon_1"})},
        code_map=code_map,
        panelists=panelists,
        known_brands=guards.brand_names(["Beyond Meat", "Oatly"]),
    )
    # sanity: the fixture's own map is a valid permutation
    assert not guards.code_map_violations("map", "public_code", ctx)
    return ctx


@pytest.fixture()
def products(ctx: GatedContext) -> pl.DataFrame:
    """A clean public products table: public codes, brand-free text, a feature, released order."""
    rng = np.random.default_rng(11)
    frame = ctx.code_map.select("category", "public_code")
    frame = frame.with_columns(
        cleaned_ingredients=pl.lit("Water | Pea Protein | Coconut Oil | Salt"),
        total_fat_g_per_100g=pl.Series(rng.uniform(1, 30, len(frame)).round(2)),
    )
    return frame.sort("category", "public_code")


@pytest.fixture()
def panel_rows(ctx: GatedContext) -> pl.DataFrame:
    """A clean panelist-level table: per-block 1..n numbering, no person key."""
    p = ctx.panelists.sort("category", "block_id", "panelist_number")
    out = p.select("category", "block_id", "panelist_number")
    return out.with_columns(pairwise_accuracy=pl.Series(np.linspace(0.3, 0.9, len(out))))


def _assert_named(violations: list[GuardViolation], table: str, column: str, rule: str) -> str:
    hits = [v for v in violations if v.rule == rule and v.column == column and v.table == table]
    assert hits, f"no {rule} violation on {table}.{column}: {[v.message for v in violations]}"
    msg = hits[0].message
    assert f"table {table}" in msg and f"column {column}" in msg and f"rule {rule}" in msg
    return msg


def _joined(frame: pl.DataFrame, ctx: GatedContext) -> pl.DataFrame:
    m = frame.with_row_index("_r").join(ctx.code_map, on=["category", "public_code"], how="left")
    return m.join(ctx.panel_means, on=["category", "product_code"], how="left").sort("_r")


def _raw_codes(frame: pl.DataFrame, ctx: GatedContext) -> pl.Series:
    return _joined(frame, ctx)["product_code"]


def _panel_mean(frame: pl.DataFrame, ctx: GatedContext) -> np.ndarray:
    return _joined(frame, ctx)["panel_mean"].to_numpy()


# --- clean inputs pass ------------------------------------------------------------------------
def test_clean_public_tables_pass_every_rule(ctx, products, panel_rows) -> None:
    assert guards.guard_frame(TABLE, products, ctx) == []
    assert guards.guard_frame("release/panelists.csv", panel_rows, ctx) == []
    assert guards.guard_frames({TABLE: products, "release/panelists.csv": panel_rows}, ctx) == []


def test_pandas_frames_are_converted_at_the_boundary(ctx, products) -> None:
    assert guards.guard_frame(TABLE, products.to_pandas(), ctx) == []


# --- one planted leak per rule ----------------------------------------------------------------
def test_forbidden_column_name(ctx, products) -> None:
    leaked = products.with_columns(Brand=pl.lit("Havtra"), product_code=_raw_codes(products, ctx))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["forbidden_column_name"])
    assert "a brand" in _assert_named(v, TABLE, "Brand", "forbidden_column_name")
    assert "raw product code" in _assert_named(v, TABLE, "product_code", "forbidden_column_name")
    counts = products.with_columns(n_respondents=pl.lit(30))  # counts are fine
    assert guards.guard_frame(TABLE, counts, ctx, rules=["forbidden_column_name"]) == []


def test_gated_identifier_values_name_rows_and_never_the_value(ctx, products) -> None:
    note = ["ok"] * len(products)
    note[0], note[4] = "2025_Bacon_1", "ref 2025-bacon-1 kept"
    sku = ["x"] * len(products)
    sku[2] = "0 87177 84271 8"  # with separators
    sku[6] = "UPC 8717784271"  # without the check digit, leading zero dropped
    leaked = products.with_columns(sku=pl.Series(sku), note=pl.Series(note))
    leaked = leaked.with_columns(barcode_number=pl.lit(87177842718, dtype=pl.Int64))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["gated_identifier_values"])
    msg = _assert_named(v, TABLE, "sku", "gated_identifier_values")
    assert "rows 3, 7" in msg and "UPC" in msg
    assert "rows 1, 5" in _assert_named(v, TABLE, "note", "gated_identifier_values")
    _assert_named(v, TABLE, "barcode_number", "gated_identifier_values")
    text = " ".join(x.message for x in v)
    assert "87177" not in text and "2025_Bacon_1" not in text and "2025-bacon" not in text
    assert fingerprint("87177842718") in text


def test_panel_mean_shape_renamed_column(ctx, products) -> None:
    leaked = products.with_columns(score=pl.Series(_panel_mean(products, ctx)))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["panel_mean_shape"])
    msg = _assert_named(v, TABLE, "score", "panel_mean_shape")
    assert "joined on the product key" in msg
    assert f"{_panel_mean(products, ctx)[0]:.4f}"[:5] not in msg  # no value quoted


def test_panel_mean_shape_rescaled_and_unkeyed(ctx, products) -> None:
    rescaled = products.with_columns(x01=pl.Series((_panel_mean(products, ctx) - 1) / 6))
    v = guards.guard_frame(TABLE, rescaled, ctx, rules=["panel_mean_shape"])
    assert "rescaled" in _assert_named(v, TABLE, "x01", "panel_mean_shape")
    # no product key at all: sorted-value matching against the gated means
    values = ctx.panel_means["panel_mean"].sample(fraction=1, shuffle=True, seed=3).round(6)
    unkeyed = pl.DataFrame({"value": values})
    v = guards.guard_frame("release/values.csv", unkeyed, ctx, rules=["panel_mean_shape"])
    assert "sorted-value" in _assert_named(v, "release/values.csv", "value", "panel_mean_shape")


def test_target_near_copy_with_noise(ctx, products) -> None:
    """The adversary's column: panel mean + small noise (r ~ .9998) under a feature-like name."""
    pm = _panel_mean(products, ctx)
    noise = np.random.default_rng(5).normal(0, 0.02, len(pm))
    leaked = products.with_columns(protein_g=pl.Series(np.round(pm + noise, 3)))
    assert guards.guard_frame(TABLE, leaked, ctx, rules=["panel_mean_shape"]) == []
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["target_near_copy"])
    assert "near-copy" in _assert_named(v, TABLE, "protein_g", "target_near_copy")
    # correlated (.99 <= r < .9999) but not close: an affine copy with more noise
    affine = products.with_columns(score=pl.Series(40 * pm + 3 + 40 * 4 * noise))
    v = guards.guard_frame(TABLE, affine, ctx, rules=["target_near_copy"])
    assert "Pearson r" in _assert_named(v, TABLE, "score", "target_near_copy")


def test_target_near_copy_rating_sums(ctx, products) -> None:
    """Per-product rating sums: the mean once divided by the number of ratings."""
    j = _joined(products, ctx)
    sums = np.round(j["panel_mean"].to_numpy() * j["n_ratings"].to_numpy())
    leaked = products.with_columns(potassium_mg=pl.Series(sums))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["panel_mean_shape", "target_near_copy"])
    msg = _assert_named(v, TABLE, "potassium_mg", "target_near_copy")
    assert "number of ratings" in msg
    # and divided by a published count column of the same table
    leaked = leaked.with_columns(n_tasters=j["n_ratings"].cast(pl.Int64))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["target_near_copy"])
    assert "potassium_mg" in {x.column for x in v}


def test_target_near_copy_on_pairs(ctx) -> None:
    cmap = ctx.code_map.filter(pl.col("public_code") <= N_ANALOGS)
    pairs = cmap.join(cmap, on="category", suffix="_2").filter(
        pl.col("public_code") < pl.col("public_code_2")
    )
    pairs = pairs.rename({"public_code": "public_code_1"}).sort("category", "public_code_1")
    means = ctx.panel_means.select("category", "product_code", "panel_mean")
    d = (
        pairs.join(means, on=["category", "product_code"])
        .join(means, left_on=["category", "product_code_2"], right_on=["category", "product_code"])
        .select((pl.col("panel_mean") - pl.col("panel_mean_right")).abs().round(4))
    )
    frame = pairs.select("category", "public_code_1", "public_code_2").with_columns(
        margin=d.to_series()
    )
    v = guards.guard_frame("release/pairs.csv", frame, ctx, rules=["target_near_copy"])
    msg = _assert_named(v, "release/pairs.csv", "margin", "target_near_copy")
    assert "delta panel mean" in msg
    clean = frame.with_columns(margin=pl.Series(np.random.default_rng(1).uniform(0, 2, len(frame))))
    assert guards.guard_frame("p.csv", clean, ctx, rules=["target_near_copy"]) == []


def test_brand_in_text_variants_and_seed(ctx, products) -> None:
    text = ["Water | Salt"] * len(products)
    text[3] = "havtra plant-based bacon blend (Water, Salt) | Oil"
    text[5] = "Water | STONE-BEND seasoning"
    text[7] = "Ben and Jerrys Oat Base"
    text[9] = "Creme Verte Cashew | Salt"
    text[11] = "Hav\u00adtra Blend"
    text[13] = "Zo Burger"
    text[15] = "Beyond\u200b Meat Patty"  # a seed brand the bundle does not list
    leaked = products.with_columns(cleaned_ingredients=pl.Series(text))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["brand_in_text"])
    msg = _assert_named(v, TABLE, "cleaned_ingredients", "brand_in_text")
    assert "rows 4, 6, 8, 10, 12 (+2 more)" in msg
    assert "known brand" in msg and "bundle brand" in msg
    for name in ("havtra", "stone", "jerry", "creme", "beyond", "zo burger"):
        assert name not in msg.lower()
    # token boundaries: a longer word that contains the name is not a hit
    near = products.with_columns(cleaned_ingredients=pl.lit("Havtrax | Zoom | Stonebending"))
    assert guards.guard_frame(TABLE, near, ctx, rules=["brand_in_text"]) == []


def test_brand_in_unicode_disguise(ctx, products) -> None:
    """Confusables, a filler inside the word, an override around the reversed brand, tag
    spelling: each found, and redaction removes it."""
    tags = "".join(chr(0xE0000 + ord(c)) for c in "Havtra")
    disguises = ["H\u0430vtr\u0430 Blend", "Hav\u3164tra Blend", "\u202eartvaH\u202c Blend",
                 f"Blend{tags}", "\u0397\u0391VTRA Blend", "ʜᴀᴠᴛʀᴀ Blend"]  # fmt: skip
    text = ["Water | Salt"] * len(products)
    for i, d in enumerate(disguises):
        text[2 * i] = d
    leaked = products.with_columns(cleaned_ingredients=pl.Series(text))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["brand_in_text"])
    assert "rows 1, 3, 5, 7, 9 (+1 more)" in _assert_named(
        v, TABLE, "cleaned_ingredients", "brand_in_text"
    )
    assert [ctx.redact([d])[0] for d in disguises] == ["Blend"] * len(disguises)


def test_unreadable_text_names_product_column_and_code_point(ctx, products, tmp_path) -> None:
    text = ["Water | Salt"] * len(products)
    text[2] = "Pea Prot\u0435in | Salt"  # Cyrillic е inside a Latin word
    text[4] = "Water\u200b | Salt"
    leaked = products.with_columns(cleaned_ingredients=pl.Series(text))
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["unreadable_text"])
    msg = _assert_named(v, TABLE, "cleaned_ingredients", "unreadable_text")
    row = leaked.row(2, named=True)
    assert "rows 3, 5" in msg
    assert f"row 3 (category {row['category']}, public_code {row['public_code']})" in msg
    assert "U+0435 CYRILLIC SMALL LETTER IE (a mixed-script word)" in msg
    assert "U+200B ZERO WIDTH SPACE (an invisible character)" in msg
    assert guards.guard_frame(TABLE, products, ctx, rules=["unreadable_text"]) == []
    products.write_csv(tmp_path / "products.csv")
    (tmp_path / "README.md").write_text("# Release\nPublic codes only\u2066.\n")
    v = guards.guard_release_dir(tmp_path, ctx)
    assert "U+2066 LEFT-TO-RIGHT ISOLATE" in _assert_named(
        v, "README.md", "(file text)", "unreadable_text"
    )


def test_public_codes_equal_to_raw_codes(ctx, products) -> None:
    identity = ctx.code_map.with_columns(public_code=pl.col("product_code"))
    bad = ctx.with_code_map(identity)
    v = guards.guard_frame(TABLE, products, bad, rules=["public_code_permutation"])
    assert "equal the raw codes" in _assert_named(
        v, TABLE, "public_code", "public_code_permutation"
    )


def test_public_codes_correlated_with_target(ctx, products) -> None:
    means = ctx.panel_means.filter(pl.col("is_analog"))
    ranked = means.with_columns(
        public_code=pl.col("panel_mean").rank("ordinal").over("category").cast(pl.Int64)
    ).select("category", "product_code", "public_code")
    refs = ctx.code_map.filter(pl.col("public_code") > N_ANALOGS)
    cmap = pl.concat([ranked, refs.select(ranked.columns)], how="vertical_relaxed")
    bad = ctx.with_code_map(cmap)
    v = guards.guard_frame(TABLE, products, bad, rules=["public_code_permutation"])
    msg = _assert_named(v, TABLE, "public_code", "public_code_permutation")
    assert "correlate with the target" in msg


def test_public_codes_without_a_map_cannot_pass(ctx, products) -> None:
    v = guards.guard_frame(TABLE, products, ctx.with_code_map(None), ["public_code_permutation"])
    assert "no gated code map" in _assert_named(v, TABLE, "public_code", "public_code_permutation")


def test_code_map_written_into_public_folder(ctx, products, tmp_path: Path) -> None:
    leaked = ctx.code_map.rename({"product_code": "old", "public_code": "new"})
    v = guards.guard_frames({TABLE: products, "release/lookup.csv": leaked}, ctx)
    _assert_named(v, "release/lookup.csv", "old, new", "code_map_in_public")
    # and by file name in a release folder
    products.write_csv(tmp_path / "products.csv")
    (tmp_path / "gated_code_map.txt").write_text("nothing tabular\n")
    v = guards.guard_release_dir(tmp_path, ctx)
    _assert_named(v, "gated_code_map.txt", "(file name)", "code_map_in_public")


def test_row_order_follows_hidden_panel_mean(ctx, products) -> None:
    leaked = products.with_columns(_pm=pl.Series(_panel_mean(products, ctx)))
    leaked = leaked.sort("category", "_pm").drop("_pm")
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["row_order_hidden_id"])
    assert "panel mean" in _assert_named(v, TABLE, "(row order)", "row_order_hidden_id")


def test_row_order_follows_raw_code(ctx, products) -> None:
    leaked = products.with_columns(_raw=_raw_codes(products, ctx))
    leaked = leaked.sort("category", "_raw").drop("_raw")
    v = guards.guard_frame(TABLE, leaked, ctx, rules=["row_order_hidden_id"])
    assert "raw product code" in _assert_named(v, TABLE, "(row order)", "row_order_hidden_id")


def test_cross_block_panelist_key(ctx, panel_rows) -> None:
    people = panel_rows.join(ctx.panelists, on=["category", "block_id", "panelist_number"])
    leaked = panel_rows.with_columns(
        panelist_hash=people["respondent_id"].map_elements(
            lambda r: hashlib.sha256(str(r).encode()).hexdigest()[:10], return_dtype=pl.String
        )
    )
    table = "release/panelists.csv"
    v = guards.guard_frame(table, leaked, ctx, rules=["cross_block_panelist_key"])
    msg = _assert_named(v, table, "panelist_hash", "cross_block_panelist_key")
    assert "across blocks" in msg and "row" in msg
    assert not any(h in msg for h in leaked["panelist_hash"].to_list())  # no key quoted
    # without the gated panelist map: a person-like key that recurs across blocks
    v = guards.guard_frame(
        table, leaked, dataclasses.replace(ctx, panelists=None), rules=["cross_block_panelist_key"]
    )
    _assert_named(v, table, "panelist_hash", "cross_block_panelist_key")


def test_cross_block_rare_count_links_one_person(ctx, panel_rows) -> None:
    """A quasi-identifier (e.g. n_categories_rated) whose rare value is one person in 2 blocks."""
    people = panel_rows.join(ctx.panelists, on=["category", "block_id", "panelist_number"])
    counts = people.group_by("respondent_id").len().filter(pl.col("len") >= 2)
    assert len(counts), "fixture needs a respondent in two blocks"
    target = counts.sort("respondent_id")["respondent_id"][0]
    leaked = panel_rows.with_columns(
        n_categories_rated=pl.when(people["respondent_id"] == target).then(9).otherwise(1)
    )
    table = "release/panelists.csv"
    v = guards.guard_frame(table, leaked, ctx, rules=["cross_block_panelist_key"])
    msg = _assert_named(v, table, "n_categories_rated", "cross_block_panelist_key")
    assert "one panelist" in msg


def test_feature_and_target_tables_join(ctx, products) -> None:
    pairs = pl.DataFrame(
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
    # labels withheld: no target, no leak
    unlabeled = pairs.drop("public_code_winner")
    assert guards.check_feature_target_join({TABLE: products, "p.csv": unlabeled}) == []


# --- cross-file linkage -------------------------------------------------------------------------
def _ranked(ctx: GatedContext) -> pl.DataFrame:
    """This release's products (public codes, true_rank) and the same gold keyed by another code
    space (here: the raw codes, as on the simulation)."""
    j = _joined(ctx.code_map.select("category", "public_code"), ctx).filter(pl.col("is_analog"))
    return j.with_columns(true_rank=pl.col("panel_mean").rank("average").over("category"))


def test_linkage_on_shared_rank_links_two_code_spaces(ctx) -> None:
    r = _ranked(ctx)
    ours = r.select("category", "public_code", "true_rank").sort("category", "public_code")
    theirs = r.select(
        "category", pl.col("product_code").alias("tastebench_public_code"), "true_rank",
        predicted_score=pl.col("panel_mean") * 0 + np.random.default_rng(2).normal(size=len(r)),
    ).sort("category", "tastebench_public_code")  # fmt: skip
    frames = {"benchmark/products.csv": ours, "tastebench_public_oof/m.csv": theirs}
    for frame_name, frame in frames.items():  # each file passes on its own
        assert guards.guard_frame(frame_name, frame, ctx, rules=["forbidden_column_name"]) == []
    v = guards.check_linkage(frames, ctx)
    msg = _assert_named(v, "benchmark/products.csv", "public_code", "cross_file_linkage")
    assert "(category, true_rank)" in msg and "tastebench_public_code" in msg
    assert "reproduce 100% of the gated code map" in msg
    # without the rank, nothing links the two spaces
    frames["tastebench_public_oof/m.csv"] = theirs.drop("true_rank")
    assert guards.check_linkage(frames, ctx) == []


def test_linkage_puts_the_target_next_to_codes(ctx) -> None:
    r = _ranked(ctx)
    ours = r.select("category", "public_code", "true_rank")
    side = r.select("category", "true_rank", pl.col("panel_mean").round(2).alias("score"))
    v = guards.check_linkage({"a/products.csv": ours, "b/scores.csv": side}, ctx)
    msg = _assert_named(v, "a/products.csv", "public_code", "cross_file_linkage")
    assert "b/scores.csv's column score" in msg


def test_linkage_ignores_same_space_and_pair_ids(ctx) -> None:
    r = _ranked(ctx)
    ours = r.select("category", "public_code", "true_rank")
    fit = ours.with_columns(predicted_score=pl.Series(np.linspace(0, 1, len(ours))))
    assert guards.check_linkage({"products.csv": ours, "oof/fit.csv": fit}, ctx) == []


# --- release folders and helpers --------------------------------------------------------------
def test_release_dir_clean_and_text_files(ctx, products, tmp_path: Path) -> None:
    products.write_csv(tmp_path / "products.csv")
    products.write_parquet(tmp_path / "products.parquet")
    (tmp_path / "README.md").write_text("# Release\nPlant-based products, public codes only.\n")
    assert guards.guard_release_dir(tmp_path, ctx) == []
    (tmp_path / "README.md").write_text(
        "# Release\n\nIncludes the Havtra bacon, UPC 0-87177-84271-8.\n"
    )
    v = guards.guard_release_dir(tmp_path, ctx)
    assert "row 3" in _assert_named(v, "README.md", "(file text)", "brand_in_text")
    _assert_named(v, "README.md", "(file text)", "gated_identifier_values")
    with pytest.raises(guards.GuardError, match="README.md") as exc:
        guards.raise_for_violations(v)
    assert "Havtra" not in str(exc.value) and "87177" not in str(exc.value)


def test_redact_names_rewrites_branded_blends(ctx) -> None:
    names = guards.brand_names(["Havtra", "Stone Bend Provisions"])
    assert "Stone Bend" in names
    text = pl.Series(["Havtra Plant-Based Bacon Blend (Water) | Salt", "Stone Bend's Oil", None])
    out = guards.redact_names(text, names)
    assert out[0] == "Plant-Based Bacon Blend (Water) | Salt"
    assert out[1] == "Oil" and out[2] is None
    # the context's matcher also removes variants, seed brands and identifiers
    out = guards.redact_names(
        pl.Series(["Hav\u00adtra’s Blend, UPC 087177/842718 | BEYOND-MEAT patty"]), ctx
    )
    assert out[0] == "Blend, UPC | patty"


def test_draw_public_codes_is_a_per_category_permutation(ctx) -> None:
    products = ctx.panel_means.select("category", "product_code", "is_analog")
    cmap = guards.draw_public_codes(products, ctx)
    merged = cmap.join(products, on=["category", "product_code"])
    for (_,), g in merged.group_by("category"):
        n = int(g["is_analog"].sum())
        assert sorted(g.filter(pl.col("is_analog"))["public_code"]) == list(range(1, n + 1))
        assert (g.filter(~pl.col("is_analog"))["public_code"] > n).all()
    assert not guards.code_map_violations("m", "public_code", ctx.with_code_map(cmap))


def test_pooled_spearman_detects_order_not_noise() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(6), 10)
    x = np.tile(np.arange(10.0), 6)
    rho, z, n = guards.pooled_spearman(x, x + rng.normal(0, 0.1, 60), groups)
    assert rho > 0.9 and z > guards.Z_CRIT and n == 60
    rho, z, _ = guards.pooled_spearman(x, rng.normal(size=60), groups)
    assert abs(rho) < guards.RHO_TOL or abs(z) < guards.Z_CRIT


def test_pooled_spearman_equals_scipy_group_by_group() -> None:
    """The grouped query against scipy's Spearman per group (ties, NaN rows, groups under
    MIN_GROUP rows and constant groups skipped), pooled by hand, on 300 random inputs."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(42)
    for trial in range(300):
        m = int(rng.integers(0, 90))
        groups = rng.integers(0, int(rng.integers(1, 10)), m)
        x = rng.integers(0, 5, m).astype(float) if trial % 2 else rng.normal(size=m)
        y = rng.integers(0, 3, m).astype(float) if trial % 3 == 0 else rng.normal(size=m)
        x[rng.random(m) < 0.1] = np.nan
        rhos, ns = [], []
        for g in dict.fromkeys(groups.tolist()):
            keep = (groups == g) & ~np.isnan(x) & ~np.isnan(y)
            if keep.sum() < guards.MIN_GROUP or len(set(x[keep])) < 2 or len(set(y[keep])) < 2:
                continue
            rhos.append(spearmanr(x[keep], y[keep]).statistic)
            ns.append(keep.sum())
        rho, z, n = guards.pooled_spearman(x, y, groups)
        assert n == sum(ns), trial
        if ns:
            r, w = np.array(rhos), np.array(ns, dtype=float)
            assert rho == pytest.approx((r * w).sum() / w.sum(), abs=1e-12), trial
            assert z == pytest.approx((r * np.sqrt(w - 1)).sum() / np.sqrt(len(r)), abs=1e-12)
        else:
            assert (rho, z) == (0.0, 0.0)


def test_release_dir_duckdb_file_is_guarded_table_by_table(ctx, products, tmp_path: Path) -> None:
    """A DuckDB file in a release folder: its twin of a CSV passes; a table planted in it (the
    panel means under a harmless name, or the code map) fails the gate naming the file and
    table; a file that is not DuckDB is an error, not a pass."""
    import duckdb

    products.write_csv(tmp_path / "products.csv")
    db = tmp_path / "public.duckdb"
    con = duckdb.connect(str(db))
    con.register("products_frame", products.to_arrow())
    con.execute("create table main.products as select * from products_frame")
    con.close()
    assert guards.guard_release_dir(tmp_path, ctx) == []
    con = duckdb.connect(str(db))
    leak = products.select("category", "public_code").with_columns(
        score=pl.Series(_panel_mean(products, ctx)).round(4)
    )
    con.register("leak_frame", leak.to_arrow())
    con.execute("create schema extra")
    con.execute("create table extra.scores as select * from leak_frame")
    con.execute("create view extra.codemap as select category, public_code from extra.scores")
    con.close()
    v = guards.guard_release_dir(tmp_path, ctx)
    _assert_named(v, "public.duckdb:extra.scores", "score", "panel_mean_shape")
    _assert_named(v, "public.duckdb:extra.codemap", "(table name)", "code_map_in_public")
    assert not [x for x in v if x.table == "public.duckdb:main.products"]
    (tmp_path / "public.duckdb").write_bytes(b"not a database")
    with pytest.raises(guards.GuardError, match="public.duckdb cannot be opened"):
        guards.guard_release_dir(tmp_path, ctx)


def test_same_person_share_counts_pairs_without_forming_them() -> None:
    """The cross-block same-person share (dense per-block numbers) equals the share over the
    explicit pairs (the self-join it replaces, quadratic in the rows per value), nulls and NaN
    persons included."""
    import numpy as np
    import polars as pl

    from warehouse.quality.guards.panelists import _same_person_share

    rng = np.random.default_rng(42)
    n = 400
    p = rng.integers(0, 30, n).astype(float)
    p[rng.random(n) < 0.05] = np.nan
    df = pl.DataFrame(
        {
            "v": pl.Series(rng.integers(0, 8, n).astype(str)).scatter([3, 9], None),
            "b": [f"c:{x}" for x in rng.integers(0, 12, n)],
            "p": p,
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) % 50 == 7).then(None).otherwise("p").alias("p"))
    pairs = df.join(df, on="v", suffix="_y").filter(pl.col("b") < pl.col("b_y"))
    expected = float((pairs["p"] == pairs["p_y"]).mean())
    assert 0 < expected < 1
    assert _same_person_share(df) == pytest.approx(expected, abs=1e-12)
    one_block = df.with_columns(b=pl.lit("c:1"))
    assert _same_person_share(one_block) is None

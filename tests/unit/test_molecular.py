"""Molecular library: featurization, labels, leakage guards, fingerprint baselines, metrics."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from warehouse.molecular import (
    LEAKY_COLUMN,
    RDKIT_VERSION,
    SMILES_COLUMN,
    TASTE_CLASSES,
    InvalidSmilesError,
    assert_no_leaky_inputs,
    bca_classification,
    bootstrap_metrics,
    canonical_smiles,
    classification_metrics,
    compare_all,
    compound_smiles_from_foodatlas,
    embed_fingerprint,
    featurize,
    fingerprint_matrix,
    keyword_leakage_baseline,
    mcnemar,
    per_class_metrics,
    train_fingerprint_models,
    validate_labels,
)
from warehouse.molecular.baselines import split_data

SPLIT_SIZES = {"train": 10_517, "val": 2_254, "test": 2_254}
CLASS_COUNTS = {  # FartDB PROVENANCE.md
    "train": {"sweet": 6612, "bitter": 1241, "sour": 1132, "undefined": 1479, "umami": 53},
    "val": {"sweet": 1499, "bitter": 221, "sour": 237, "undefined": 294, "umami": 3},
    "test": {"sweet": 1473, "bitter": 233, "sour": 238, "undefined": 304, "umami": 6},
}


@pytest.fixture(scope="module")
def fart(data_mirror) -> dict[str, pl.DataFrame]:
    return {
        s: pl.read_csv(data_mirror / "fartdb" / f"fart_{s}.csv", infer_schema=False)
        for s in ("train", "val", "test")
    }


@pytest.fixture(scope="module")
def lgbm_full(fart):
    return train_fingerprint_models(fart["train"], fart["val"], fart["test"], models=["lightgbm"])[
        "lightgbm"
    ]


def _small(fart, n=(1500, 300, 300)):
    return [fart[s].head(k) for s, k in zip(("train", "val", "test"), n, strict=True)]


# ------------------------------------------------------------------ featurization


def test_featurize_canonicalizes_equivalent_smiles():
    res = featurize(["OCC", "C(O)C", "CCO"])
    assert res.canonical_smiles == ["CCO", "CCO", "CCO"]
    assert res.frame["smiles_differs"].to_list() == [True, True, False]
    assert len(set(res.inchikeys)) == 1 and res.inchikeys[0] == "LFQSCWFLJHTTHZ-UHFFFAOYSA-N"
    assert res.fingerprints.shape == (3, 2048) and res.fingerprints.dtype == np.uint8
    assert (res.fingerprints == res.fingerprints[0]).all()
    assert res.rdkit_version == RDKIT_VERSION and RDKIT_VERSION.count(".") == 2
    row = res.frame.row(0, named=True)
    assert row["MolWt"] == pytest.approx(46.069, abs=1e-3)
    assert row["HeavyAtomCount"] == 3 and row["NumHDonors"] == 1 and row["RingCount"] == 0
    assert res.invalid.is_empty()


def test_canonical_smiles_helper():
    assert canonical_smiles("C(O)C") == ("CCO", True)
    assert canonical_smiles("CCO") == ("CCO", False)
    with pytest.raises(InvalidSmilesError):
        canonical_smiles("C1CC")


@pytest.mark.parametrize("bad", ["C1CC", "not a smiles", "", None])
def test_invalid_smiles_raises_naming_row(bad):
    with pytest.raises(InvalidSmilesError, match=r"row 2") as exc:
        featurize(["CCO", "c1ccccc1", bad, "CCN"])
    assert exc.value.row == 2 and exc.value.smiles == bad
    with pytest.raises(InvalidSmilesError, match=r"row 2"):
        fingerprint_matrix(["CCO", "c1ccccc1", bad])


def test_invalid_smiles_report_mode_keeps_them_separately():
    res = featurize(["CCO", "C1CC", "CCN", "xyz"], on_error="report")
    assert res.frame["row_index"].to_list() == [0, 2]
    assert res.invalid["row_index"].to_list() == [1, 3]
    assert res.invalid["smiles"].to_list() == ["C1CC", "xyz"]
    assert res.fingerprints.shape == (2, 2048)


# ------------------------------------------------------------------ labels and leakage


def test_unknown_class_label_raises_naming_row_and_label():
    with pytest.raises(ValueError, match=r"'salty' at row 2"):
        validate_labels(["sweet", "bitter", "salty", "sour"])
    with pytest.raises(ValueError, match=r"row 1"):
        validate_labels(["sweet", None])
    with pytest.raises(ValueError, match=r"'Sweet' at row 0"):  # case-sensitive
        validate_labels(["Sweet"])
    assert validate_labels(list(TASTE_CLASSES)).tolist() == [0, 1, 2, 3, 4]


def test_fartdb_labels_valid_and_counts_match_provenance(fart):
    for split, df in fart.items():
        assert df.height == SPLIT_SIZES[split]
        codes = validate_labels(df["Canonicalized Taste"])
        counts = dict(zip(TASTE_CLASSES, np.bincount(codes, minlength=5).tolist(), strict=True))
        assert counts == CLASS_COUNTS[split]


def test_keyword_leakage_baseline_is_an_audit_near_088(fart):
    test = fart["test"]
    pred = keyword_leakage_baseline(test[LEAKY_COLUMN])
    acc = float(np.mean(pred == test["Canonicalized Taste"].to_numpy()))
    assert 0.85 <= acc <= 0.91
    refined = keyword_leakage_baseline(test[LEAKY_COLUMN], rules="refined")
    assert np.mean(refined == test["Canonicalized Taste"].to_numpy()) > 0.97


def test_no_model_input_is_original_labels(fart):
    """Inputs are the SMILES column only: config, feature names, guards, and behaviour."""
    train, val, test = _small(fart)
    fits = train_fingerprint_models(train, val, test, models=["lightgbm"])
    cfg = fits["lightgbm"].config
    assert cfg["input_columns"] == [SMILES_COLUMN]
    assert LEAKY_COLUMN not in cfg["input_columns"]
    # the feature builder takes SMILES strings only, never a frame
    _, names = fingerprint_matrix(["CCO"])
    assert all(n.startswith("morgan_") for n in names) and cfg["n_features"] == len(names)
    with pytest.raises(TypeError):
        fingerprint_matrix(train)
    with pytest.raises(ValueError, match="may not be used"):
        split_data(train, smiles_col=LEAKY_COLUMN)
    with pytest.raises(ValueError, match="leaky"):
        assert_no_leaky_inputs([LEAKY_COLUMN], names)
    # behaviour: scrambling Original Labels (and every other non-SMILES, non-label column)
    # leaves the fitted model's probabilities bitwise unchanged
    rng = np.random.default_rng(0)
    scrambled = []
    for df in (train, val, test):
        df = df.with_columns(
            pl.Series(LEAKY_COLUMN, rng.permutation(df[LEAKY_COLUMN].to_numpy())),
            pl.lit("x").alias("Source"),
            pl.lit("C").alias("Standardized SMILES"),
        )
        scrambled.append(df)
    again = train_fingerprint_models(*scrambled, models=["lightgbm"])["lightgbm"]
    for s in ("train", "val", "test"):
        np.testing.assert_array_equal(again.proba[s], fits["lightgbm"].proba[s])
    assert again.fit_id == fits["lightgbm"].fit_id


def test_split_data_accepts_staged_column_names_and_polars_only(fart):
    df = fart["val"].head(40)
    staged = df.rename(
        {
            "Canonicalized SMILES": "smiles_file",
            "Canonicalized Taste": "taste_class",
            "Original Labels": "original_labels",
        }
    )
    a, b = split_data(df), split_data(staged)
    assert a.smiles == b.smiles and a.codes.tolist() == b.codes.tolist()
    assert b.smiles_column == "smiles_file"
    with pytest.raises(ValueError, match="may not be used"):
        split_data(staged, smiles_col="original_labels")
    with pytest.raises(TypeError, match="polars"):
        split_data(df.to_dicts())


# ------------------------------------------------------------------ fingerprint baselines


def test_lightgbm_is_bitwise_reproducible_on_a_subset(fart):
    a = train_fingerprint_models(*_small(fart, (1200, 250, 250)), models=["lightgbm"])
    b = train_fingerprint_models(*_small(fart, (1200, 250, 250)), models=["lightgbm"])
    assert a["lightgbm"].fit_id == b["lightgbm"].fit_id
    assert len(a["lightgbm"].fit_id) == 64
    for s in ("train", "val", "test"):
        pa, pb = a["lightgbm"].proba[s], b["lightgbm"].proba[s]
        assert pa.shape == (250 if s != "train" else 1200, 5)
        assert pa.tobytes() == pb.tobytes()


def test_fingerprints_from_the_featurized_table_give_the_same_fit(fart):
    """dim_ml_fits reuses int_molecules_featurized's Morgan bits instead of featurizing again:
    the matrix, and so the LightGBM fit, must be bitwise the same."""
    from warehouse.errors import WarehouseError
    from warehouse.molecular.fits import fingerprint_lookup
    from warehouse.molecular.marts import featurized_molecules

    parts = [
        p.with_columns(
            pl.Series(SMILES_COLUMN, featurize(p[SMILES_COLUMN].to_list()).canonical_smiles)
        )
        for p in _small(fart, (800, 200, 200))
    ]
    smiles = pl.concat(parts)[SMILES_COLUMN].to_list()
    sources = pl.DataFrame({"canonical_smiles": sorted(set(smiles)), "in_fartdb": True})
    lookup = fingerprint_lookup(featurized_molecules(smiles, sources))
    X, _ = fingerprint_matrix(parts[2][SMILES_COLUMN].to_list())
    assert lookup(parts[2][SMILES_COLUMN].to_list()).tobytes() == X.tobytes()
    a = train_fingerprint_models(*parts, models=["lightgbm"])["lightgbm"]
    b = train_fingerprint_models(*parts, models=["lightgbm"], fingerprints=lookup)["lightgbm"]
    assert a.fit_id == b.fit_id
    assert all(a.proba[s].tobytes() == b.proba[s].tobytes() for s in ("train", "val", "test"))
    with pytest.raises(WarehouseError, match="not in int_molecules_featurized"):
        lookup(["C1=CC=CC=C1N"])


def test_fingerprint_embedding_from_the_featurized_table_is_the_same(fart):
    from warehouse.molecular.fits import fingerprint_lookup
    from warehouse.molecular.marts import featurized_molecules

    smiles = featurize(fart["test"][SMILES_COLUMN].head(300).to_list()).canonical_smiles
    train = featurize(fart["train"][SMILES_COLUMN].head(600).to_list()).canonical_smiles
    everything = sorted(set(smiles) | set(train))
    sources = pl.DataFrame({"canonical_smiles": everything, "in_fartdb": True})
    lookup = fingerprint_lookup(featurized_molecules(everything, sources))
    a = embed_fingerprint(smiles, 16, fit_smiles=train)
    b = embed_fingerprint(smiles, 16, fit_smiles=train, fingerprints=lookup)
    assert a.fit_hash == b.fit_hash and a.canonical_smiles == b.canonical_smiles
    assert a.vectors.tobytes() == b.vectors.tobytes()


def test_random_forest_runs_with_balanced_weights(fart):
    fits = train_fingerprint_models(
        *_small(fart, (600, 100, 100)), models=["random_forest"], rf_estimators=20
    )
    rf = fits["random_forest"]
    assert rf.config["params"]["class_weight"] == "balanced_subsample"
    assert rf.proba["test"].shape == (100, 5)
    np.testing.assert_allclose(rf.proba["test"].sum(axis=1), 1.0)
    # byte-stable: the probabilities are the trees' summed in tree order (one thread), not in
    # the order two prediction threads happen to finish
    from warehouse.molecular.featurize import fingerprint_matrix

    X, _ = fingerprint_matrix(_small(fart, (600, 100, 100))[2][SMILES_COLUMN].to_list())
    acc = np.zeros((X.shape[0], len(rf.model.classes_)))
    for tree in rf.model.estimators_:
        acc += tree.predict_proba(X)
    assert rf.model.n_jobs == 1
    assert np.array_equal(rf.model.predict_proba(X), acc / len(rf.model.estimators_))


def test_lightgbm_full_splits_reach_target(lgbm_full):
    m = lgbm_full.metrics("test")
    assert m["accuracy"] >= 0.88
    assert m["macro_f1"] >= 0.74
    assert m["macro_auroc"] >= 0.95
    assert lgbm_full.proba["test"].shape == (2254, 5)


def test_bca_ci_contains_point_estimate(lgbm_full):
    y, pred, proba = lgbm_full.y_true["test"], lgbm_full.labels["test"], lgbm_full.proba["test"]
    table = bca_classification(y, pred, proba)
    assert table["metric"].to_list() == [
        "accuracy",
        "macro_precision",
        "macro_recall",
        "macro_f1",
        "macro_auroc",
    ]
    assert (table["ci_lo"] <= table["point"]).all()
    assert (table["point"] <= table["ci_hi"]).all()
    point = classification_metrics(y, pred, proba)
    assert dict(zip(table["metric"].to_list(), table["point"].to_list(), strict=True)) == point


def test_per_class_table_umami_has_honest_wide_ci(lgbm_full):
    y, pred, proba = lgbm_full.y_true["test"], lgbm_full.labels["test"], lgbm_full.proba["test"]
    table = per_class_metrics(y, pred, proba)
    assert table["class"].to_list() == list(TASTE_CLASSES)
    rows = {r["class"]: r for r in table.iter_rows(named=True)}
    assert rows["umami"]["support"] == 6
    assert table["support"].sum() == 2254
    for metric in ("recall", "f1"):
        width = rows["umami"][f"{metric}_ci_hi"] - rows["umami"][f"{metric}_ci_lo"]
        assert width > 0.2, (metric, width)
    # replicates that drew no umami molecule are excluded (NaN), not scored as zeros
    assert 9900 < rows["umami"]["recall_n_boot_finite"] < 10_000
    assert rows["sweet"]["recall_n_boot_finite"] == 10_000
    for metric in ("precision", "recall", "f1", "auroc"):
        assert (table[f"{metric}_ci_lo"] <= table[metric] + 1e-12).all()
        assert (table[metric] <= table[f"{metric}_ci_hi"] + 1e-12).all()


# ------------------------------------------------------------------ metrics


def _toy(n=120, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.choice(5, n, p=[0.6, 0.15, 0.13, 0.02, 0.1])
    proba = np.round(rng.dirichlet(np.ones(5), n), 1)  # coarse: many ties
    proba[np.arange(n), y] += 0.15
    return y, proba.argmax(axis=1), proba


def test_classification_metrics_match_sklearn():
    y, pred, proba = _toy(400, seed=3)
    m = classification_metrics(y, pred, proba)
    assert m["accuracy"] == accuracy_score(y, pred)
    assert m["macro_precision"] == pytest.approx(
        precision_score(y, pred, average="macro", zero_division=0), abs=1e-15
    )
    assert m["macro_recall"] == pytest.approx(recall_score(y, pred, average="macro"), abs=1e-15)
    assert m["macro_f1"] == pytest.approx(f1_score(y, pred, average="macro"), abs=1e-15)
    auc = np.mean([roc_auc_score(y == k, proba[:, k]) for k in range(5)])
    assert m["macro_auroc"] == pytest.approx(auc, abs=1e-12)
    names = np.asarray(TASTE_CLASSES, dtype=object)
    assert classification_metrics(names[y], names[pred], proba) == m


def _slow_stats(y, pred, proba):
    """Per-sample statistics by plain loops (independent of the vectorized code)."""
    conf = np.zeros((5, 5))
    for t, q in zip(y, pred, strict=True):
        conf[t, q] += 1
    out = {"accuracy": float(np.mean(y == pred))}
    per = {"precision": [], "recall": [], "f1": [], "auroc": []}
    for k in range(5):
        tp, support, predicted = conf[k, k], conf[k].sum(), conf[:, k].sum()
        if support == 0:
            for v in per.values():
                v.append(np.nan)
            continue
        per["precision"].append(tp / predicted if predicted else 0.0)
        per["recall"].append(tp / support)
        per["f1"].append(2 * tp / (2 * tp + (predicted - tp) + (support - tp)))
        pos = y == k
        if pos.all():
            per["auroc"].append(np.nan)
            continue
        ranks = stats.rankdata(proba[:, k])
        n_pos, n_neg = pos.sum(), (~pos).sum()
        u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2
        per["auroc"].append(u / (float(n_pos) * float(n_neg)))
    for name, values in per.items():
        out[f"macro_{name}"] = float(np.mean(values))
        for k, cls in enumerate(TASTE_CLASSES):
            out[f"{name}/{cls}"] = values[k]
    return out


def _slow_bca(estimate, boot, jack):
    finite = boot[~np.isnan(boot)]
    share = min(max(np.sum(finite < estimate) / finite.size, 1e-10), 1 - 1e-10)
    z0 = stats.norm.ppf(share)
    jf = jack[~np.isnan(jack)]
    d = jf.mean() - jf
    den = 6 * (d**2).sum() ** 1.5
    a = (d**3).sum() / den if den > 0 else 0.0
    bounds = []
    for z in (stats.norm.ppf(0.025), stats.norm.ppf(0.975)):
        level = stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
        bounds.append(np.nanpercentile(boot, 100 * min(max(level, 0.0), 1.0)))
    return tuple(bounds)


def test_bca_matches_slow_loop_exactly():
    y, pred, proba = _toy()
    n, n_boot = len(y), 200
    bm = bootstrap_metrics(y, pred, proba, n_boot=n_boot, seed=42)
    idx = np.random.default_rng(42).integers(0, n, (n_boot, n))
    slow_boot = [_slow_stats(y[i], pred[i], proba[i]) for i in idx]
    keep = [np.arange(n) != j for j in range(n)]
    slow_jack = [_slow_stats(y[m], pred[m], proba[m]) for m in keep]
    point = _slow_stats(y, pred, proba)
    n_nan = 0
    for name in point:
        boot = np.array([r[name] for r in slow_boot])
        jack = np.array([r[name] for r in slow_jack])
        np.testing.assert_array_equal(bm.boot[name], boot, err_msg=name)
        np.testing.assert_array_equal(bm.jack[name], jack, err_msg=name)
        assert bm.estimate[name] == point[name]
        est, lo, hi, _ = bm.interval(name)
        assert (lo, hi) == _slow_bca(point[name], boot, jack), name
        n_nan += int(np.isnan(boot).sum())
    assert n_nan > 0  # the toy case does exercise replicates that miss a class
    table = bca_classification(y, pred, proba, n_boot=n_boot)
    row = table.filter(pl.col("metric") == "macro_f1").row(0, named=True)
    assert (row["ci_lo"], row["ci_hi"]) == bm.interval("macro_f1")[1:3]
    assert row["n_boot_finite"] == int(np.isfinite(bm.boot["macro_f1"]).sum()) < n_boot


def test_mcnemar_exact_and_chi2():
    y = np.zeros(100, dtype=int)
    a = y.copy()
    b = y.copy()
    b[:8] = 1  # A alone right on 8
    a[8:10] = 1  # B alone right on 2
    res = mcnemar(y, a, b)
    assert (res["n_a_only"], res["n_b_only"], res["method"]) == (8, 2, "exact")
    assert res["p_value"] == pytest.approx(stats.binomtest(8, 10, 0.5).pvalue)
    b[:30] = 1  # now A alone right on 0-7 and 10-29 (28); rows 8-9 both wrong
    a[30:32] = 1  # B alone right on 30-31 (2)
    res = mcnemar(y, a, b)
    assert (res["n_a_only"], res["n_b_only"], res["method"]) == (28, 2, "chi2_cc")
    stat = (abs(28 - 2) - 1) ** 2 / 30
    assert res["statistic"] == pytest.approx(stat)
    assert res["p_value"] == pytest.approx(stats.chi2.sf(stat, 1))
    assert mcnemar(y, a, a)["p_value"] == 1.0


def test_compare_all_pairs_models(lgbm_full, fart):
    test = fart["test"]
    keyword = keyword_leakage_baseline(test[LEAKY_COLUMN])
    always_sweet = np.array(["sweet"] * test.height, dtype=object)
    table = compare_all(
        {"lightgbm": lgbm_full.labels["test"], "keyword_audit": keyword, "sweet": always_sweet},
        y_true=test["Canonicalized Taste"],
    )
    assert table.height == 3
    assert set(zip(table["model_a"], table["model_b"], strict=True)) == {
        ("lightgbm", "keyword_audit"),
        ("lightgbm", "sweet"),
        ("keyword_audit", "sweet"),
    }
    assert (table["p_holm"] >= table["p_value"]).all()
    pair = (pl.col("model_a") == "lightgbm") & (pl.col("model_b") == "sweet")
    row = table.filter(pair).row(0, named=True)
    assert row["p_value"] < 1e-10
    # FitResult objects are accepted too (labels and gold taken from the fit)
    assert compare_all({"a": lgbm_full, "b": lgbm_full}).height == 1


# ------------------------------------------------------------------ embeddings, FoodAtlas


def test_embed_fingerprint_random_projection_and_svd(fart):
    smiles = fart["test"][SMILES_COLUMN].head(50).to_list()
    rp = embed_fingerprint(smiles)
    assert rp.vectors.shape == (50, 64) and rp.encoder == "morgan2_2048_rp64"
    assert embed_fingerprint(smiles).fit_hash == rp.fit_hash and len(rp.fit_hash) == 64
    svd = embed_fingerprint(smiles, 16, fit_smiles=fart["train"][SMILES_COLUMN].head(800))
    assert svd.vectors.shape == (50, 16) and svd.encoder == "morgan2_2048_tsvd16"
    assert svd.fit_hash != rp.fit_hash
    table = svd.table()
    assert {"canonical_smiles", "encoder", "fit_hash", "embedding"} <= set(table.columns)
    assert table["canonical_smiles"].is_unique
    with pytest.raises(InvalidSmilesError):
        embed_fingerprint(["CCO", "C1CC"])


def test_compound_smiles_from_foodatlas(data_mirror):
    fa = data_mirror / "foodatlas"
    seed = pl.read_csv(
        fa / "kgv2_initialization_seed" / "_pubchem_compound.tsv",
        separator="\t",
        infer_schema=False,
        quote_char=None,
    )
    v1 = pl.concat(
        [
            pl.read_csv(fa / "v1_ibpa_foodatlas_benchmark" / f"data_{food}.csv", infer_schema=False)
            for food in ("cocoa", "garlic")
        ],
        how="diagonal",
    )
    res = compound_smiles_from_foodatlas(seed, v1)
    out = res.table
    assert out["pubchem_cid"].is_unique().all()
    assert res.n_resolved == 140  # every seed CID has a parseable CanonicalSmiles
    v1_cids = {int(float(c)) for c in v1["pubchem_id"].drop_nulls().to_list() if c.strip()}
    assert res.n_v1_cids == len(v1_cids)
    assert res.n_v1_resolved == 86
    assert res.n_unresolved == res.n_v1_cids - 86
    unresolved = out.filter(~pl.col("resolved"))
    assert unresolved["smiles"].is_null().all()
    assert unresolved["unresolved_reason"].is_not_null().all()
    both = out.filter(pl.col("in_seed") & pl.col("in_v1"))
    assert both["v1_inchikey_matches"].all()
    sucrose = out.filter(pl.col("pubchem_cid") == 5988).row(0, named=True)
    assert sucrose["resolved"] and sucrose["rdkit_canonical_smiles"]


def test_bootstrap_memo_keeps_the_four_latest_and_recomputes_the_same() -> None:
    """bootstrap_metrics memoizes four results (bca_classification and per_class_metrics on the
    same predictions share one bootstrap): a fifth evicts the oldest; the same call is the same
    object, and the evicted one, computed again, gives equal numbers."""
    from warehouse.molecular import metrics as molecular_metrics

    molecular_metrics._CACHE.clear()
    y = np.arange(40) % 5
    preds = [np.roll(y, k) for k in range(5)]
    first = bootstrap_metrics(y, preds[0], n_boot=50, seed=42)
    assert bootstrap_metrics(y, preds[0], n_boot=50, seed=42) is first
    for p in preds[1:]:
        bootstrap_metrics(y, p, n_boot=50, seed=42)
    assert len(molecular_metrics._CACHE) == 4
    again = bootstrap_metrics(y, preds[0], n_boot=50, seed=42)
    assert again is not first and again.estimate == first.estimate
    assert again.boot.keys() == first.boot.keys()
    for name in first.boot:
        np.testing.assert_array_equal(again.boot[name], first.boot[name])
        np.testing.assert_array_equal(again.jack[name], first.jack[name])

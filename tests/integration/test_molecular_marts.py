"""Molecular task marts after the default build (issue #5)."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from warehouse.molecular import marts

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def con(default_warehouse):
    c = duckdb.connect(str(default_warehouse[1].db_path), read_only=True)
    yield c
    c.close()


def test_fingerprint_fits_registered_with_artifacts(con) -> None:
    fits = con.execute("select * from marts.dim_ml_fits order by model_name").df()
    assert set(fits.model_name) >= {"lightgbm", "random_forest"}
    fp = fits[fits.family == "fingerprint"]
    assert fp.fit_id.str.fullmatch(r"[0-9a-f]{64}").all()
    assert fp.artifact_sha256.str.fullmatch(r"[0-9a-f]{64}").all()
    for cfg in fp.config_json:
        # the only model input is the SMILES column: never Original Labels or anything from it
        assert json.loads(cfg)["input_columns"] == ["Canonicalized SMILES"]
    if (fits.family == "dmpnn").sum() == 0:
        assert fp.note.str.contains("tastebench train molecular").all()


def test_test_split_metrics_with_cis(con) -> None:
    m = con.execute("select * from marts.agg_molecular_metrics").df()
    lgb = m[m.model_name == "lightgbm"].set_index("metric")
    assert lgb.loc["accuracy", "point"] >= 0.88
    assert lgb.loc["macro_f1", "point"] >= 0.74
    assert set(lgb.index) == {
        "accuracy",
        "macro_precision",
        "macro_recall",
        "macro_f1",
        "macro_auroc",
    }
    models = m[~m.is_audit]
    assert (models.ci_lo <= models.point).all() and (models.point <= models.ci_hi).all()
    assert (m.n_boot == 10000).all() and (m.n_molecules == 2254).all()
    audit = m[m.is_audit & (m.metric == "accuracy")]
    assert len(audit) == 1 and 0.85 <= audit.point.iloc[0] <= 0.91


def test_marts_score_every_fit_as_its_registry_does(con) -> None:
    """Predictions in the marts are aligned with the molecules: each fit's test accuracy
    recomputed from fct_molecular_predictions equals the one recorded when it was fitted. On the
    default build (no D-MPNN registered) this covers the fingerprint fits; the re-ordering of a
    D-MPNN's predictions is tested in tests/unit/test_molecular_alignment.py."""
    rows = con.execute(
        "select f.model_name, f.test_accuracy, avg((p.predicted_class = p.true_class)::int) "
        "from marts.dim_ml_fits f join marts.fct_molecular_predictions p using (fit_id) "
        "group by all"
    ).fetchall()
    assert {r[0] for r in rows} >= {"lightgbm", "random_forest"}
    for _name, recorded, from_marts in rows:
        assert from_marts == pytest.approx(recorded, abs=1e-12)


def test_staged_molecules_keep_split_file_order(con) -> None:
    per_split = con.execute(
        "select split, count(*), min(file_row_number), max(file_row_number), "
        "count(distinct file_row_number) from staging.stg_fartdb__molecules group by 1"
    ).fetchall()
    for _split, n, lo, hi, distinct in per_split:
        assert (lo, hi, distinct) == (1, n, n)


def test_umami_has_honest_wide_cis(con) -> None:
    pc = con.execute(
        "select * from marts.agg_molecular_metrics_per_class where taste_class = 'umami' "
        "and not is_audit"
    ).df()
    assert (pc.support == 6).all()
    assert ((pc.f1_ci_hi - pc.f1_ci_lo) > 0.2).all()


def test_mcnemar_between_every_pair(con) -> None:
    n_models = con.execute(
        "select count(distinct model_name) from marts.fct_molecular_predictions"
    ).fetchone()[0]
    n_pairs = con.execute("select count(*) from marts.agg_molecular_comparisons").fetchone()[0]
    assert n_pairs == n_models * (n_models - 1) // 2


def test_compound_embeddings_cover_every_reachable_smiles(con) -> None:
    n_mol, n_fa = con.execute(
        "select count(*), count(*) filter (where in_foodatlas) "
        "from intermediate.int_molecules_featurized"
    ).fetchone()
    assert n_fa > 100
    per_encoder = con.execute(
        "select encoder, count(distinct canonical_smiles), any_value(fit_hash) "
        "from marts.fct_compound_embeddings group by 1"
    ).fetchall()
    assert any(enc.startswith("morgan2_2048") for enc, _, _ in per_encoder)
    for _enc, n, fit_hash in per_encoder:
        assert n == n_mol and len(fit_hash) == 64


def test_the_python_models_functions_rebuild_the_marts_from_the_warehouse(
    default_warehouse, con, monkeypatch
) -> None:
    """What each molecular Python model calls (``warehouse.molecular.marts``), run outside dbt on
    the warehouse's own inputs with the build's settings, gives the built mart row for row (the
    fits and frames are read back from the fit store); the metric tables computed afresh at 200
    resamples keep every point estimate (no point estimate depends on the resample count). Only a
    full build runs these models; the suite's full builds are kept between runs (tests/conftest.py),
    so this test runs their code on every run."""
    for key, value in default_warehouse[0].as_env().items():
        monkeypatch.setenv(key, value)

    def read(relation: str) -> pl.DataFrame:
        return con.sql(f"select * from {relation}").pl()

    def same(got: pl.DataFrame, relation: str, by: str) -> None:
        assert_frame_equal(got.sort(by), read(relation).sort(by), check_dtypes=False)

    molecules = read("staging.stg_fartdb__molecules")
    featurized = marts.int_molecules_featurized(
        molecules, read("staging.stg_foodatlas__pubchem_compounds")
    )
    same(featurized, "intermediate.int_molecules_featurized", "canonical_smiles")
    fits = marts.dim_ml_fits(molecules, featurized)
    same(fits, "marts.dim_ml_fits", "fit_id")
    preds = marts.fct_molecular_predictions(molecules, fits)
    assert preds.height == read("marts.fct_molecular_predictions").height
    metrics = marts.agg_molecular_metrics(preds, n_boot=10_000)
    same(metrics, "marts.agg_molecular_metrics", "metric_key")
    per_class = marts.agg_molecular_metrics_per_class(preds, n_boot=10_000)
    same(per_class, "marts.agg_molecular_metrics_per_class", "class_key")
    comparisons = marts.agg_molecular_comparisons(preds)
    same(comparisons, "marts.agg_molecular_comparisons", "comparison_key")
    embeddings = marts.fct_compound_embeddings(featurized, molecules)
    same(embeddings, "marts.fct_compound_embeddings", "embedding_key")
    # no D-MPNN registered: every row is the fingerprint encoder's, computed afresh the same
    fingerprint = marts.fingerprint_embeddings(featurized, molecules)
    assert_frame_equal(
        fingerprint.sort("canonical_smiles"),
        embeddings.select(fingerprint.columns).sort("canonical_smiles"),
    )
    fresh = [
        (marts.metrics_table, "marts.agg_molecular_metrics", "metric_key", ["point"]),
        (marts.per_class_table, "marts.agg_molecular_metrics_per_class", "class_key",
         ["support", "precision", "recall", "f1", "auroc"]),
    ]  # fmt: skip
    for compute, relation, key, points in fresh:
        table, built = compute(preds, n_boot=200).sort(key), read(relation).sort(key)
        assert table[key].to_list() == built[key].to_list(), relation
        assert_frame_equal(table.select(points), built.select(points), check_dtypes=False)
    assert (
        marts.comparisons_table(preds)
        .sort("comparison_key")
        .equals(comparisons.sort("comparison_key"))
    )

"""Molecular task marts after the default build (issue #5)."""

from __future__ import annotations

import json

import duckdb
import pytest

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

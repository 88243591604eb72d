"""D-MPNN predictions line up with stg_fartdb__molecules by split-file row (issue #5 bug).

FartDB's unnamed index (``file_row_id``) indexes the unsplit FART table: it is not the order of
rows in the val/test files. Predictions written by ``tastebench train molecular`` follow file
order and record each row's file position; the marts must re-order by it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from warehouse.errors import WarehouseError
from warehouse.molecular import TASTE_CLASSES
from warehouse.molecular.marts import predictions
from warehouse.molecular.staging import split_frames


def _molecules(n: int = 12, seed: int = 0) -> pl.DataFrame:
    """A stg_fartdb__molecules-shaped test split whose file_row_id is shuffled against file
    order (as in the real val/test files)."""
    rng = np.random.default_rng(seed)
    classes = [TASTE_CLASSES[i % 5] for i in range(n)]
    row_id = rng.permutation(n) * 7
    return pl.DataFrame(
        {
            "molecule_row_key": [f"test:{i}" for i in row_id],
            "split": ["test"] * n,
            "file_row_id": row_id,
            "file_row_number": np.arange(1, n + 1),
            "canonical_smiles": ["C" * (i + 1) for i in range(n)],
            "taste_class": classes,
            "original_labels": classes,
        }
    )


def _dmpnn_fit(tmp_path, molecules, rows=None, with_rows=True) -> pl.DataFrame:
    """A registered D-MPNN whose file-order predictions are exactly the gold classes."""
    gold = np.array([TASTE_CLASSES.index(c) for c in molecules["taste_class"].to_list()])
    order = np.arange(len(gold)) if rows is None else np.asarray(rows) - 1
    arrays = {}
    for s in ("train", "val", "test"):
        arrays[f"proba_{s}"] = np.eye(5)[gold[order]]
        arrays[f"codes_{s}"] = gold[order]
        if with_rows:
            arrays[f"rows_{s}"] = order + 1
    np.savez(tmp_path / "predictions.npz", **arrays)
    return pl.DataFrame(
        [
            {
                "fit_id": "f" * 64,
                "model_name": "dmpnn_x",
                "family": "dmpnn",
                "artifact_path": str(tmp_path / "model.pt"),
            }
        ]
    )


def _scored(molecules, fits, root: Path) -> pl.DataFrame:
    splits = [molecules.with_columns(split=pl.lit(s)) for s in ("train", "val")]
    preds = predictions(pl.concat([*splits, molecules]), fits, root)
    return preds.filter(~pl.col("is_audit"))


def test_split_frames_follow_file_order_not_file_row_id():
    mol = _molecules()
    shuffled = mol.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled.equals(mol)
    frame = split_frames(shuffled)["test"]
    assert frame["file_row_number"].to_list() == list(range(1, 13))
    assert not mol["file_row_id"].is_sorted()  # the trap the order must avoid


def test_dmpnn_predictions_are_aligned_by_file_row(tmp_path):
    mol = _molecules()
    preds = _scored(mol, _dmpnn_fit(tmp_path, mol), tmp_path)
    assert (preds["predicted_class"] == preds["true_class"]).all()
    keyed = dict(preds.select("molecule_row_key", "canonical_smiles").iter_rows())
    assert keyed == dict(mol.select("molecule_row_key", "canonical_smiles").iter_rows())


def test_dmpnn_predictions_in_any_recorded_order_are_realigned(tmp_path):
    mol = _molecules()
    rows = np.random.default_rng(1).permutation(mol.height) + 1
    preds = _scored(mol, _dmpnn_fit(tmp_path, mol, rows=rows), tmp_path)
    assert (preds["predicted_class"] == preds["true_class"]).all()


def test_dmpnn_predictions_on_a_subset_are_refused(tmp_path):
    mol = _molecules()
    fits = _dmpnn_fit(tmp_path, mol, rows=np.arange(1, 11))
    with pytest.raises(
        WarehouseError, match=r"has 10 \w+ predictions .* 12 rows.*without --subset"
    ):
        _scored(mol, fits, tmp_path)


def test_legacy_predictions_without_rows_must_match_gold_row_by_row(tmp_path):
    mol = _molecules()
    _scored(mol, _dmpnn_fit(tmp_path, mol, with_rows=False), tmp_path)  # file order: accepted
    shifted = _dmpnn_fit(tmp_path, mol, rows=np.roll(np.arange(1, 13), 1), with_rows=False)
    with pytest.raises(WarehouseError, match=r"do not line up.*Fix: delete .*--config x"):
        _scored(mol, shifted, tmp_path)


def test_dmpnn_predictions_with_repeated_rows_are_refused(tmp_path):
    mol = _molecules()
    rows = np.r_[np.arange(1, 12), 11]
    with pytest.raises(WarehouseError, match=r"11 distinct file rows.*delete .*--config x"):
        _scored(mol, _dmpnn_fit(tmp_path, mol, rows=rows), tmp_path)


def test_train_cli_names_configurations_and_refuses_grid_plus_config():
    from typer.testing import CliRunner

    from warehouse.cli import app
    from warehouse.molecular.train import BEST, config_named

    assert config_named("best") == BEST
    assert config_named("depth3_dropout0_inverse").class_weighting == "inverse"
    with pytest.raises(WarehouseError, match="depth5_dropout0.2_sqrt-inverse"):
        config_named("depth4")
    out = CliRunner().invoke(app, ["train", "molecular", "--grid", "--config", "depth4"])
    assert out.exit_code != 0 and "would be ignored" in str(out.exception)

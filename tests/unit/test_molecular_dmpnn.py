"""D-MPNN (chemprop 2.3): smoke training, checkpoint identity, embeddings, resumable grid."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import polars as pl
import pytest

from warehouse.molecular import (
    TASTE_CLASSES,
    DMPNNConfig,
    FitResult,
    InvalidSmilesError,
    embed_dmpnn,
    grid_configs,
    load_dmpnn_fit,
    run_grid,
    train_dmpnn,
)
from warehouse.molecular.dmpnn import REGISTRY_NAME, class_weights


@pytest.fixture(scope="module")
def fart(data_mirror) -> dict[str, pl.DataFrame]:
    return {
        s: pl.read_csv(data_mirror / "fartdb" / f"fart_{s}.csv", infer_schema=False)
        for s in ("train", "val", "test")
    }


def test_grid_has_the_12_configurations():
    configs = grid_configs()
    assert len(configs) == 12 and len({c.name for c in configs}) == 12
    assert {(c.depth, c.dropout, c.class_weighting) for c in configs} == {
        (d, p, w) for d in (3, 5) for p in (0.0, 0.2) for w in ("none", "inverse", "sqrt-inverse")
    }
    assert all(c.hidden_dim == 300 and c.batch_size == 50 for c in configs)
    assert all(c.aggregation == "mean" for c in configs)


def test_class_weights_schemes():
    codes = np.array([0] * 90 + [3] * 10)
    assert class_weights(codes, "none").tolist() == [1.0] * 5
    inv = class_weights(codes, "inverse")
    assert inv[3] / inv[0] == pytest.approx(9.0)
    assert np.mean(inv[codes]) == pytest.approx(1.0)
    sq = class_weights(codes, "sqrt-inverse")
    assert sq[3] / sq[0] == pytest.approx(3.0)
    assert np.mean(sq[codes]) == pytest.approx(1.0)
    assert inv[1] == 0.0  # absent classes get no weight


@pytest.fixture(scope="module")
def smoke(fart, tmp_path_factory):
    """One-epoch D-MPNN on 200/50/50 molecules: (fit, folder holding ``fit/``)."""
    tmp_path = tmp_path_factory.mktemp("dmpnn")
    cfg = DMPNNConfig(depth=3, dropout=0.0, class_weighting="sqrt-inverse")
    # frames in reverse order carrying their file rows (as read_fartdb's _file_row): the rows
    # recorded in predictions.npz must come from that column, not from the frame's order
    frames = {
        s: df.reverse().with_columns(_file_row=pl.Series(np.arange(df.height, 0, -1)))
        for s, df in fart.items()
    }
    fit = train_dmpnn(
        frames["train"],
        frames["val"],
        frames["test"],
        cfg,
        tmp_path / "fit",
        max_epochs=1,
        subset=(200, 50, 50),
    )
    return fit, tmp_path


def test_dmpnn_smoke_train_checkpoint_embeddings(fart, smoke):
    fit, tmp_path = smoke
    ckpt = tmp_path / "fit" / "model.pt"
    assert fit.checkpoint == ckpt and ckpt.is_file()
    assert re.fullmatch(r"[0-9a-f]{64}", fit.fit_id)
    assert fit.fit_id == hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert fit.info["epochs_run"] == 1 and fit.info["n"] == {"train": 200, "val": 50, "test": 50}
    assert fit.config["input_columns"] == ["Canonicalized SMILES"]
    for split, n in (("train", 200), ("val", 50), ("test", 50)):
        assert fit.proba[split].shape == (n, 5)
        np.testing.assert_allclose(fit.proba[split].sum(axis=1), 1.0, atol=1e-5)
        assert set(fit.labels[split]) <= set(TASTE_CLASSES)
    assert set(fit.y_true["test"]) == set(TASTE_CLASSES)  # subsets keep every class
    smiles = fart["test"]["Canonicalized SMILES"].head(7).to_list()
    emb = embed_dmpnn(ckpt, smiles)
    assert emb.shape == (7, 300) and np.isfinite(emb).all()
    np.testing.assert_array_equal(emb, embed_dmpnn(ckpt, smiles))
    with pytest.raises(InvalidSmilesError, match="row 1"):
        embed_dmpnn(ckpt, ["CCO", "C1CC"])
    arrays = np.load(tmp_path / "fit" / "predictions.npz")
    for split, n in (("train", 200), ("val", 50), ("test", 50)):
        rows = arrays[f"rows_{split}"]  # 1-based file rows of the sampled molecules
        assert len(rows) == n and len(set(rows.tolist())) == n
        gold = fart[split]["Canonicalized Taste"].to_numpy()[rows - 1]
        assert gold.tolist() == fit.y_true[split].tolist()
    again = load_dmpnn_fit(tmp_path / "fit")
    assert again.fit_id == fit.fit_id
    np.testing.assert_array_equal(again.proba["test"], fit.proba["test"])
    meta = json.loads((tmp_path / "fit" / "fit.json").read_text())
    assert meta["config"]["depth"] == 3 and meta["config"]["chemprop_version"] == "2.3.1"


def test_dmpnn_embeddings_are_cached_per_checkpoint(fart, smoke, tmp_path, monkeypatch):
    from warehouse import molecular
    from warehouse.molecular.fits import cached_dmpnn_embedding

    fit, _ = smoke
    smiles = molecular.featurize(fart["test"]["Canonicalized SMILES"].head(9)).canonical_smiles
    first = cached_dmpnn_embedding(fit.checkpoint, smiles, tmp_path)
    stored = list((tmp_path / "embeddings" / fit.fit_id).glob("*.npy"))
    assert len(stored) == 1 and first.fit_hash == fit.fit_id

    def must_not_run(*args, **kwargs):
        raise AssertionError("the network ran again for a cached (checkpoint, SMILES) pair")

    monkeypatch.setattr(molecular.dmpnn, "embed_dmpnn", must_not_run)
    again = cached_dmpnn_embedding(fit.checkpoint, smiles, tmp_path)
    assert again.vectors.tobytes() == first.vectors.tobytes()
    assert again.table().equals(first.table())
    assert first.vectors.tobytes() == embed_dmpnn(fit.checkpoint, smiles).tobytes()
    with pytest.raises(AssertionError, match="ran again"):  # another SMILES list is not cached
        cached_dmpnn_embedding(fit.checkpoint, smiles[:3], tmp_path)


def test_selected_dmpnn_has_the_best_validation_macro_f1():
    from warehouse.molecular.fits import selected_dmpnn

    def fit(name, n_wrong):
        y = np.array(TASTE_CLASSES * 4, dtype=object)
        pred = np.array([TASTE_CLASSES.index(c) for c in y])
        pred[:n_wrong] = (pred[:n_wrong] + 1) % 5
        names = np.asarray(TASTE_CLASSES, dtype=object)
        return FitResult(
            name=f"dmpnn_{name}",
            fit_id=name,
            config={"name": name},
            proba=dict.fromkeys(("train", "val", "test"), np.eye(5)[pred]),
            labels=dict.fromkeys(("train", "val", "test"), names[pred]),
            y_true=dict.fromkeys(("train", "val", "test"), y),
            wall_s=0.0,
        )

    # the tie goes to the earlier *grid* configuration, as in run_grid, not to the first name:
    # depth3_dropout0.2_none sorts before depth3_dropout0_none but comes later in the grid
    fits = [
        fit("depth3_dropout0.2_none", 1),
        fit("depth3_dropout0_sqrt-inverse", 2),
        fit("depth3_dropout0_none", 1),
        fit("depth5_dropout0_none", 3),
    ]
    assert selected_dmpnn(fits).config["name"] == "depth3_dropout0_none"
    assert selected_dmpnn(fits[:2]).config["name"] == "depth3_dropout0.2_none"
    assert selected_dmpnn([]) is None


# ------------------------------------------------------------------ resumable grid

BEST = "depth5_dropout0.2_inverse"


class FakeTrainer:
    """Stands in for train_dmpnn: writes a checkpoint, returns a FitResult whose validation
    macro-F1 is best for BEST; can simulate a crash on its n-th call."""

    def __init__(self, crash_on_call: int | None = None):
        self.calls: list[str] = []
        self.crash_on_call = crash_on_call

    def __call__(self, train_df, val_df, test_df, cfg, out_dir, **kwargs) -> FitResult:
        self.calls.append(cfg.name)
        out_dir.mkdir(parents=True, exist_ok=True)
        ckpt = out_dir / "model.pt"
        ckpt.write_bytes(f"checkpoint {cfg.name}".encode())
        if self.crash_on_call is not None and len(self.calls) == self.crash_on_call:
            raise KeyboardInterrupt("simulated interruption")
        y = np.array(TASTE_CLASSES * 4, dtype=object)
        n_wrong = 0 if cfg.name == BEST else 1 + len(self.calls) % 3
        codes = np.array([TASTE_CLASSES.index(c) for c in y])
        pred = codes.copy()
        pred[:n_wrong] = (pred[:n_wrong] + 1) % 5
        proba = np.eye(5)[pred] * 0.9 + 0.02
        names = np.asarray(TASTE_CLASSES, dtype=object)
        return FitResult(
            name=cfg.name,
            fit_id=hashlib.sha256(ckpt.read_bytes()).hexdigest(),
            config={"name": cfg.name},
            proba=dict.fromkeys(("train", "val", "test"), proba),
            labels=dict.fromkeys(("train", "val", "test"), names[pred]),
            y_true=dict.fromkeys(("train", "val", "test"), y),
            wall_s=0.0,
            checkpoint=ckpt,
            info={"epochs_run": 3, "best_epoch": 1},
        )


def test_run_grid_resumes_after_interruption(tmp_path):
    empty = pl.DataFrame()
    state = tmp_path / "grid"
    first = FakeTrainer(crash_on_call=3)
    with pytest.raises(KeyboardInterrupt):
        run_grid(empty, empty, empty, state, trainer=first, show_progress=False)
    names = [c.name for c in grid_configs()]
    registry = json.loads((state / REGISTRY_NAME).read_text())
    assert sorted(registry["fits"]) == sorted(names[:2])
    assert not (state / names[2] / "DONE").exists()  # interrupted config left unfinished

    second = FakeTrainer()
    result = run_grid(empty, empty, empty, state, trainer=second, show_progress=False)
    assert result.skipped == names[:2]
    assert second.calls == names[2:] == result.trained  # the interrupted one is redone
    assert result.registry["name"].to_list() == names
    assert result.best["name"] == BEST and result.best["val_macro_f1"] == 1.0
    rec = json.loads((state / REGISTRY_NAME).read_text())["fits"][BEST]
    assert {"config", "fit_id", "val_macro_f1", "test_metrics", "wall_s"} <= set(rec)
    assert rec["config"]["depth"] == 5 and rec["config"]["class_weighting"] == "inverse"

    third = FakeTrainer()
    result = run_grid(empty, empty, empty, state, trainer=third, show_progress=False)
    assert third.calls == [] and result.skipped == names and result.best["name"] == BEST

    # a state_dir made with other run settings is refused, not silently reused
    with pytest.raises(ValueError, match="fresh state_dir"):
        run_grid(empty, empty, empty, state, trainer=FakeTrainer(), subset=200, show_progress=False)

    # a checkpoint that no longer matches its recorded fit_id is retrained
    (state / names[5] / "model.pt").write_bytes(b"corrupted")
    fourth = FakeTrainer()
    run_grid(empty, empty, empty, state, trainer=fourth, show_progress=False)
    assert fourth.calls == [names[5]]


def test_run_grid_uses_train_dmpnn_by_default(monkeypatch, tmp_path):
    fake = FakeTrainer()
    monkeypatch.setattr("warehouse.molecular.grid.train_dmpnn", fake)
    empty = pl.DataFrame()
    result = run_grid(
        empty, empty, empty, tmp_path, configs=grid_configs()[:2], show_progress=False
    )
    assert fake.calls == [c.name for c in grid_configs()[:2]] and result.registry.height == 2

"""The molecular fit store and the D-MPNN embedding cache verify their checksums: a corrupted
entry is logged, counted and recomputed, and the values returned are the right ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from warehouse.files import recomputed_since
from warehouse.molecular import fits as fit_store
from warehouse.molecular.baselines import SPLITS, FitResult
from warehouse.molecular.labels import TASTE_CLASSES


def _molecules() -> pl.DataFrame:
    smiles = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CO"]
    rows = [
        (f"m{i}", i + 1, s, TASTE_CLASSES[i % 5], SPLITS[i % 3]) for i, s in enumerate(smiles * 2)
    ]
    return pl.DataFrame(
        rows,
        schema=["molecule_row_key", "file_row_number", "canonical_smiles", "taste_class", "split"],
        orient="row",
    )


def _fake_training(calls: list[int]):
    def train(train, val, test, *, seed, fingerprints):
        calls.append(1)
        frames = {"train": train, "val": val, "test": test}
        out = {}
        for name in ("lightgbm", "random_forest"):
            proba = {s: np.full((f.height, 5), 0.2) for s, f in frames.items()}
            y = {s: np.array(f[f.columns[-1]].to_list(), dtype=object) for s, f in frames.items()}
            labels = {
                s: np.array([TASTE_CLASSES[0]] * f.height, dtype=object) for s, f in frames.items()
            }
            out[name] = FitResult(name, name.ljust(64, "0"), {}, proba, labels, y, 0.0)
        return out

    return train


def test_a_corrupted_fingerprint_fit_is_retrained(tmp_path: Path, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(fit_store, "train_fingerprint_models", _fake_training(calls))
    mols = _molecules()
    first = fit_store.train_and_register(mols, None, root=tmp_path, dmpnn_dir=tmp_path / "d")
    reused = fit_store.train_and_register(mols, None, root=tmp_path, dmpnn_dir=tmp_path / "d")
    assert len(calls) == 1  # a verified store is reused
    # the same table, columns in the same order, whether trained or read back (sorted keys)
    assert reused.columns == first.columns == [*fit_store.FIT_COLUMNS, "note"]
    assert reused.equals(first)
    row = first.row(0, named=True)
    stored = tmp_path / row["fit_id"] / "predictions.npz"
    frames = fit_store.split_frames(mols)
    good = fit_store.proba_for(row, frames, tmp_path)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte of the stored probabilities
    stored.write_bytes(bytes(data))
    with pytest.raises(Exception, match="fail their checksum"):
        fit_store.proba_for(row, frames, tmp_path)
    again = fit_store.train_and_register(mols, None, root=tmp_path, dmpnn_dir=tmp_path / "d")
    assert len(calls) == 2  # retrained, not trusted
    assert [line["entry"] for line in recomputed_since({tmp_path: 0})] == [str(stored)]
    new_row = again.row(0, named=True)
    got = fit_store.proba_for(new_row, frames, tmp_path)
    for s in SPLITS:
        np.testing.assert_array_equal(got[s], good[s])


def test_a_corrupted_embedding_is_recomputed(tmp_path: Path, monkeypatch, caplog) -> None:
    pytest.importorskip("chemprop")
    from warehouse.molecular import dmpnn

    calls: list[int] = []

    def fake_embed(checkpoint, smiles):
        calls.append(1)
        return np.arange(len(smiles) * 4, dtype=np.float32).reshape(len(smiles), 4)

    monkeypatch.setattr(dmpnn, "embed_dmpnn", fake_embed)
    ckpt = tmp_path / "best.ckpt"
    ckpt.write_bytes(b"a stand-in checkpoint")
    smiles = ["CCO", "CCN", "CCC"]
    first = fit_store.cached_dmpnn_embedding(ckpt, smiles, tmp_path).vectors
    (entry,) = (tmp_path / "embeddings").rglob("*.npy")
    np.save(entry, np.ones((3, 4), np.float32))  # wrong values, a valid array of the right shape
    with caplog.at_level("WARNING", logger="warehouse.cache"):
        again = fit_store.cached_dmpnn_embedding(ckpt, smiles, tmp_path).vectors
    assert len(calls) == 2 and again.tobytes() == first.tobytes()
    assert [r for r in caplog.records if str(entry) in r.getMessage()]
    assert [line["entry"] for line in recomputed_since({tmp_path: 0})] == [str(entry)]
    fit_store.cached_dmpnn_embedding(ckpt, smiles, tmp_path)
    assert len(calls) == 2  # the rewritten entry verifies

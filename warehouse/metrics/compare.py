"""Paired model comparisons on per-pair credits (docs/benchmark.md section 4, "ours").

Conventions:

* Inputs are per-pair credit vectors (0, 0.5, 1), one entry per within-category pair, from
  :func:`warehouse.metrics.core.pairwise_credits`. Two models are compared on the SAME pairs:
  credit tables (polars or Arrow) are aligned on ``(category, code_i, code_j)`` when both carry
  product codes, else on ``(category, i, j)``; plain arrays are aligned by position.
  Misaligned inputs raise.
* ``diff`` = accuracy(a) - accuracy(b) = mean of the per-pair credit differences ``d``.
* Paired bootstrap: one ``default_rng(seed)`` draws ``integers(0, P, (n_boot, P))`` pair indices
  (row by row); CI = percentile interval of the resampled mean differences. Pairs sharing a
  product are not independent, so this CI is somewhat narrower than a product-level bootstrap;
  use it to rank models, not as the main-table interval.
* Sign-flip permutation test: a separate ``default_rng(seed)`` draws ``integers(0, 2,
  (n_perm, P))`` sign patterns; two-sided p = (1 + #{|mean(s*d)| >= |mean(d)|}) / (n_perm + 1).
* Holm step-down adjustment over all model pairs; a lead is ``resolved`` when its Holm p-value
  is below ``alpha`` AND the bootstrap CI excludes 0.
All sums over credits are exact (half-integers), so results do not depend on summation order.

``method`` picks how the CI and p-value are obtained: ``"pair_bootstrap"`` (the above; the
default here, so existing outputs are unchanged) or a product-level method of
:mod:`.paired`, ``"ustat_t"`` (the recommended default, docs/statistics.md) or
``"distinct_percentile"``. Product-level methods need each pair's products: taken from the
first credit frame (``code_i, code_j`` or ``i, j``) or given as ``products`` (columns
``category, product_a, product_b``, one row per credit entry); their tables add the columns
``ci_method`` and ``ci_note``. Holm and ``resolved`` are applied the same way.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from .core import as_polars
from .paired import (
    PRODUCT_METHODS,
    distinct_bootstrap_differences,
    pair_structure,
    ustat_differences,
)

_CHUNK = 1000
COMPARE_METHODS = ("pair_bootstrap", *PRODUCT_METHODS)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("pvalues must be 1-D")
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def _tables(credits: Sequence[object]) -> list[pl.DataFrame] | None:
    """The credit inputs as polars frames when every one is a table (polars or Arrow)."""
    if all(isinstance(c, pl.DataFrame | pa.Table) for c in credits):
        return [as_polars(c, "credit table") for c in credits]
    return None


def _credit_matrix(credits: Sequence[object]) -> np.ndarray:
    """Align credit inputs and return a ``(P, n_models)`` float matrix."""
    frames = _tables(credits)
    if frames is not None:
        has_codes = all({"code_i", "code_j"} <= set(f.columns) for f in frames)
        keys = ["category", "code_i", "code_j"] if has_codes else ["category", "i", "j"]
        ref = list(zip(*(frames[0][k].to_list() for k in keys), strict=True))
        cols = []
        for f in frames:
            rows = list(zip(*(f[k].to_list() for k in keys), strict=True))
            by_key = dict(zip(rows, f["credit"].cast(pl.Float64).to_list(), strict=True))
            if len(by_key) != len(rows):
                raise ValueError(f"duplicate pair keys {keys} in a credit table")
            col = np.array([by_key.get(k, np.nan) for k in ref], dtype=np.float64)
            if len(f) != len(ref) or np.isnan(col).any():
                raise ValueError(f"credit tables do not cover the same pairs (keys {keys})")
            cols.append(col)
        return np.column_stack(cols)
    arrays = [np.asarray(c, dtype=np.float64) for c in credits]
    if any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) != 1:
        raise ValueError("credit arrays must be 1-D and of equal length")
    mat = np.column_stack(arrays)
    if not np.isfinite(mat).all():
        raise ValueError("credit arrays contain NaN or infinite values")
    return mat


def _chunked_means(mat: np.ndarray, n_rows: int, seed: int, weights) -> np.ndarray:
    """``(n_rows, n_columns)`` weighted means ``weights(rng, rows, n_pairs) @ mat / n_pairs``,
    drawn ``_CHUNK`` rows at a time in float32 (exact for the half-integer credits)."""
    n_pairs = mat.shape[0]
    rng = np.random.default_rng(seed)
    m32 = mat.astype(np.float32)
    out = np.empty((n_rows, mat.shape[1]))
    for start in range(0, n_rows, _CHUNK):
        rows = min(_CHUNK, n_rows - start)
        w = weights(rng, rows, n_pairs).astype(np.float32)
        out[start : start + rows] = (w @ m32).astype(np.float64) / n_pairs
    return out


def _resample_counts(rng: np.random.Generator, rows: int, n_pairs: int) -> np.ndarray:
    """How often each pair is drawn in each of ``rows`` bootstrap resamples."""
    idx = rng.integers(0, n_pairs, (rows, n_pairs))
    flat = (idx + n_pairs * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n_pairs).reshape(rows, n_pairs)


def _random_signs(rng: np.random.Generator, rows: int, n_pairs: int) -> np.ndarray:
    return rng.integers(0, 2, (rows, n_pairs)).astype(np.float32) * 2 - 1


def _boot_means(mat: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Resampled mean credit per model: ``(n_boot, n_models)``; exact (float32 half-integers)."""
    return _chunked_means(mat, n_boot, seed, _resample_counts)


def _signflip_stats(diffs: np.ndarray, n_perm: int, seed: int) -> np.ndarray:
    """Sign-flipped mean differences ``(n_perm, n_comparisons)`` for ``diffs`` ``(P, n_comp)``."""
    return _chunked_means(diffs, n_perm, seed, _random_signs)


def _pair_products(credits: Sequence[object], products: object | None) -> tuple:
    """``(category, product_a, product_b)`` per credit row, for product-level methods."""
    if products is not None:
        cols = {
            c: np.asarray(products[c], dtype=object) for c in ("category", "product_a", "product_b")
        }
        return cols["category"], cols["product_a"], cols["product_b"]
    frames = _tables(credits)
    if frames is not None:
        ref = frames[0]
        a, b = (
            ("code_i", "code_j")
            if all({"code_i", "code_j"} <= set(f.columns) for f in frames)
            else ("i", "j")
        )
        return tuple(np.asarray(ref[c].to_list(), dtype=object) for c in ("category", a, b))
    raise ValueError(
        "product-level comparison methods need each pair's products: pass pairwise_credits "
        "frames or products=(category, product_a, product_b) aligned with the credits"
    )


def _compare(
    mat: np.ndarray,
    pairs: list[tuple[int, int]],
    n_boot: int,
    n_perm: int,
    seed: int,
    alpha: float,
    method: str = "pair_bootstrap",
    products: tuple | None = None,
) -> list[dict[str, float]]:
    n_pairs = mat.shape[0]
    if method != "pair_bootstrap":
        if method not in PRODUCT_METHODS:
            raise ValueError(f"unknown comparison method {method!r}; choose from {COMPARE_METHODS}")
        structure = pair_structure(*products)
        if method == "ustat_t":
            res = ustat_differences(mat, structure, pairs, alpha)
        else:
            res = distinct_bootstrap_differences(mat, structure, pairs, n_boot, seed, alpha)
        acc = mat.sum(axis=0) / n_pairs
        return [
            {"acc_a": float(acc[a]), "acc_b": float(acc[b]), **r, "ci_method": method}
            for (a, b), r in zip(pairs, res, strict=True)
        ]
    acc = mat.sum(axis=0) / n_pairs
    boot = _boot_means(mat, n_boot, seed)
    diffs = np.column_stack([mat[:, a] - mat[:, b] for a, b in pairs])
    flips = _signflip_stats(diffs, n_perm, seed)
    rows = []
    for c, (a, b) in enumerate(pairs):
        obs = diffs[:, c].sum() / n_pairs
        bd = boot[:, a] - boot[:, b]
        lo, hi = np.percentile(bd, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        if obs == 0:
            p_value = 1.0
        else:
            extreme = int((np.abs(flips[:, c]) >= abs(obs) - 1e-12).sum())
            p_value = (1 + extreme) / (n_perm + 1)
        rows.append(
            {
                "acc_a": float(acc[a]),
                "acc_b": float(acc[b]),
                "diff": float(obs),
                "ci_lo": float(lo),
                "ci_hi": float(hi),
                "p_value": float(p_value),
            }
        )
    return rows


def compare_models(
    credits: Mapping[str, object],
    *,
    n_boot: int = 10000,
    n_perm: int = 10000,
    seed: int = 42,
    alpha: float = 0.05,
    method: str = "pair_bootstrap",
    products: object | None = None,
) -> pl.DataFrame:
    """All pairwise model comparisons, Holm-corrected (``method``: module docstring).

    ``credits``: model name -> per-pair credits (polars/Arrow table from ``pairwise_credits`` or
    array).
    One row per unordered model pair (in mapping order, ``model_a`` before ``model_b``):
    ``model_a, model_b, acc_a, acc_b, diff, ci_lo, ci_hi, p_value, p_holm, resolved``.
    All comparisons share the same bootstrap and sign-flip draws (seed ``seed``).
    """
    names = list(credits)
    if len(names) < 2:
        raise ValueError("need at least two models to compare")
    mat = _credit_matrix([credits[n] for n in names])
    pairs = list(itertools.combinations(range(len(names)), 2))
    prods = None
    if method != "pair_bootstrap":
        prods = _pair_products([credits[n] for n in names], products)
    rows = _compare(mat, pairs, n_boot, n_perm, seed, alpha, method, prods)
    p_value = np.array([r["p_value"] for r in rows], dtype=np.float64)
    p_holm = holm(p_value)
    ci_lo = np.array([r["ci_lo"] for r in rows], dtype=np.float64)
    ci_hi = np.array([r["ci_hi"] for r in rows], dtype=np.float64)
    resolved = (p_holm < alpha) & ((ci_lo > 0) | (ci_hi < 0))  # numpy: NaN compares False
    labels = ("ci_method", "ci_note")
    floats = [k for k in rows[0] if k not in labels]
    cols = [
        pl.Series("model_a", [names[a] for a, _ in pairs], dtype=pl.String),
        pl.Series("model_b", [names[b] for _, b in pairs], dtype=pl.String),
        *(pl.Series(k, [r[k] for r in rows], dtype=pl.Float64) for k in floats),
        pl.Series("p_holm", p_holm, dtype=pl.Float64),
        pl.Series("resolved", resolved, dtype=pl.Boolean),
    ]
    if method != "pair_bootstrap":  # keep the product-level labels last
        cols += [pl.Series(k, [r[k] for r in rows], dtype=pl.String) for k in labels]
    return pl.DataFrame(cols)

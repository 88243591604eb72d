"""MMRF distance baselines: distance to the category's reference centroid (BENCHMARK.md §3).

No training and no labels, so there are no folds: every analog's score is computed once from the
features of all products (transductive, as published). Per *modality* (each letter of the feature
set; ``N`` splits into one sub-modality per subset with that subset's nutrition columns from
``seeds/nutrition_subset_columns.csv``):

1. the rows of every product (analogs and references) that has the modality; for ``N``, only the
   products of that subset's categories. A reference row that is all NaN = modality absent;
2. StandardScaler fitted on those rows (population sd; constant columns get scale 1);
3. per category, centroid = mean of the standardized reference rows;
4. distance of each product to its category's centroid: cosine (``1 - u.v / (|u||v|)``, NaN for a
   zero vector) or Euclidean;
5. within-category rank normalization over every product of the category with a distance
   (references included, as published): ``#{d' <= d} / (count + 1)``;
6. score = ``-`` mean over the modalities available for the product (equal weights).

An analog with no available modality is an error (no silent fallback).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from warehouse.ranking.cache import FitCache, fit_record, library_versions
from warehouse.ranking.design import SUBSET_ORDER, Design, DesignError
from warehouse.ranking.loocv import FitResult, Job, fit_key, result_from_cache
from warehouse.ranking.preprocess import scaler_stats


def _distances(x: np.ndarray, cat: np.ndarray, is_ref: np.ndarray, metric: str) -> np.ndarray:
    """Distance of each row to its category's reference centroid (NaN where undefined)."""
    present = ~np.isnan(x).any(axis=1)
    out = np.full(len(x), np.nan)
    if present.sum() == 0:
        return out
    mean, scale = scaler_stats(x[present])
    xs = (x - mean) / scale
    for c in np.unique(cat[present]):
        members = present & (cat == c)
        refs = members & is_ref
        if not refs.any():
            continue
        centroid = xs[refs].mean(axis=0)
        rows = np.flatnonzero(members)
        v = xs[rows]
        if metric == "euclidean":
            out[rows] = np.sqrt(((v - centroid) ** 2).sum(axis=1))
        else:
            norms = np.linalg.norm(v, axis=1) * np.linalg.norm(centroid)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[rows] = np.where(norms > 0, 1.0 - (v @ centroid) / norms, np.nan)
    return out


def _rank_normalize(d: np.ndarray, cat: np.ndarray) -> np.ndarray:
    out = np.full(len(d), np.nan)
    ok = np.isfinite(d)
    for c in np.unique(cat[ok]):
        rows = np.flatnonzero(ok & (cat == c))
        vals = np.sort(d[rows])
        out[rows] = np.searchsorted(vals, d[rows], side="right") / (len(vals) + 1)
    return out


def mmrf_scores(design: Design, block_names: Sequence[str], metric: str) -> tuple[np.ndarray, dict]:
    """Scores of the analogs (design row order) and the modalities used per analog."""
    if metric not in ("cosine", "euclidean"):
        raise DesignError(f"distance metric must be 'cosine' or 'euclidean', got {metric!r}")
    if design.reference_keys is None or design.reference_keys.height == 0:
        raise DesignError("distance baselines need reference products (reference_keys/blocks)")
    n = design.n
    rk = design.reference_keys
    cat = np.concatenate([design.categories.astype(str), np.array(rk["category"].to_list(), str)])
    subset = np.concatenate(
        [np.array(design.keys["subset"].to_list(), str), np.array(rk["subset"].to_list(), str)]
    )
    is_ref = np.r_[np.zeros(n, bool), np.ones(rk.height, bool)]
    normalized = []
    names = []
    for b in block_names:
        if b not in design.reference_blocks:
            raise DesignError(f"distance baseline: no reference rows for block {b!r}")
        x = np.vstack([design.block(b), design.reference_blocks[b]])
        if b.split(":")[0] == "N":
            if not design.subset_columns:
                raise DesignError(
                    "distance baseline on N needs the per-subset nutrition columns "
                    "(seeds/nutrition_subset_columns.csv)"
                )
            for s in SUBSET_ORDER:
                cols = design.subset_columns.get(s)
                if not cols:
                    continue
                missing = [c for c in cols if c not in design.nutrition_columns]
                if missing:
                    raise DesignError(f"subset {s}: nutrition columns {missing} are not in N")
                idx = [design.nutrition_columns.index(c) for c in cols]
                xs = np.full((len(x), len(idx)), np.nan)
                rows = subset == s
                xs[rows] = x[rows][:, idx]
                normalized.append(_rank_normalize(_distances(xs, cat, is_ref, metric), cat))
                names.append(f"{b}/{s}")
        else:
            normalized.append(_rank_normalize(_distances(x, cat, is_ref, metric), cat))
            names.append(b)
    mat = np.vstack(normalized)[:, :n]  # modalities x analogs
    avail = np.isfinite(mat)
    if not avail.any(axis=0).all():
        r = int(np.argmin(avail.any(axis=0)))
        key = design.keys.row(r, named=True)
        raise DesignError(
            f"distance baseline: analog {key['category']}:{key['product_code']} has no modality "
            f"among {names} (no vector, or no reference of its category with one)"
        )
    with np.errstate(invalid="ignore"):
        scores = -np.nanmean(mat, axis=0)
    return scores, {"modalities": names, "n_modalities": avail.sum(axis=0)}


def run_distance(
    design: Design, jobs: Sequence[Job], cache: FitCache | None = None
) -> list[FitResult]:
    cache = cache or FitCache(None)
    out = []
    for job in jobs:
        cfg, ch, fid = fit_key(design, job)
        hit = result_from_cache(job, cfg, ch, fid, cache)
        if hit is None:
            settings = cfg["settings"]
            scores, info = mmrf_scores(design, job.feature_set.block_names, str(settings["metric"]))
            arrays = {"predictions": scores, "n_modalities": info["n_modalities"]}
            meta = fit_record(
                job.model,
                job.feature_set.name,
                cfg["protocol"],
                cfg,
                ch,
                library_versions(),
                design.n,
                design.data_origin,
                modalities=info["modalities"],
            )
            cache.put(fid, arrays, meta)
            hit = FitResult(
                job.model,
                job.feature_set.name,
                str(cfg["protocol"]),
                cfg,
                ch,
                fid,
                scores,
                arrays,
                meta,
                False,
            )
        out.append(hit)
    return out

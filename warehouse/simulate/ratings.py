"""The rating model: latent similarity, ordinal cut points, and exact realized panel means.

Model (latent scale, one value per respondent r and product p of a group)::

    L[r, p] = m[p] + b[r] + e[r, p],  b[r] ~ N(0, respondent_sd) per respondent id,
                                      e[r, p] ~ N(0, noise_sd * a[r]),
                                      a[r] = exp(noise_jitter * N(0, 1)) (attentiveness)
    rating  = 1 + #{k : L[r, p] + delta[p] >= c_k}          (integer 1..7)

* ``m[p]``: category level + within-category spread x ``sinh(tail z) / tail`` with ``z`` the
  Blom score of the public gold rank (a few clearly better or worse products, as real categories
  have); with ``plant_signal`` instead ``z`` = the standardized feature and no tail transform
  (linear in the feature on the latent scale). References sit above the category level, above its
  best analog and at an expected rating of at least 5.
* ``c_1..c_6``: quantiles of the pooled analog latents at the cumulative *published* rating
  marginal (``alpha_coincidence.csv``: the 1..7 shares of all block ratings), so the simulated
  rating distribution matches the real one, dip at 4 included.
* ``delta[p]``: the exact-mean step. Each product gets a target rating *sum*
  ``T[p] = round(n_p * t_p)`` with ``t_p = E[rating | m_p]``, pushed apart along the gold order
  (minimum gap ``min_gap``) so that ``T[p] / n_p`` is strictly increasing in the gold rank and
  equal for tied products (which share a block, hence ``n_p``). ``delta[p]`` is the shift closest
  to 0 at which the realized integer sum equals ``T[p]``: it only removes the sampling mean of
  that product's noise, leaving every within-product pattern (respondent bias, idiosyncratic
  noise, the ordinal cut) intact. A +/-1 fallback on the ratings nearest a cut point handles float
  coincidences; the result is asserted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from warehouse.simulate.design import Block, Category, stream

TIE_EPS = 1e-10


@dataclass(frozen=True)
class NoiseParams:
    """Tuned so per-block ordinal alpha, LOO panelist accuracy and split-half agreement land on
    the published values (see ``calibration_summary``). Latent units; ``noise_sd`` sets the scale.
    """

    within_spread: float = 0.27  # sd of analog latent means within a category (x Blom score)
    spread_jitter: float = 0.35  # lognormal sd of the per-category spread multiplier
    tail: float = 1.4  # heavier tails of the within-category means: score -> sinh(tail z) / tail
    category_sd: float = 0.9  # sd of category levels
    respondent_sd: float = 0.55  # respondent scale bias (per respondent id, all categories)
    noise_sd: float = 1.0  # idiosyncratic noise (geometric mean over respondents)
    noise_jitter: float = 0.5  # lognormal sd of a per-respondent noise multiplier (attentiveness)
    reference_offset: float = 1.8  # references: max(level + this, best analog + this / 2, E[r]=5)
    min_gap: float = 0.03  # minimal gap between gold-consecutive target means (rating scale)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


DEFAULT_PARAMS = NoiseParams()


@dataclass
class GroupRatings:
    """Ratings of one respondent group (a block or a filler group) of a category."""

    category: str
    block_id: int
    respondents: np.ndarray  # (n_r,)
    codes: tuple[int, ...]  # (n_k,)
    similarity: np.ndarray  # (n_r, n_k) int
    latent: np.ndarray  # (n_r, n_k) latent incl. delta (drives the other rating columns)


@dataclass
class SimilarityResult:
    groups: list[GroupRatings]
    target_mean: dict[tuple[str, int], float]  # realized panel mean (T / n) per product
    latent_mean: dict[tuple[str, int], float]
    cutpoints: np.ndarray
    n_fallback_adjustments: int


def blom_scores(ranks: np.ndarray) -> np.ndarray:
    """Expected normal order statistics (Blom) of average ranks 1..n (ties share a score)."""
    ranks = np.asarray(ranks, dtype=float)
    n = ranks.size
    return ndtri((ranks - 0.375) / (n + 0.25))


def _analog_scores(
    cat: Category, signal: dict[tuple[str, int], float] | None, rng: np.random.Generator
) -> dict[int, float]:
    codes = list(cat.analog_codes)
    if signal is None:
        ranks = np.array([cat.gold_rank[c] for c in codes])
        return dict(zip(codes, blom_scores(ranks), strict=True))
    f = np.array([signal[(cat.name, c)] for c in codes], dtype=float)
    sd = f.std()
    z = (f - f.mean()) / sd if sd > 0 else np.zeros_like(f)
    # linear in the feature; a tiny seeded jitter breaks feature ties (never the code order)
    z = np.clip(z, -2.5, 2.5) + 1e-3 * rng.standard_normal(z.size)
    return dict(zip(codes, z, strict=True))


def gold_units(cat: Category, scores: dict[int, float], signal: bool) -> list[tuple[int, ...]]:
    """Analogs grouped into tie units, in ascending gold order."""
    if signal:
        return [(c,) for c in sorted(scores, key=lambda c: scores[c])]
    by_rank: dict[float, list[int]] = {}
    for code in cat.analog_codes:
        by_rank.setdefault(cat.gold_rank[code], []).append(code)
    return [tuple(v) for _, v in sorted(by_rank.items())]


def expected_rating(mu: np.ndarray, cut: np.ndarray, sigma: float) -> np.ndarray:
    mu = np.asarray(mu, dtype=float)
    return 1.0 + ndtr((mu[..., None] - cut) / sigma).sum(axis=-1)


def _shift_to_sum(latent: np.ndarray, cut: np.ndarray, target: int) -> float:
    """Shift closest to 0 at which ``sum(1 + #{k: latent + d >= c_k}) == target``."""
    n = latent.size
    k = target - n
    jumps = np.sort((cut[None, :] - latent[:, None]).ravel())
    lo = jumps[k - 1] if k > 0 else -np.inf
    hi = jumps[k] if k < jumps.size else np.inf
    eps = 1e-7 if not np.isfinite(hi - lo) else min(1e-7, (hi - lo) / 4.0)
    return float(np.clip(0.0, lo + eps, hi - eps))


def _groups(cats: list[Category]) -> list[tuple[Category, Block]]:
    """Every respondent group (published blocks, then filler groups) of every category, in the
    order of the result's ``groups``: group index ``g`` of every per-group list below."""
    return [(cat, blk) for cat in cats for blk in cat.blocks]


def _latent_means(
    cats: list[Category],
    params: NoiseParams,
    signal: dict[tuple[str, int], float] | None,
    rng: np.random.Generator,
) -> tuple[dict[tuple[str, int], float], dict[str, dict[int, float]], np.ndarray]:
    """Analog latent means, the per-category scores behind them, and the category levels.

    Stratified draws: the sets of category levels and spread multipliers are fixed normal
    quantiles; the seed only decides which category gets which (keeps seeds comparable)."""
    means: dict[tuple[str, int], float] = {}
    scores_by_cat: dict[str, dict[int, float]] = {}
    k = len(cats)
    q = ndtri((np.arange(1, k + 1) - 0.375) / (k + 0.25))
    levels = params.category_sd * q[rng.permutation(k)]
    spreads = params.within_spread * np.exp(params.spread_jitter * q[rng.permutation(k)])
    for cat, level, spread in zip(cats, levels, spreads, strict=True):
        scores = _analog_scores(cat, signal, rng)
        scores_by_cat[cat.name] = scores
        for code, z in scores.items():
            # gold mode: heavier tails; plant_signal mode: linear in the feature (latent scale)
            zz = np.sinh(params.tail * z) / params.tail if params.tail > 0 and not signal else z
            means[(cat.name, code)] = level + spread * float(zz)
    return means, scores_by_cat, levels


def _group_noise(
    groups: list[tuple[Category, Block]], params: NoiseParams, seed: int
) -> list[np.ndarray]:
    """Per group: respondent bias + idiosyncratic noise scaled by attentiveness (latent units)."""
    rng_b = stream(seed, "respondent-bias")
    rng_e = stream(seed, "noise")
    pool = max(int(blk.respondents.max()) for _, blk in groups) + 1
    bias = params.respondent_sd * rng_b.standard_normal(pool)
    attentiveness = np.exp(params.noise_jitter * rng_b.standard_normal(pool))
    noises: list[np.ndarray] = []
    for _, blk in groups:
        e = rng_e.standard_normal((blk.n_respondents, len(blk.codes)))
        e *= params.noise_sd * attentiveness[blk.respondents][:, None]
        noises.append(bias[blk.respondents][:, None] + e)
    return noises


def _cutpoints(
    groups: list[tuple[Category, Block]],
    means: dict[tuple[str, int], float],
    noises: list[np.ndarray],
    marginal: np.ndarray,
) -> np.ndarray:
    """Cut points from the published marginal over analog ratings in published blocks."""
    pooled = []
    for (cat, blk), noise in zip(groups, noises, strict=True):
        if blk.is_filler:
            continue
        refs = set(cat.reference_codes)
        cols = [i for i, c in enumerate(blk.codes) if c not in refs]
        m = np.array([means[(cat.name, blk.codes[i])] for i in cols])
        pooled.append((m[None, :] + noise[:, cols]).ravel())
    cum = np.cumsum(np.asarray(marginal, dtype=float))[:6]
    return np.quantile(np.concatenate(pooled), np.clip(cum, 1e-6, 1 - 1e-6))


def _latent_sd(params: NoiseParams) -> float:
    """Total latent sd around a product mean (respondent bias and jittered noise)."""
    noise_var = params.noise_sd**2 * float(np.exp(2.0 * params.noise_jitter**2))
    return float(np.sqrt(params.respondent_sd**2 + noise_var))


def _place_references(
    cats: list[Category],
    levels: np.ndarray,
    means: dict[tuple[str, int], float],
    cut: np.ndarray,
    sigma: float,
    params: NoiseParams,
) -> None:
    """References: above the category level, above its best analog, rated >= 5 on average."""
    lo, hi = -10.0, 10.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if expected_rating(np.array(mid), cut, sigma) < 5.0 else (lo, mid)
    floor5 = hi
    for cat, level in zip(cats, levels, strict=True):
        top = max(means[(cat.name, c)] for c in cat.analog_codes)
        ref = max(level + params.reference_offset, top + 0.5 * params.reference_offset, floor5)
        for j, code in enumerate(cat.reference_codes):
            means[(cat.name, code)] = ref - 0.25 * j


def _locations(
    groups: list[tuple[Category, Block]],
) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """Where each product's ratings live: (group index, column) per group that rates it."""
    where: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for gi, (cat, blk) in enumerate(groups):
        for col, code in enumerate(blk.codes):
            where.setdefault((cat.name, code), []).append((gi, col))
    return where


def _category_targets(
    cat: Category,
    scores: dict[int, float],
    is_signal: bool,
    expected: dict[tuple[str, int], float],
    n_raters: dict[tuple[str, int], int],
    min_gap: float,
) -> dict[tuple[str, int], int]:
    """Target rating sums of one category: strictly increasing along the gold order, equal
    within ties; references at their expected rating (clipped to the 1..7 scale)."""
    target: dict[tuple[str, int], int] = {}
    prev_t, prev_mean = -np.inf, -np.inf
    for unit in gold_units(cat, scores, is_signal):
        ns = {n_raters[(cat.name, c)] for c in unit}
        if len(ns) != 1:
            raise AssertionError(f"{cat.name}: tied products {unit} have different raters")
        n = ns.pop()
        t = max(expected[(cat.name, unit[0])], prev_t + min_gap)
        total = int(round(n * t))
        while total / n <= prev_mean + 1e-9:
            total += 1
        if total > 7 * n:
            raise AssertionError(f"{cat.name}: target means exceed the 1..7 scale")
        for c in unit:
            target[(cat.name, c)] = total
        prev_t, prev_mean = t, total / n
    for code in cat.reference_codes:
        n = n_raters[(cat.name, code)]
        target[(cat.name, code)] = int(min(7 * n, max(n, round(n * expected[(cat.name, code)]))))
    return target


def _nearest_to_cut(
    sims: list[np.ndarray],
    finals: list[np.ndarray],
    locs: list[tuple[int, int]],
    cut_ext: np.ndarray,
    step: int,
    key: tuple[str, int],
) -> tuple[int, int, int]:
    """(group, column, row) of the rating closest to moving one step (+1 or -1) across a cut."""
    best = None
    for g, col in locs:
        r = sims[g][:, col]
        lat = finals[g][:, col]
        if step > 0:
            dist = np.where(r < 7, cut_ext[np.minimum(r, 6)] - lat, np.inf)
        else:
            dist = np.where(r > 1, lat - cut_ext[r - 1], np.inf)
        i = int(np.argmin(dist))
        if best is None or dist[i] < best[0]:
            best = (float(dist[i]), g, col, i)
    if best is None or not np.isfinite(best[0]):
        raise AssertionError(f"cannot reach the target sum of {key}")
    return best[1], best[2], best[3]


def _exact_ratings(
    latents: list[np.ndarray],
    where: dict[tuple[str, int], list[tuple[int, int]]],
    target: dict[tuple[str, int], int],
    cut: np.ndarray,
) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    """Shift each product's latents to its target sum, cut them into ratings, and fix float
    coincidences by +/-1 on the ratings nearest a cut point: (latents, ratings, n adjusted)."""
    finals = [lat.copy() for lat in latents]
    for key, locs in where.items():
        values = np.concatenate([latents[g][:, col] for g, col in locs])
        d = _shift_to_sum(values, cut, target[key])
        for g, col in locs:
            finals[g][:, col] += d
    sims = [(1 + (f[..., None] >= cut).sum(axis=-1)).astype(np.int64) for f in finals]
    n_adjust = 0
    cut_ext = np.concatenate([[-np.inf], cut, [np.inf]])
    for key, locs in where.items():
        diff = target[key] - sum(int(sims[g][:, col].sum()) for g, col in locs)
        while diff != 0:
            step = 1 if diff > 0 else -1
            g, col, i = _nearest_to_cut(sims, finals, locs, cut_ext, step, key)
            sims[g][i, col] += step
            diff -= step
            n_adjust += 1
    return finals, sims, n_adjust


def simulate_similarity(
    cats: list[Category],
    marginal: np.ndarray,
    seed: int,
    params: NoiseParams = DEFAULT_PARAMS,
    signal: dict[tuple[str, int], float] | None = None,
) -> SimilarityResult:
    groups = _groups(cats)
    means, scores_by_cat, levels = _latent_means(cats, params, signal, stream(seed, "levels"))
    noises = _group_noise(groups, params, seed)
    cut = _cutpoints(groups, means, noises, marginal)
    sigma = _latent_sd(params)
    _place_references(cats, levels, means, cut, sigma, params)
    latents = [
        np.array([means[(cat.name, c)] for c in blk.codes])[None, :] + noise
        for (cat, blk), noise in zip(groups, noises, strict=True)
    ]
    where = _locations(groups)
    n_raters = {key: sum(latents[g].shape[0] for g, _ in locs) for key, locs in where.items()}
    expected = {k: float(expected_rating(np.array(m), cut, sigma)) for k, m in means.items()}
    target: dict[tuple[str, int], int] = {}
    for cat in cats:
        scores = scores_by_cat[cat.name]
        target |= _category_targets(
            cat, scores, signal is not None, expected, n_raters, params.min_gap
        )
    finals, sims, n_adjust = _exact_ratings(latents, where, target, cut)
    return SimilarityResult(
        groups=[
            GroupRatings(
                category=cat.name,
                block_id=blk.block_id,
                respondents=blk.respondents,
                codes=blk.codes,
                similarity=sims[g],
                latent=finals[g],
            )
            for g, (cat, blk) in enumerate(groups)
        ],
        target_mean={k: target[k] / n_raters[k] for k in target},
        latent_mean=means,
        cutpoints=cut,
        n_fallback_adjustments=n_adjust,
    )

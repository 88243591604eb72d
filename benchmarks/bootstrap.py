"""Benchmark: vectorized main-table BCa bootstrap vs a straightforward per-replicate loop.

Usage::

    python benchmarks/bootstrap.py [--n-boot 10000] [--baseline-n-boot 1000]

1. NNLS (BT + Gemini) public out-of-fold file, all six Table-2 metrics (pairwise accuracy,
   Spearman, Kendall tau-b, Recall@1/2/3), BCa 95% intervals with ``--n-boot`` replicates:
   * vectorized: :func:`warehouse.metrics.bca_ci` (timed cold, i.e. including drawing the
     indices, and warm, with the draws cached);
   * baseline: a Python loop over replicates that draws ``rng.integers(0, n_c, n_c)`` per
     category (the spec's literal stream), then scores the replicate with plain-Python pairwise
     accuracy and Recall@k and ``scipy.stats.spearmanr`` / ``kendalltau`` per category; same for
     the 215 jackknife sets. It runs ``--baseline-n-boot`` replicates and its time is
     extrapolated LINEARLY to ``--n-boot`` (replicate time x n_boot / baseline_n_boot +
     jackknife time). Both use the same draws, so the baseline's replicate values are checked
     against the first replicates of the vectorized run.
2. All nine public files: point metrics, macro and pooled accuracy, main-table BCa for the six
   metrics and the per-category BCa table (target: < 10 s in total on 2 cores).

Data: ``$TASTEBENCH_DATA_MIRROR`` (default ``../shared/data`` relative to the repository).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from warehouse.metrics import (  # noqa: E402
    BOOT_METRICS,
    arrays_from_frame,
    bca_ci,
    bca_ci_per_category,
    bootstrap_replicates,
    canonical_order,
    compute_all,
)
from warehouse.metrics import bootstrap as boot_mod  # noqa: E402

OOF = Path("tastebench_public/food_similarity/results/oof_predictions")


class Timer:
    """Wall-clock and process CPU seconds (CPU time is robust to other load on the machine)."""

    def __enter__(self) -> Timer:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0

    def __str__(self) -> str:
        return f"{self.wall:8.3f} s wall ({self.cpu:8.3f} s CPU)"


def mirror_dir() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO_ROOT.parent / "shared" / "data").resolve()


# --------------------------------------------------------------------------- baseline


def _pairwise_py(groups: list[tuple[list[float], list[float]]]) -> float:
    credit = 0.0
    pairs = 0
    for g, p in groups:
        n = len(g)
        for i in range(n):
            for j in range(i + 1, n):
                dg, dp = g[i] - g[j], p[i] - p[j]
                if abs(dg) < 1e-10 or abs(dp) < 1e-10:
                    credit += 0.5
                elif (dg > 0) == (dp > 0):
                    credit += 1.0
                pairs += 1
    return credit / pairs


def _recall_py(groups: list[tuple[list[float], list[float]]], k: int) -> float:
    vals = []
    for g, p in groups:
        best = g.index(max(g))
        pb = p[best]
        m = sum(1 for x in p if x > pb + 1e-10)
        t = sum(1 for x in p if abs(x - pb) < 1e-10)
        vals.append(0.0 if m >= k else min(k - m, t) / t)
    return float(np.mean(vals))


def _corr_scipy(groups: list[tuple[list[float], list[float]]], fn) -> float:
    vals, weights = [], []
    for g, p in groups:
        r = fn(g, p).statistic
        if not np.isnan(r):
            vals.append(r)
            weights.append(len(g))
    return float(np.average(vals, weights=weights)) if vals else float("nan")


def score_plain(groups: list[tuple[list[float], list[float]]]) -> dict[str, float]:
    return {
        "pairwise_accuracy": _pairwise_py(groups),
        "spearman": _corr_scipy(groups, stats.spearmanr),
        "kendall_tau": _corr_scipy(groups, stats.kendalltau),
        "recall_at_1": _recall_py(groups, 1),
        "recall_at_2": _recall_py(groups, 2),
        "recall_at_3": _recall_py(groups, 3),
    }


def baseline(cat, gold, pred, n_boot: int, seed: int = 42) -> dict:
    """Per-replicate loop: returns replicates, jackknife values, and the two timings."""
    order = canonical_order(cat, gold, pred)
    cat, gold, pred = cat[order], gold[order], pred[order]
    names = sorted(set(cat))
    cats = [(gold[cat == c], pred[cat == c]) for c in names]
    theta = score_plain([(list(g), list(p)) for g, p in cats])
    reps = {m: np.empty(n_boot) for m in BOOT_METRICS}
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in range(n_boot):
            groups = []
            for g, p in cats:
                idx = rng.integers(0, len(g), len(g))
                groups.append((list(g[idx]), list(p[idx])))
            for m, v in score_plain(groups).items():
                reps[m][b] = v
        t_boot = time.perf_counter() - t0
        t0 = time.perf_counter()
        jack = {m: np.empty(len(cat)) for m in BOOT_METRICS}
        for r in range(len(cat)):
            keep = np.delete(np.arange(len(cat)), r)
            groups = [
                (list(gold[keep][cat[keep] == c]), list(pred[keep][cat[keep] == c])) for c in names
            ]
            for m, v in score_plain(groups).items():
                jack[m][r] = v
        t_jack = time.perf_counter() - t0
    ci = {m: (theta[m], *boot_mod.bca_interval(theta[m], reps[m], jack[m])) for m in reps}
    return {"reps": reps, "jack": jack, "ci": ci, "t_boot": t_boot, "t_jack": t_jack}


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-boot", type=int, default=10000, help="replicates (default 10000)")
    ap.add_argument(
        "--baseline-n-boot",
        type=int,
        default=1000,
        help="replicates actually run by the slow baseline; its time is "
        "extrapolated linearly to --n-boot (default 1000)",
    )
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)

    oof_dir = mirror_dir() / OOF
    files = sorted(oof_dir.glob("*.csv"))
    if len(files) != 9:
        print(f"expected 9 out-of-fold files in {oof_dir}, found {len(files)}", file=sys.stderr)
        return 2
    nnls_path = oof_dir / "nested_bt_gemini_nnls.csv"
    cat, gold, pred = arrays_from_frame(pl.read_csv(nnls_path))
    print(f"data: {oof_dir}")
    print(
        f"cores available: {os.cpu_count()}; n_boot={args.n_boot}, "
        f"baseline_n_boot={args.baseline_n_boot}, seed={args.seed}"
    )

    # 1a. vectorized, cold (draws not cached) and warm
    boot_mod._draw_cached.cache_clear()
    with Timer() as t_cold:
        fast_ci = bca_ci(cat, gold, pred, n_boot=args.n_boot, seed=args.seed)
    with Timer() as t_warm:
        bca_ci(cat, gold, pred, n_boot=args.n_boot, seed=args.seed)

    # 1b. baseline
    with Timer() as t_base:
        base = baseline(cat, gold, pred, args.baseline_n_boot, args.seed)
    scale = (base["t_boot"] * args.n_boot / args.baseline_n_boot + base["t_jack"]) / (
        base["t_boot"] + base["t_jack"]
    )
    base_wall, base_cpu = t_base.wall * scale, t_base.cpu * scale

    # same stream: baseline replicates == first replicates of the vectorized run
    fast_reps = bootstrap_replicates(cat, gold, pred, n_boot=args.n_boot, seed=args.seed)
    nb = min(args.baseline_n_boot, args.n_boot)
    print(f"\nNNLS (BT+Gemini), main-table BCa 95% CI (vectorized, n_boot={args.n_boot}):")
    print(
        f"  {'metric':18s} {'point':>7s} {'lo':>7s} {'hi':>7s}   max|fast-baseline| "
        f"(first {nb} replicates, jackknife)"
    )
    for m in BOOT_METRICS:
        pt, lo, hi = fast_ci[m]
        d_rep = np.max(np.abs(fast_reps[m]["boot"][:nb] - base["reps"][m][:nb]))
        d_jack = np.max(np.abs(fast_reps[m]["jack"] - base["jack"][m]))
        print(f"  {m:18s} {pt:7.4f} {lo:7.4f} {hi:7.4f}   {d_rep:.1e}, {d_jack:.1e}")
    if args.baseline_n_boot == args.n_boot:
        worst = max(
            abs(a - b) for m in BOOT_METRICS for a, b in zip(fast_ci[m], base["ci"][m], strict=True)
        )
        print(f"  baseline CIs (same n_boot) differ from vectorized by at most {worst:.1e}")

    print(f"\nTiming, NNLS, six metrics, BCa with {args.n_boot} replicates:")
    print(f"  vectorized cold (incl. drawing indices): {t_cold}")
    print(f"  vectorized warm (draws cached):          {t_warm}")
    print(
        f"  baseline ran {args.baseline_n_boot} replicates + jackknife: {t_base} "
        f"(replicates {base['t_boot']:.3f} s, jackknife {base['t_jack']:.3f} s wall)"
    )
    if args.baseline_n_boot != args.n_boot:
        print(
            f"  baseline extrapolated LINEARLY to {args.n_boot} replicates: "
            f"{base_wall:8.3f} s wall ({base_cpu:8.3f} s CPU)"
        )
    print(
        f"  speed-up vs baseline (wall): {base_wall / t_cold.wall:6.1f}x cold, "
        f"{base_wall / t_warm.wall:6.1f}x warm"
    )
    print(
        f"  speed-up vs baseline (CPU):  {base_cpu / t_cold.cpu:6.1f}x cold, "
        f"{base_cpu / t_warm.cpu:6.1f}x warm"
    )

    # 2. all nine files
    boot_mod._draw_cached.cache_clear()
    all_timer = Timer().__enter__()
    print(
        f"\nAll {len(files)} public files: point metrics + macro + pooled + main-table BCa "
        "(6 metrics) + per-category BCa"
    )
    header = (
        f"  {'file':46s} {'pair':>6s} {'rho':>6s} {'tau':>6s} {'R@1':>6s} {'R@2':>6s} "
        f"{'R@3':>6s} {'macro':>6s} {'pooled':>6s} {'pair CI':>15s} {'sec':>6s}"
    )
    print(header)
    for path in files:
        with Timer() as t_file:
            c, g, p = arrays_from_frame(pl.read_csv(path))
            pt = compute_all(c, g, p)
            ci = bca_ci(c, g, p, n_boot=args.n_boot, seed=args.seed)
            bca_ci_per_category(c, g, p, n_boot=args.n_boot, seed=args.seed)
        _, lo, hi = ci["pairwise_accuracy"]
        vals = " ".join(f"{pt[k]:6.3f}" for k in pt)
        print(f"  {path.stem[:46]:46s} {vals} [{lo:.3f}, {hi:.3f}] {t_file.wall:6.2f}")
    all_timer.__exit__()
    print(f"  total for {len(files)} files: {all_timer} (target < 10 s)")
    return 0


if __name__ == "__main__":
    from _results import run_and_record

    raise SystemExit(run_and_record("bootstrap", main))

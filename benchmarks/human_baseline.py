"""Time the full human-baseline computation at scale 1 and scale 10.

Usage::

    python benchmarks/human_baseline.py [--scales 1 10] [--n-iter 1000] [--pooling within_block]

The ratings are a *structural* synthetic frame (``warehouse.human.testing``): the public block
structure of ``individual_loo_accuracy.csv`` (49 blocks, 4,664 panelist-block rows) with random
integer ratings. **Scale s multiplies the respondents of every block by s** (same 49 blocks, same
products; scale 10 = 46,640 panelist-block rows), which is the axis the per-block matrices,
split-half and group-size draws grow with. Every step runs through its public function with
``n_iter`` iterations (default 1000, seed 42) and ``k_max = 75``; the script prints per-step wall
times and the scale-10 / scale-1 ratio.

The public file is read from ``$TASTEBENCH_DATA_MIRROR`` (default ``../shared/data``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from warehouse.human import (  # noqa: E402
    assign_blocks,
    block_reliability,
    group_size_curve,
    panelist_block_accuracy,
    split_half_reliability,
    summarize_human_baseline,
)
from warehouse.human.testing import (  # noqa: E402
    PUBLIC_LOO_PATH,
    public_block_structure,
    ratings_from_block_structure,
)

STEPS = (
    "assign_blocks",
    "panelist_block_accuracy",
    "block_reliability",
    "split_half_reliability",
    "group_size_curve",
    "summary",
)


def _mirror() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO_ROOT.parent / "shared" / "data").resolve()


def run_once(ratings, n_iter: int, seed: int, pooling: str) -> tuple[dict[str, float], object]:
    times: dict[str, float] = {}

    def timed(name, fn, *args, **kw):
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        times[name] = time.perf_counter() - t0
        return out

    bp, br = timed("assign_blocks", assign_blocks, ratings)
    acc = timed("panelist_block_accuracy", panelist_block_accuracy, ratings, bp, br)
    rel = timed("block_reliability", block_reliability, ratings, bp, br)
    sh = timed(
        "split_half_reliability", split_half_reliability, ratings, bp, br, n_iter=n_iter, seed=seed
    )
    curve = timed(
        "group_size_curve",
        group_size_curve,
        ratings,
        bp,
        br,
        k_max=75,
        n_iter=n_iter,
        seed=seed,
        pooling=pooling,
    )
    summary = timed("summary", summarize_human_baseline, br, acc, rel, sh, curve)
    times["total"] = sum(times.values())
    return times, summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--n-iter", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--pooling", default="within_block", choices=["within_block", "cross_block"])
    args = ap.parse_args(argv)

    loo_csv = _mirror() / PUBLIC_LOO_PATH
    if not loo_csv.is_file():
        print(f"public file {loo_csv} not found: set TASTEBENCH_DATA_MIRROR", file=sys.stderr)
        return 2
    structure = public_block_structure(loo_csv)

    results: dict[int, dict[str, float]] = {}
    for scale in args.scales:
        t0 = time.perf_counter()
        ratings = ratings_from_block_structure(structure, respondent_scale=scale, seed=0)
        gen = time.perf_counter() - t0
        times, summary = run_once(ratings, args.n_iter, args.seed, args.pooling)
        results[scale] = times
        s = summary.row(0, named=True)
        print(
            f"scale {scale:>3}: {len(ratings):>9,} ratings, {int(s['n_blocks'])} blocks, "
            f"{int(s['n_panelist_blocks']):,} panelist-blocks (generated in {gen:.1f} s)"
        )
        print(
            f"           median acc {s['panelist_accuracy_median']:.3f}, alpha "
            f"{s['alpha_mean']:.3f}, W {s['kendall_w_median']:.3f}, split-half "
            f"{s['split_half_median']:.3f}, panel3 {s['panel3_accuracy']:.3f}, "
            f"panel5 {s['panel5_accuracy']:.3f} (synthetic, uncalibrated)"
        )

    scales = list(results)
    header = f"{'step':<26}" + "".join(f"{f'scale {sc} (s)':>16}" for sc in scales)
    if len(scales) > 1:
        header += f"{f'ratio {scales[-1]}/{scales[0]}':>16}"
    print()
    print(header)
    for step in (*STEPS, "total"):
        line = f"{step:<26}" + "".join(f"{results[sc][step]:>16.3f}" for sc in scales)
        if len(scales) > 1:
            base = results[scales[0]][step]
            ratio = results[scales[-1]][step] / base if base > 0 else float("nan")
            line += f"{ratio:>16.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    from _results import run_and_record

    raise SystemExit(run_and_record("human_baseline", main))

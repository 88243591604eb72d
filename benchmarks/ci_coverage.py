"""Coverage study: how often each interval method's 95% CI contains the known truth.

Usage::

    python benchmarks/ci_coverage.py [--datasets 1000] [--n-boot 2000] [--jobs 2]
        [--metrics spearman,recall_at_1,...] [--write-docs]

Simulated benchmarks with a known truth (docs/statistics.md, "Coverage study"):

* categories sized like the real ones: the products per category of the public gold pairs
  (``tastebench_public/food_similarity/data/pairs.csv``: 24 categories, 5-18 products, 935
  pairs);
* each product has a latent true mean ``mu ~ N(0, 1)`` (the gold); a predictor of category c
  predicts ``r_c mu + sqrt(1 - r_c^2) eps``. Two new products of c are then ordered correctly
  with probability ``a_c = 1/2 + asin(r_c) / pi``. Categories differ: ``a_c = (1 +
  tanh(delta + 0.2 u_c)) / 2`` with fixed standard-normal scores ``u_c`` (seed 42), ``delta``
  solved so that the POPULATION pairwise accuracy ``sum_c C(n_c, 2) a_c / sum_c C(n_c, 2)``
  equals the level (.50 ... .95);
* estimands (new products of the same categories, same sizes): pairwise accuracy as above;
  Kendall ``sum n_c (2 a_c - 1) / sum n_c``; Spearman ``sum n_c E[r_s] / sum n_c`` with
  Moran's ``E[r_s] = 6 / (pi (n + 1)) [asin r + (n - 2) asin(r / 2)]``; macro ``mean a_c``;
  Recall@k by Monte Carlo (400,000 draws per category, seed 42; its error is below 3e-4);
* paired differences: two predictors with independent noise, ``(.75, .75)`` (no difference),
  ``(.80, .75)`` and ``(.95, .90)``; estimand the difference of population accuracies;
* per-category intervals: the first category of 5, 10 and 18 products.

Each simulated data set gets its own ``numpy.random.default_rng([42, scenario, i])`` and its
own bootstrap seed; ``--n-boot`` replicates (default 2,000 instead of the 10,000 of the
reports, to fit the study on 2 cores; the coverage of percentile intervals moves by far less
than the Monte Carlo error between the two). With ``--datasets 1000`` a coverage near 95% has a
binomial standard error of 0.7 points (95% margin +/- 1.4). Work is split over ``--jobs``
processes (joblib), results are deterministic. Finished chunks are kept in
``build/ci_coverage/<group>-v<version>[-boot<n>]/``, one folder per method group (bootstrap
methods, analytic methods): an interrupted run resumes, and changing an analytic method only
recomputes that group (bump its ``GROUP_VERSIONS`` entry when a method or the simulation
changes; every group sees the same simulated data sets). ``--metrics`` measures only the named
tables (metric names, ``per_category``, ``paired``; its chunks are cached apart).
``--write-docs`` rewrites the sections of the ``ci-coverage`` block of
``benchmarks/results/ci_coverage.md`` that the run measured (each between
``<!-- ci-coverage:NAME -->`` markers; the legend only on a full run) and keeps the others;
writing twice gives the same file.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from joblib import Parallel, delayed
from scipy import optimize, special

REPO_ROOT = Path(__file__).resolve().parents[1]
for _path in (REPO_ROOT, REPO_ROOT / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from _results import write_result  # noqa: E402
from coverage_docs import BEGIN, DOCS, END, SECTIONS, kept_rows, merge_block, split_block  # noqa: E402, F401

from warehouse.metrics import compare_models, pairwise_credits  # noqa: E402
from warehouse.metrics.intervals import (  # noqa: E402
    CI_METHODS,
    DEFAULT_CI_METHODS,
    DEFAULT_PER_CATEGORY_METHOD,
    INTERVAL_METRICS,
    METHOD_METRICS,
    PER_CATEGORY_METHODS,
    metric_intervals,
    per_category_intervals,
)
from warehouse.metrics.paired import PRODUCT_METHODS  # noqa: E402

PAIRS = Path("tastebench_public/food_similarity/data/pairs.csv")
LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
PAIRED = ((0.75, 0.75), (0.80, 0.75), (0.95, 0.90))
PER_CATEGORY_SIZES = (5, 10, 18)
SPREAD = 0.2
RECALL_DRAWS = 400_000
SEED = 42
GROUPS = {
    "boot": {
        "metric": ("published_bca", "distinct_percentile", "distinct_bca", "category_percentile"),
        "per_category": ("published_bca", "distinct_percentile"),
        "paired": ("pair_bootstrap", "distinct_percentile"),
    },
    "analytic": {
        "metric": ("ustat_t", "ustat_satt", "category_wilson"),
        "per_category": ("ustat_t",),
        "paired": ("ustat_t",),
    },
    "recall": {
        "metric": ("category_jeffreys", "category_randomized"),
        "per_category": (),
        "paired": (),
    },
}
"""Methods computed per cache group (every method belongs to one group)."""
GROUP_VERSIONS = {"boot": 1, "analytic": 3, "recall": 2}
"""Bump a group's version when its methods or the simulation change: names its chunk cache."""
COMPARE_METHODS = ("pair_bootstrap", *PRODUCT_METHODS)


def mirror_dir() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO_ROOT.parent / "shared" / "data").resolve()


def study_categories() -> tuple[np.ndarray, np.ndarray]:
    """The study's categories: their sizes (the public gold pairs of the data mirror) and their
    fixed standard-normal scores ``u_c`` (seed 42)."""
    sizes = category_sizes(mirror_dir() / PAIRS)
    scores = np.random.default_rng(SEED).permutation(
        special.ndtri((np.arange(len(sizes)) + 0.5) / len(sizes))
    )
    return sizes, scores


def category_sizes(path: Path) -> np.ndarray:
    """Products per category (sorted category order) from the public gold pairs."""
    if not path.exists():
        raise SystemExit(f"{path} not found: set TASTEBENCH_DATA_MIRROR to the data mirror")
    pairs = pl.read_csv(
        path, schema_overrides={"product_code_1": pl.String, "product_code_2": pl.String}
    )
    products = pl.concat(
        [pairs.select("category", code=pl.col(c)) for c in ("product_code_1", "product_code_2")]
    ).unique()
    sizes = products.group_by("category").len().sort("category")
    return sizes["len"].to_numpy().astype(np.int64)


# --------------------------------------------------------------------------- the truth


class Truth:
    """Category accuracies and estimands of one population accuracy level."""

    def __init__(self, sizes: np.ndarray, level: float, scores: np.ndarray) -> None:
        self.sizes = sizes
        w = sizes * (sizes - 1) / 2.0
        self.pair_w = w / w.sum()

        def acc(delta: float) -> np.ndarray:
            return (1.0 + np.tanh(delta + SPREAD * scores)) / 2.0

        delta = optimize.brentq(
            lambda d: float(self.pair_w @ acc(d)) - level, -5.0, 5.0, xtol=1e-14
        )
        self.acc = acc(delta)
        self.r = np.sin(np.pi * (self.acc - 0.5))

    def estimands(self) -> dict[str, float]:
        n, r, a = self.sizes, self.r, self.acc
        spearman = 6.0 / (np.pi * (n + 1)) * (np.arcsin(r) + (n - 2) * np.arcsin(r / 2))
        out = {
            "pairwise_accuracy": float(self.pair_w @ a),
            "spearman": float(n @ spearman / n.sum()),
            "kendall_tau": float(n @ (2 * a - 1) / n.sum()),
            "pairwise_accuracy_macro": float(a.mean()),
        }
        recall = self.recall_expectations()
        for k in (1, 2, 3):
            out[f"recall_at_{k}"] = float(recall[:, k - 1].mean())
        return out

    def recall_expectations(self) -> np.ndarray:
        """Expected Recall@1, @2, @3 of each category (a row per category, Monte Carlo)."""
        return np.array(
            [
                recall_expectation(int(n), float(rc))
                for n, rc in zip(self.sizes, self.r, strict=True)
            ]
        )


RECALL_CACHE = REPO_ROOT / "build" / "ci_coverage" / "recall-expectations-v1.json"
"""Finished Monte Carlo Recall expectations, keyed by ``n``, ``float.hex(r)`` and draws (each
takes seconds; every run of the study and of ``recall_discreteness.py`` needs 144)."""


def recall_expectation(n: int, r: float, draws: int = RECALL_DRAWS) -> np.ndarray:
    """Monte Carlo E[Recall@1..3] for n products with prediction correlation r (cached in
    :data:`RECALL_CACHE`; the values are deterministic, so the cache changes nothing)."""
    key = f"{n} {float(r).hex()} {draws}"
    cache = json.loads(RECALL_CACHE.read_text()) if RECALL_CACHE.exists() else {}
    if key not in cache:
        cache[key] = _recall_expectation(n, r, draws).tolist()
        RECALL_CACHE.parent.mkdir(parents=True, exist_ok=True)
        tmp = RECALL_CACHE.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache, sort_keys=True))
        tmp.replace(RECALL_CACHE)
    return np.array(cache[key])


def _recall_expectation(n: int, r: float, draws: int) -> np.ndarray:
    rng = np.random.default_rng([SEED, n, int(round((r + 1) * 1e9))])
    hits = np.zeros(3)
    for start in range(0, draws, 50_000):
        m = min(50_000, draws - start)
        mu = rng.normal(size=(m, n))
        pred = r * mu + np.sqrt(1 - r * r) * rng.normal(size=(m, n))
        best = pred[np.arange(m), mu.argmax(axis=1)]
        above = (pred > best[:, None]).sum(axis=1)
        hits += [(above < k).sum() for k in (1, 2, 3)]
    return hits / draws


def simulate(sizes: np.ndarray, r: np.ndarray, rng: np.random.Generator) -> tuple:
    """One benchmark: category labels, gold (latent means), one prediction per row of ``r``."""
    cat = np.repeat([f"c{i:02d}" for i in range(len(sizes))], sizes).astype(object)
    total = int(sizes.sum())
    mu = rng.normal(size=total)
    preds = []
    for r_model in np.atleast_2d(r):
        rr = np.repeat(r_model, sizes)
        preds.append(rr * mu + np.sqrt(1 - rr**2) * rng.normal(size=total))
    return cat, mu, preds


# --------------------------------------------------------------------------- one chunk


def _record(
    kind: str,
    scenario: str,
    metric: str,
    method: str,
    truth: float,
    lo: float,
    hi: float,
    point: float,
    degenerate: bool = False,
    rejected: bool = False,
) -> tuple:
    return (
        kind,
        scenario,
        metric,
        method,
        bool(lo <= truth <= hi),
        float(hi - lo),
        bool(lo <= point <= hi),
        bool(degenerate),
        bool(rejected),
    )


def run_levels(
    sizes, level, truth_r, estimands, indices, n_boot, per_cat, group, metrics
) -> list[tuple]:
    out = []
    methods = [m for m in GROUPS[group]["metric"] if any(x in METHOD_METRICS[m] for x in metrics)]
    scen = f"{level:.2f}"
    for i in indices:
        rng = np.random.default_rng([SEED, int(round(level * 100)), i])
        cat, gold, (pred,) = simulate(sizes, truth_r, rng)
        seed = 1_000_000 * int(round(level * 100)) + i
        ivs = (
            metric_intervals(
                cat, gold, pred, methods, metrics, n_boot=n_boot, seed=seed, draw_method="fast"
            )
            if methods
            else []
        )
        for iv in ivs:
            out.append(
                _record(
                    "metric",
                    scen,
                    iv.metric,
                    iv.ci_method,
                    estimands[iv.metric],
                    iv.lo,
                    iv.hi,
                    iv.point,
                    iv.is_degenerate,
                )
            )
        for c, (n, acc) in per_cat.items():
            keep = cat == f"c{c:02d}"
            for method in GROUPS[group]["per_category"]:
                row = per_category_intervals(
                    cat[keep], gold[keep], pred[keep], method, n_boot=n_boot, seed=seed
                ).row(0, named=True)
                out.append(
                    _record(
                        "per_category",
                        scen,
                        f"n={n}",
                        method,
                        acc,
                        row["ci_lo"],
                        row["ci_hi"],
                        row["pairwise_accuracy"],
                        row["is_degenerate"],
                    )
                )
    return out


def run_paired(sizes, pair_idx, r_ab, diff, indices, n_boot, group) -> list[tuple]:
    out = []
    if not GROUPS[group]["paired"]:
        return out
    scen = f"{PAIRED[pair_idx][0]:.2f} vs {PAIRED[pair_idx][1]:.2f}"
    for i in indices:
        rng = np.random.default_rng([SEED, 1000 + pair_idx, i])
        cat, gold, preds = simulate(sizes, r_ab, rng)
        credits = {m: pairwise_credits(cat, gold, p) for m, p in zip("ab", preds, strict=True)}
        seed = 1_000_000 * (1000 + pair_idx) + i
        for method in GROUPS[group]["paired"]:
            row = compare_models(
                credits, n_boot=n_boot, n_perm=n_boot, seed=seed, method=method
            ).row(0, named=True)
            out.append(
                _record(
                    "paired",
                    scen,
                    "diff",
                    method,
                    diff,
                    row["ci_lo"],
                    row["ci_hi"],
                    row["diff"],
                    rejected=row["p_value"] < 0.05,
                )
            )
    return out


def _timed(key: Path, fn, args: tuple) -> tuple[Path, list[tuple], float]:
    t0 = time.process_time()
    records = fn(*args)
    return key, records, time.process_time() - t0


# --------------------------------------------------------------------------- report


COLUMNS = {
    "kind": pl.String,
    "scenario": pl.String,
    "metric": pl.String,
    "method": pl.String,
    "covered": pl.Boolean,
    "width": pl.Float64,
    "has_point": pl.Boolean,
    "degenerate": pl.Boolean,
    "rejected": pl.Boolean,
}


def summarize(records: list[tuple]) -> pl.DataFrame:
    frame = pl.DataFrame(records, schema=COLUMNS, orient="row")
    return frame.group_by("kind", "scenario", "metric", "method", maintain_order=True).agg(
        n=pl.len(),
        coverage=pl.col("covered").mean(),
        width=pl.col("width").mean(),
        has_point=pl.col("has_point").mean(),
        degenerate=pl.col("degenerate").mean(),
        rejected=pl.col("rejected").mean(),
    )


def _cell(row: dict, extra: str = "") -> str:
    text = f"{100 * row['coverage']:.1f} ({row['width']:.3f})"
    if extra == "rejected":
        text += f", rej {100 * row['rejected']:.1f}"
    flags = []
    if row["has_point"] < 1:
        flags.append(f"pt {100 * (1 - row['has_point']):.0f}% out")
    if row["degenerate"] > 0:
        flags.append(f"deg {100 * row['degenerate']:.0f}%")
    return text + (f" [{'; '.join(flags)}]" if flags else "")


def _md_row(lead: tuple[str, ...], cells) -> str:
    """One markdown table row: the ``lead`` cells (method, size), then one cell a scenario."""
    return "| " + " | ".join(lead) + " | " + " | ".join(cells) + " |"


def _md_head(lead: tuple[str, ...], scenarios: list[str]) -> list[str]:
    """A table's header row and its rule."""
    return [_md_row(lead, scenarios), "|" + "---|" * (len(lead) + len(scenarios))]


def _by_scenario(frame: pl.DataFrame) -> dict[str, dict]:
    """The rows of ``frame`` (one method's) by scenario."""
    return {r["scenario"]: r for r in frame.iter_rows(named=True)}


RULE = (
    "Decision rule (`choose`): the method within 93-97% at every level whose worst level is "
    "closest to 95%; if none, the same among methods never below 93%; else the highest "
    "minimum."
)


def command(args: argparse.Namespace) -> str:
    """The command line that reproduces a run (``--metrics``, ``--groups`` when given)."""
    only = f" --metrics {','.join(args.metrics)}" if args.metrics != list(SECTIONS[1:]) else ""
    if args.groups != list(GROUPS):
        only += f" --groups {','.join(args.groups)}"
    return (
        f"python benchmarks/ci_coverage.py{only} --datasets {args.datasets} --n-boot {args.n_boot}"
    )


def render(
    summary: pl.DataFrame,
    args: argparse.Namespace,
    cpu_seconds: float,
    kept: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, str]:
    """The block's sections (:data:`SECTIONS`) this run measured, as markdown; ``kept``: rows
    of methods this run did not compute (:func:`kept_rows`), shown and judged alongside."""
    kept = kept or {}
    out = {}
    if args.metrics == list(SECTIONS[1:]):
        out["legend"] = "\n".join(
            [
                f"Produced by `{command(args)}` ({cpu_seconds / 60:.0f} CPU-minutes); a table "
                "that says otherwise under it was rerun alone with `--metrics`. "
                "Cells: coverage of the nominal 95% interval in % (mean width); `pt x% out`: "
                "share of intervals that exclude their own estimate; `deg`: share flagged "
                f"degenerate. {args.datasets} simulated data sets per cell: a true 95% shows as "
                "93.6-96.4 (95% of the time). **Bold**: the default method.",
                "",
                RULE,
            ]
        )
    met = summary.filter(pl.col("kind") == "metric")
    scen = list(dict.fromkeys(met["scenario"].to_list()))
    verdicts = verdict(summary, kept)
    for metric in INTERVAL_METRICS:
        sub = met.filter(pl.col("metric") == metric)
        if not sub.height:
            continue
        lines = [f"**{metric}** (population pairwise accuracy of the predictor in the header)", ""]
        lines += _md_head(("method",), scen)
        for method in CI_METHODS:
            rows = _by_scenario(sub.filter(pl.col("method") == method))
            name = f"**{method}**" if DEFAULT_CI_METHODS[metric] == method else method
            if rows:
                cells = [_cell(rows[s]) for s in scen]
            elif method in kept.get(metric, {}):
                cells = kept[metric][method]
            else:
                continue
            lines.append(_md_row((name,), cells))
        lines += ["", verdicts[metric]]
        if "legend" not in out:
            which = ""
            if kept.get(metric):
                done = list(dict.fromkeys(sub["method"].to_list()))
                which = f"rows {', '.join(done)} by "
            rest = "; other rows: the full run in the legend" if which else ""
            lines += ["", f"(This table: {which}`{command(args)}`{rest}.)"]
        out[metric] = "\n".join(lines)
    pcat = summary.filter(pl.col("kind") == "per_category")
    if pcat.height:
        lines = [
            "**Per-category pairwise accuracy** (one category of the given size; columns as above)",
            "",
        ]
        lines += _md_head(("size", "method"), scen)
        for size in dict.fromkeys(pcat["metric"].to_list()):
            for method in PER_CATEGORY_METHODS:
                sub = pcat.filter((pl.col("metric") == size) & (pl.col("method") == method))
                rows = _by_scenario(sub)
                if not rows:
                    continue
                name = f"**{method}**" if method == DEFAULT_PER_CATEGORY_METHOD else method
                lines.append(_md_row((size, name), (_cell(rows[s]) for s in scen)))
        out["per_category"] = "\n".join(lines)
    paired = summary.filter(pl.col("kind") == "paired")
    if paired.height:
        pscen = list(dict.fromkeys(paired["scenario"].to_list()))
        lines = [
            "**Paired difference of pairwise accuracy** (population accuracies of the two "
            "models; `rej`: share of p < .05, the type-I error where they are equal)",
            "",
        ]
        lines += _md_head(("method",), pscen)
        for method in COMPARE_METHODS:
            rows = _by_scenario(paired.filter(pl.col("method") == method))
            if not rows:
                continue
            name = f"**{method}**" if method == "ustat_t" else method
            lines.append(_md_row((name,), (_cell(rows[s], "rejected") for s in pscen)))
        out["paired"] = "\n".join(lines)
    return out


def choose(coverage: dict[str, list[float]], lo: float = 0.93, hi: float = 0.97) -> str:
    """The decision rule: among methods within [lo, hi] at every level, the one whose worst
    level is closest to 95%; if none, the same among methods never below ``lo`` (an interval
    too wide is the lesser error); if none, the method with the highest minimum."""

    def worst(m: str) -> float:
        return max(abs(c - 0.95) for c in coverage[m])

    inside = [m for m, cov in coverage.items() if all(lo <= c <= hi for c in cov)]
    floor = [m for m, cov in coverage.items() if min(cov) >= lo]
    if inside or floor:
        return min(inside or floor, key=worst)
    return max(coverage, key=lambda m: min(coverage[m]))


def verdict(
    summary: pl.DataFrame,
    kept: dict[str, dict[str, list[str]]] | None = None,
    lo: float = 0.93,
    hi: float = 0.97,
) -> dict[str, str]:
    """Per measured metric: the method the rule picks (among the computed and the ``kept``
    rows), whether the library default agrees, and whether it stays within [lo, hi] at every
    level."""
    met = summary.filter(pl.col("kind") == "metric")
    out = {}
    for metric in INTERVAL_METRICS:
        sub = met.filter(pl.col("metric") == metric)
        if not sub.height:
            continue
        coverage = {
            m: sub.filter(pl.col("method") == m)["coverage"].to_list()
            for m in dict.fromkeys(sub["method"].to_list())
        }
        for m, cells in (kept or {}).get(metric, {}).items():
            coverage.setdefault(m, [float(c.split()[0]) / 100 for c in cells])
        pick = choose(coverage, lo, hi)
        default = DEFAULT_CI_METHODS[metric]
        cov = coverage[default]
        within = all(lo <= c <= hi for c in cov)
        out[metric] = (
            f"- `{metric}`: the rule picks `{pick}`; the default is `{default}` "
            f"({'agrees' if pick == default else 'DIFFERS'}), coverage "
            f"{100 * min(cov):.1f}-{100 * max(cov):.1f}% "
            f"({'within' if within else 'not within'} {100 * lo:.0f}-{100 * hi:.0f}% "
            "at every level)"
        )
    return out


def write_docs(sections: dict[str, str]) -> None:
    DOCS.write_text(merge_block(DOCS.read_text(), sections))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=1000, help="data sets per cell (1000)")
    ap.add_argument("--n-boot", type=int, default=2000, help="bootstrap replicates (2000)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (2)")
    ap.add_argument("--chunk", type=int, default=50, help="data sets per task (50)")
    ap.add_argument(
        "--metrics",
        type=lambda text: text.split(","),
        default=list(SECTIONS[1:]),
        help="comma-separated tables to measure (default: all): "
        + ", ".join(SECTIONS[1:])
        + "; --write-docs then rewrites only those",
    )
    ap.add_argument(
        "--groups",
        type=lambda text: text.split(","),
        default=list(GROUPS),
        help=f"comma-separated method groups to compute (default: all): {', '.join(GROUPS)}; "
        "--write-docs keeps the other methods' rows of each rewritten table",
    )
    ap.add_argument(
        "--write-docs", action="store_true", help="update benchmarks/results/ci_coverage.md"
    )
    args = ap.parse_args(argv)
    if not set(args.groups) <= set(GROUPS):
        ap.error(f"unknown --groups {sorted(set(args.groups) - set(GROUPS))}")
    bad = [m for m in args.metrics if m not in SECTIONS[1:]]
    if bad:
        ap.error(f"unknown --metrics {bad}; choose from {', '.join(SECTIONS[1:])}")
    args.metrics = [m for m in SECTIONS[1:] if m in args.metrics]
    partial = args.write_docs and args.groups != list(GROUPS)
    if partial and {"per_category", "paired"} & set(args.metrics):
        ap.error("--write-docs with --groups keeps other rows of metric tables only")
    metrics = tuple(m for m in args.metrics if m in INTERVAL_METRICS)

    t0 = time.perf_counter()
    sizes, scores = study_categories()
    print(
        f"{len(sizes)} categories, {sizes.sum()} products, "
        f"{int((sizes * (sizes - 1) // 2).sum())} pairs; sizes {sorted(sizes.tolist())}"
    )
    per_size = {
        int(n): int(np.flatnonzero(sizes == n)[0]) for n in PER_CATEGORY_SIZES if (sizes == n).any()
    }
    covered = {m for g in GROUPS.values() for m in g["metric"]}
    assert covered == set(CI_METHODS), f"methods without a group: {set(CI_METHODS) - covered}"
    root = REPO_ROOT / "build" / "ci_coverage"
    only = "" if args.metrics == list(SECTIONS[1:]) else "-" + "+".join(args.metrics)
    caches = {
        g: root / ((f"{g}-v{v}-boot{args.n_boot}" if g == "boot" else f"{g}-v{v}") + only)
        for g, v in GROUP_VERSIONS.items()
    }
    tasks, keys = [], []
    chunks = [
        range(s, min(s + args.chunk, args.datasets)) for s in range(0, args.datasets, args.chunk)
    ]
    for li, level in enumerate(LEVELS):
        truth = Truth(sizes, level, scores)
        est = truth.estimands()
        print(f"level {level:.2f}: " + ", ".join(f"{k} {v:.4f}" for k, v in est.items()))
        per_cat = {c: (n, float(truth.acc[c])) for n, c in per_size.items()}
        if "per_category" not in args.metrics:
            per_cat = {}
        for ch, g in itertools.product(chunks, args.groups):
            keys.append(caches[g] / f"level{li}-{ch.start}-{ch.stop}.parquet")
            run_args = (sizes, level, truth.r, est, ch, args.n_boot, per_cat, g, metrics)
            tasks.append((run_levels, run_args))
    for p, (la, lb) in enumerate(PAIRED if "paired" in args.metrics else ()):
        ta, tb = Truth(sizes, la, scores), Truth(sizes, lb, scores)
        diff = float(ta.pair_w @ (ta.acc - tb.acc))
        r_ab = np.stack([ta.r, tb.r])
        for ch, g in itertools.product(chunks, args.groups):
            keys.append(caches[g] / f"paired{p}-{ch.start}-{ch.stop}.parquet")
            tasks.append((run_paired, (sizes, p, r_ab, diff, ch, args.n_boot, g)))
    for cache in caches.values():
        cache.mkdir(parents=True, exist_ok=True)
    todo = [(k, t) for k, t in zip(keys, tasks, strict=True) if not k.exists()]
    print(f"{len(keys) - len(todo)} of {len(keys)} chunks cached in {root}; computing {len(todo)}")
    jobs = (delayed(_timed)(key, fn, task_args) for key, (fn, task_args) in todo)
    for key, records, cpu in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(jobs):
        frame = pl.DataFrame(records, schema=COLUMNS, orient="row").with_columns(
            cpu_s=pl.lit(cpu, dtype=pl.Float64)
        )
        frame.write_parquet(key)
    frames = [pl.read_parquet(k) for k in keys]
    cpu_total = sum(float(f["cpu_s"][0]) for f in frames if f.height)
    records = pl.concat(frames).drop("cpu_s").rows()
    summary = summarize(records)
    elapsed = time.perf_counter() - t0
    computed = {m for g in args.groups for m in GROUPS[g]["metric"]}
    kept = {}
    if computed != set(CI_METHODS):
        kept = kept_rows(split_block(DOCS.read_text())[1], computed)
    sections = render(summary, args, cpu_total, kept)
    print()
    print("\n\n".join(sections.values()))
    print(f"total {elapsed:.0f} s wall here, {cpu_total / 60:.0f} CPU-minutes in all chunks")
    write_result(
        "ci_coverage",
        summary.to_dicts(),
        cpu_minutes=round(cpu_total / 60, 1),
        args={k: str(v) for k, v in vars(args).items()},
    )
    if args.write_docs:
        write_docs(sections)
        print(f"wrote {', '.join(sections)} into {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The ``SIMULATION.md`` that travels with every simulated bundle."""

from __future__ import annotations

from string import Template
from typing import TYPE_CHECKING

from warehouse.simulate.calibration import PUBLISHED
from warehouse.simulate.design import IMAGE_FOLDER_VARIANTS, TWO_REFERENCE_CATEGORIES

if TYPE_CHECKING:
    from warehouse.simulate.ratings import SimilarityResult
    from warehouse.simulate.report import SimulationReport

_PARAM_DOC = {
    "within_spread": "sd of the analogs' latent means within a category (x Blom score of rank)",
    "spread_jitter": "lognormal sd of the per-category spread (stratified over categories)",
    "tail": "heavier tails: score -> sinh(tail * z) / tail (a few clearly better/worse products)",
    "category_sd": "sd of the category levels (stratified over categories)",
    "respondent_sd": "respondent scale bias, one per respondent id (all their categories)",
    "noise_sd": "idiosyncratic noise (geometric mean over respondents)",
    "noise_jitter": "lognormal sd of a per-respondent noise multiplier (attentiveness)",
    "reference_offset": "references: max(level + this, best analog + this/2, E[rating] = 5)",
    "min_gap": "minimal gap between gold-consecutive target means (rating scale)",
}


def _calibration_table(report: SimulationReport) -> str:
    cal = report.calibration
    if cal is None:
        return (
            "Not computed for this bundle (computed by default at scale 1 only). Run\n"
            "`warehouse.simulate.calibration_summary(<bundle>)` to compute it.\n"
        )
    rows = [
        ("blocks recovered (>= 20 respondents, >= 2 analogs)", cal.n_blocks, PUBLISHED["n_blocks"]),
        ("panelist-block rows", cal.n_panelist_blocks, PUBLISHED["n_panelist_blocks"]),
        ("distinct panelists in blocks", cal.n_panelists, PUBLISHED["n_panelists"]),
        (
            "mean per-block ordinal Krippendorff alpha",
            f"{cal.alpha_mean:.3f}",
            f"{PUBLISHED['alpha_mean']:.3f}",
        ),
        (
            "median LOO panelist pairwise accuracy",
            f"{cal.loo_median:.3f}",
            f"{PUBLISHED['loo_median']:.3f}",
        ),
        (
            "LOO accuracy IQR",
            f"{cal.loo_q25:.2f}-{cal.loo_q75:.2f}",
            f"{PUBLISHED['loo_q25']:.2f}-{PUBLISHED['loo_q75']:.2f}",
        ),
        (
            "median split-half pairwise agreement (1,000 splits)",
            f"{cal.split_half_median:.3f}",
            f"{PUBLISHED['split_half_median']:.3f}",
        ),
    ]
    lines = ["| figure | this bundle | published |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    shares = ", ".join(f"{s:.3f}" for s in cal.rating_shares)
    lines.append("")
    lines.append(
        f"Shares of analog block ratings 1..7: {shares} (cut points follow the published "
        "marginal of `alpha_coincidence.csv`). Mean within-product sd of a block's "
        f"ratings: {cal.within_product_sd:.2f}. Computed with `{cal.backend}`."
    )
    return "\n".join(lines) + "\n"


# ${name} (as in SimulationReport), or a value render_readme computes; "$$" is a literal "$".
_README = Template(
    """# SIMULATED NECTAR bundle: every row is simulated

**data_origin = simulation.** Nothing in these files is a NECTAR rating. The real ratings are
gated under NDA; this bundle has the exact raw layout of the official bundle (Croissant
`croissant/nectar.json`, docs/benchmark.md §1 and §8) so the warehouse can be built, tested and
load-tested without them. Do not report any number computed from it as a TasteBench result.

- generator: `warehouse.simulate` version ${version}
- seed: ${seed}; scale: ${scale}; plant_signal: ${plant_signal}
- categories: ${n_categories}; products: ${n_products} (${n_analogs} analogs,
  ${n_references} references); ratings: ${n_ratings}; respondent ids:
  ${n_respondents}; photos: ${n_images}
- `simulation_manifest.json` lists the sha256 of every file. Same seed and arguments give
  byte-identical files.

## What is real and what is not

- **Ingredient lists, nutrition and photos are real public competition products**
  (`kaggle_tastebench/generate_data/dataset/products.csv` and `images_256/`), each analog drawn
  **at random** (seeded) from the public products of its category. The features therefore carry
  **no real signal about the simulated targets** (unless `plant_signal` is set). Say so in every
  report built on this bundle.
- **Brands and UPCs are fake**: coined brand names (never a real brand), 12-digit UPC-A codes with
  a valid check digit. ${n_branded_ingredient_lists} ingredient lists name their brand
  (e.g. "<Brand> Plant-Based Bacon Blend (Water, ...)"), and the ratings file carries the brand in
  its `brand` column, so the de-identification guards have something real to catch.
- **References** (codes n_c+1, n_c+2): animal-product labels and nutrition written for the
  simulation; they show a public photo of their category. Two references in
  ${two_reference_categories}; one elsewhere.
- Target signal: ${signal}.

## Design

- Analogs: the 215 public analogs with their public categories and codes 1..n_c (analog
  `product_code` = public code). Years: meat categories 2025, dairy categories 2026; no rows of
  other years (the loader's year filter has nothing to drop here).
- Blocks: the published structure of `individual_loo_accuracy.csv` (per category and block:
  respondents = rows, analogs = `n_analogs`). Analogs are partitioned over a category's blocks at
  random (seeded), tied analogs always together; a block beyond the partition (Hot_Dogs block 2)
  rates analogs of the block before it. The first reference sits in every block of its category,
  the second in block 0 only, so 21 references and 4 Hot_Dogs analogs sit in two or more blocks
  (published: 25 products).
- Filler respondents: small groups (< 20 each, so never a block) rate a block's products minus one
  analog, lifting every product to >= 100 raters as in the real panel (RAI: every product rated by
  at least 100 panelists). The block filter must drop them.
- Respondent ids: one bundle-wide pool of 627 x scale integers; every category draws its
  respondents without replacement, so one id never sits in two groups of a category but recurs
  across categories (published: 627 panelists over 4,664 panelist-block rows).
- Every respondent rates every product of their group exactly once (integer 1..7 similarity, never
  null).

## Rating model

Latent `L = m_p + b_r + e_rp` (`b_r` respondent bias, `e_rp` noise scaled by the respondent's
attentiveness); rating = 1 + number of cut points below `L + delta_p`. Cut points (${cuts}) are
quantiles of the pooled analog latents at the published cumulative rating marginal. `m_p`: category
level + spread x sinh(tail x Blom score of the gold rank) / tail. `delta_p` is the shift closest to
0 that makes the product's integer rating *sum* hit its target `T_p = round(n_p x E[rating])`,
pushed apart along the gold order so the realized means `T_p / n_p` are strictly ordered and equal
for ties (tied products share a block, hence `n_p`). It removes only the sampling mean of the
product's noise; a +/-1 fallback on ratings nearest a cut point exists for float coincidences
(${n_fallback_adjustments} used). The simulator asserts the realized order before writing.

| parameter | value | meaning |
|---|---:|---|
${params}

Other rating columns: `appearance, flavor, liking, nutrition_purchase_intent, texture` are
integers 1..7 correlated with similarity (about 0.4 % null); `purchase_intent` is a 5-point
buying-intent scale driven by liking; the just-about-right attributes are asked per category
(`crispiness`, `breading_flavor` only for Nuggets and Breaded_Chicken_Filet; meat attributes only
for meat; ...) and null where not asked; missing answers to asked text questions are the literal
"No response" (about 1.5 %).

## Calibration (public facts only)

${calibration_table}
## Schema decisions

- Columns and order exactly as the Croissant record sets. CSV: UTF-8, comma, minimal quoting,
  `\\n` line ends; ingredient text keeps the source's embedded line breaks (quoted).
- `sc:Integer`: plain integers (`2025`, `17`). `sc:Float`: Python float repr (`5.0`, `2.5`); the
  Likert columns hold integer values written as floats, as their Croissant type says.
  `sc:Boolean`: `True` / `False`. Missing: empty field. `"No response"`: text columns only.
- `UPC` is text: 12 digits, leading zeros kept (read it as a string).
- `join_key` = `<year>_<category>_<product_code>` in both the ratings and the ingredients file.
- Category columns are canonical (`Ice_Cream_Hard_Serve`); image folders use the known variants
  ${variants} so the loader's category mapping is exercised; scale copies are `<Category>_s<k>`.
- One ingredient row per product (its rating year). Images:
  `images/<year>/<folder>/<code>/front.jpg`; products whose public source has no photo have none.
"""
)


def render_readme(report: SimulationReport, sim: SimilarityResult) -> str:
    """The bundle's ``SIMULATION.md``: the prose of ``_README`` filled in for this run."""
    params = "\n".join(
        f"| `{k}` | {v:g} | {_PARAM_DOC.get(k, '')} |" for k, v in report.parameters.items()
    )
    signal = (
        "none: the simulated panel means follow the public gold order (`true_rank` of the "
        "published out-of-fold files) exactly, ties included"
        if report.plant_signal is None
        else f"`{report.plant_signal}`: the panel means are a linear function of a feature "
        "(nutrition: protein per 100 g; text: minus the number of top-level ingredients), NOT "
        "the public gold order; derived pairs will not match the public gold pairs"
    )
    return _README.substitute(
        vars(report),
        two_reference_categories=", ".join(TWO_REFERENCE_CATEGORIES),
        signal=signal,
        cuts=", ".join(f"{c:.4f}" for c in sim.cutpoints),
        n_fallback_adjustments=sim.n_fallback_adjustments,
        params=params,
        calibration_table=_calibration_table(report),
        variants=", ".join(f"`{v}` (= {k})" for k, v in sorted(IMAGE_FOLDER_VARIANTS.items())),
    )

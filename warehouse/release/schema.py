"""What a release and a competition export contain: one :class:`TableSpec` per table (columns,
types, row order, descriptions; each is written as CSV and as Parquet). The writer, the Croissant
metadata, the README and ``tastebench verify`` all read these specs, so they cannot drift apart
(docs/release.md)."""

from __future__ import annotations

from warehouse.human.baseline import ACCURACY_COLUMNS
from warehouse.release.tables import Column, TableSpec
from warehouse.sources.seeds import label_nutrients

N_BOOT = 10000
SEED = 42

PUBLIC_SOURCE = "tastebench_public"
FIT_OOF_DIR = "oof"

_ORIGIN = Column(
    "data_origin",
    "str",
    "Origin of the rows: simulation (calibrated simulated ratings: not a real result), nectar, "
    "test_fixture, or tastebench_public (the published TasteBench files).",
)
_CATEGORY = Column("category", "str", "Canonical product category.")
_PUBLIC_CODE = Column(
    "public_code",
    "int",
    "Public product code of this release: per category a cryptographically random permutation "
    "of the analogs to 1..n_c; references n_c+1, ... Drawn once, stable across releases.",
)

# --- the release ----------------------------------------------------------------------------------
PRODUCTS = TableSpec(
    "benchmark/products.csv",
    "Benchmark products under public codes with the gold as a within-category rank (no panel "
    "means, no features).",
    (
        _CATEGORY,
        _PUBLIC_CODE,
        Column("is_reference", "bool", "Animal reference product (not ranked)."),
        Column(
            "true_rank",
            "float",
            "Within-category average rank of the panel mean among analogs (1 = least similar to "
            "the animal target; ties |delta| < 1e-10 share x.5 ranks); empty for references.",
        ),
        _ORIGIN,
    ),
    ("category", "public_code"),
)

CATEGORIES = TableSpec(
    "benchmark/categories.csv",
    "The benchmark categories: subset (feature S order), hierarchical-BT group, counts.",
    (
        _CATEGORY,
        Column("subset", "str", "meat | nonsweet_dairy | cheese | sweet_dairy."),
        Column("subset_order", "int", "One-hot position of the subset in feature S."),
        Column("hbt_group", "str", "Hierarchical BT group (meat, nonsweet_dairy, other_dairy)."),
        Column("domain", "str", "meat or dairy."),
        Column("report_year", "int", "NECTAR report year."),
        Column("n_analogs", "int", "Analogs ranked in the category (n_c)."),
        Column("n_references", "int", "Animal references of the category."),
        Column("n_within_category_pairs", "int", "C(n_c, 2)."),
        _ORIGIN,
    ),
    ("category",),
)

GOLD_PAIRS = TableSpec(
    "benchmark/gold_pairs.csv",
    "Every untied within-category analog pair with the higher-rated product, in public codes. "
    "Which product is listed first was drawn at random (secrets) per pair.",
    (
        Column("pair_id", "int", "Row number in (category, public_code_1, public_code_2) order."),
        _CATEGORY,
        Column("public_code_1", "int", "First listed product (random side)."),
        Column("public_code_2", "int", "Second listed product."),
        Column("public_code_winner", "int", "The product with the higher true_rank."),
        _ORIGIN,
    ),
    ("category", "public_code_1", "public_code_2"),
)

# The columns of warehouse.human.baseline.ACCURACY_COLUMNS (their one declaration) less the
# panelist key; rows are sorted by all of them.
_PANELIST_PUBLIC = tuple(c for c in ACCURACY_COLUMNS if c != "respondent_id")
_PANELIST_DOCS = {
    c.name: c
    for c in (
        _CATEGORY,
        Column("block_id", "int", "Block within the category (0 = most respondents)."),
        Column("n_analogs", "int", "Analogs the panelist rated in the block."),
        Column("n_pairs", "int", "Analog pairs scored."),
        Column("pairwise_accuracy", "float", "Pairwise accuracy with the 0.5 tie rules."),
        Column("spearman", "float", "Spearman rho (empty when undefined)."),
        Column("recall_at_1", "float", "Recall@1."),
        Column("recall_at_3", "float", "Recall@3."),
    )
}
PANELIST_ROWS = TableSpec(
    "human_baseline/panelist_block_accuracy.csv",
    "Leave-one-out accuracy of each panelist within each block (own ratings vs the mean of the "
    "block's other respondents). No panelist key of any kind; rows sorted by their values.",
    (*(_PANELIST_DOCS[c] for c in _PANELIST_PUBLIC), _ORIGIN),
    _PANELIST_PUBLIC,
)

BLOCK_RELIABILITY = TableSpec(
    "human_baseline/block_reliability.csv",
    "Per block: ordinal Krippendorff alpha and Kendall's W over the block's analogs.",
    (
        _CATEGORY,
        Column("block_id", "int", "Block within the category."),
        Column("n_respondents", "int", "Respondents in the block."),
        Column("n_analogs", "int", "Analogs in the block."),
        Column("krippendorff_alpha_ordinal", "float", "Ordinal Krippendorff alpha."),
        Column("kendall_w", "float", "Kendall's W (tie-corrected)."),
        _ORIGIN,
    ),
    ("category", "block_id"),
)

SPLIT_HALF = TableSpec(
    "human_baseline/split_half_iterations.csv",
    "Split-half pairwise agreement per iteration (1,000 iterations), pooled over blocks with "
    ">= 4 respondents.",
    (
        Column("iteration", "int", "Iteration number."),
        Column("split_half_pairwise_agreement", "float", "Agreement of the two half-panel means."),
        _ORIGIN,
    ),
    ("iteration",),
)

GROUP_SIZE_CURVE = TableSpec(
    "human_baseline/group_size_curve.csv",
    "Accuracy of a k-respondent panel mean against the full panel mean, k = 1..75, within blocks.",
    (
        Column("k", "int", "Panel size."),
        Column("median_accuracy", "float", "Median over iterations."),
        Column("q025", "float", "2.5th percentile."),
        Column("q975", "float", "97.5th percentile."),
        Column("mean_accuracy", "float", "Mean over iterations."),
        Column("mean_n_pairs", "float", "Mean pairs scored."),
        Column("n_blocks_capped", "int", "Blocks smaller than k (the whole block is the panel)."),
        Column("pooling", "str", "within_block (default) or cross_block."),
        _ORIGIN,
    ),
    ("k",),
)

HUMAN_SUMMARY = TableSpec(
    "human_baseline/summary.csv",
    "Headline human-baseline figures, re-derivable from the three files above "
    "(warehouse.human.summarize_human_baseline).",
    (
        Column("metric", "str", "Figure name."),
        Column("value", "float", "Value."),
        _ORIGIN,
    ),
    ("metric",),
)

UPSTREAM_FILES = TableSpec(
    "metrics/upstream_files.csv",
    "The published TasteBench files that metrics/model_metrics.csv scores, REFERENCED BY URL AND "
    "SHA256, not re-published: they are keyed by the original TasteBench codes and carry the "
    "same gold (true_rank), so placed beside this release's products they would link the two "
    "code spaces (docs/release.md, 'Upstream files'). tastebench verify fetches them by hash.",
    (
        Column("dataset", "str", "Registry key of the file (warehouse/sources/datasets.toml)."),
        Column("role", "str", "oof (out-of-fold predictions of one model) or gold_pairs."),
        Column("model_id", "str", "Model id (the file stem) for role oof; empty for gold_pairs."),
        Column("url", "str", "Upstream URL at a fixed commit."),
        Column("sha256", "str", "sha256 of the upstream file."),
        Column("n_rows", "int", "Data rows of the upstream file."),
    ),
    ("role", "dataset"),
)

FIT_OOF = TableSpec(
    f"{FIT_OOF_DIR}/<model>.csv",
    "Out-of-fold predictions of a model fitted by this warehouse, under this release's public "
    "codes, with the gold as true_rank.",
    (
        Column("model_id", "str", "Model id ('<model>:<fit_id>')."),
        _CATEGORY,
        _PUBLIC_CODE,
        Column("true_rank", "float", "Gold (as in benchmark/products.csv)."),
        Column("predicted_score", "float", "Out-of-fold score."),
        _ORIGIN,
    ),
    ("model_id", "category", "public_code"),
)

MODEL_METRICS = TableSpec(
    "metrics/model_metrics.csv",
    "marts.agg_model_metrics: every model (and trivial policy) x metric x interval method with "
    "point and 95% CI: the published convention (published_bca, main-table BCa, "
    f"{N_BOOT} replicates, seed {SEED}) and the default methods, for the published files and "
    "the warehouse's own fits alike (docs/statistics.md; is_default_ci marks the "
    "default); re-derivable from the OOF files (this release's oof/ and the upstream files of "
    "metrics/upstream_files.csv).",
    (
        Column("model_metric_key", "str", "'<model_id>:<metric>:<scope>:<ci_method>'."),
        Column("model_id", "str", "OOF file stem, or 'policy:<name>' for a trivial policy."),
        Column("metric", "str", "Metric name (docs/benchmark.md section 4)."),
        Column("scope", "str", "'all' = every within-category pair of the model's products."),
        Column("point", "float", "Point value."),
        Column("ci_lo", "float", "Lower 95% bound (empty without an interval)."),
        Column("ci_hi", "float", "Upper 95% bound."),
        Column(
            "ci_method",
            "str",
            "published_bca | ustat_t | ustat_satt | distinct_percentile | category_randomized | "
            "clopper_pearson | analytical | none (docs/statistics.md).",
        ),
        Column("is_degenerate", "bool", "Zero-width interval without sampling information."),
        Column("ci_note", "str", "What the method noted (empty when nothing)."),
        Column("is_default_ci", "bool", "The default method's row (one per model and metric)."),
        Column("n_products", "int", "Products scored."),
        Column("n_pairs", "int", "Pairs scored."),
        Column("is_trivial_policy", "bool", "Trivial-policy row."),
        Column("chance_value", "float", "The random policy's expectation."),
        Column("beats_chance", "bool", "CI entirely above chance."),
        Column("differs_from_chance", "bool", "CI excludes chance on either side."),
        Column("source", "str", "Source of the predictions."),
        _ORIGIN,
    ),
    ("model_id", "metric", "scope", "ci_method"),
)

RELEASE_AUDITS = TableSpec(
    "metrics/release_audits.csv",
    "Trivial policies on THIS release's gold (benchmark/products.csv, benchmark/gold_pairs.csv): "
    "random, slot1_wins (position audit) and lower_code_wins (code-leak audit); both audits "
    "must sit at chance.",
    (
        Column("policy", "str", "random | slot1_wins | lower_code_wins."),
        Column("metric", "str", "Metric name."),
        Column("point", "float", "Point value."),
        Column("ci_lo", "float", "Lower 95% bound."),
        Column("ci_hi", "float", "Upper 95% bound."),
        Column(
            "ci_method",
            "str",
            "analytical | clopper_pearson | the default method of the metric (ustat_t, "
            "ustat_satt, category_randomized; docs/statistics.md) | none.",
        ),
        Column("n_products", "int", "Products scored (empty for slot1_wins)."),
        Column("n_pairs", "int", "Pairs scored."),
        Column("chance_value", "float", "Chance expectation."),
        Column("beats_chance", "bool", "CI entirely above chance."),
        Column("differs_from_chance", "bool", "CI excludes chance."),
        _ORIGIN,
    ),
    ("policy", "metric"),
)

RELEASE_FIXED_TABLES: tuple[TableSpec, ...] = (
    PRODUCTS,
    CATEGORIES,
    GOLD_PAIRS,
    PANELIST_ROWS,
    BLOCK_RELIABILITY,
    SPLIT_HALF,
    GROUP_SIZE_CURVE,
    HUMAN_SUMMARY,
    UPSTREAM_FILES,
    MODEL_METRICS,
    RELEASE_AUDITS,
)

# --- the competition ------------------------------------------------------------------------------
NUTRIENT_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (n["column"], n["description"]) for n in label_nutrients()
)  # var label_nutrients of dbt_project.yml

COMP_CODE = Column(
    "public_code",
    "int",
    "Competition product code: one cryptographically random permutation of all products "
    "(rated and decoys, every category) to 1..N.",
)

COMP_PRODUCTS = TableSpec(
    "products.csv",
    "Competition products: rated plant-based analogs interleaved with unrated decoys of the same "
    "category; label features only, no targets, brand names removed from ingredient lists.",
    (
        COMP_CODE,
        _CATEGORY,
        Column("ingredient_list", "str", "Label ingredient list (brand names removed)."),
        *(Column(name, "float", desc) for name, desc in NUTRIENT_COLUMNS),
    ),
    ("category", "public_code"),
)

COMP_PAIRS = TableSpec(
    "ranking_pairs.csv",
    "Every within-category pair of competition products; predict which of the two a consumer "
    "panel rated more similar to the animal target. Sides were drawn at random (secrets).",
    (
        Column("pair_id", "int", "Row number in (category, public_code_1, public_code_2) order."),
        _CATEGORY,
        Column("public_code_1", "int", "First listed product."),
        Column("public_code_2", "int", "Second listed product."),
    ),
    ("category", "public_code_1", "public_code_2"),
)

COMP_SAMPLE = TableSpec(
    "sample_submission.csv",
    "Submission format: one row per pair_id with the predicted winner (here: always the first "
    "listed product, which scores at chance).",
    (
        Column("pair_id", "int", "Pair id of ranking_pairs.csv."),
        Column("public_code_winner", "int", "The product predicted to be rated more similar."),
    ),
    ("pair_id",),
)

COMP_SOLUTION = TableSpec(
    "solution.csv",
    "GATED. The hidden solution: winner of every scored pair and its leaderboard split.",
    (
        Column("pair_id", "int", "Pair id."),
        _CATEGORY,
        Column("public_code_1", "int", "First listed product."),
        Column("public_code_2", "int", "Second listed product."),
        Column("public_code_winner", "int", "Higher-rated product (empty when Ignored)."),
        Column("usage", "str", "Public | Private | Ignored (a decoy or a gold tie)."),
    ),
    ("pair_id",),
)

COMPETITION_TABLES: tuple[TableSpec, ...] = (COMP_PRODUCTS, COMP_PAIRS, COMP_SAMPLE)

"""What a release and a competition export contain: one :class:`TableSpec` per table (columns,
types, row order, descriptions; each is written as CSV and as Parquet). The writer, the Croissant
metadata, the README and ``tastebench verify`` all read these specs, so they cannot drift apart
(docs/release.md).

Column descriptions: a column that a dbt model also has names that model (``_dbt``) and takes
its description from the model's yml (:mod:`.dbt_docs`, read when asked for, not at import); a
column that exists only in the release (public codes, pair sides, renamed or derived columns) is
described here, once (docs/release.md, "Column descriptions"). Table descriptions describe the
released files and live here.
"""

from __future__ import annotations

from warehouse.human.baseline import ACCURACY_COLUMNS
from warehouse.release.tables import Column, TableSpec
from warehouse.sources.seeds import label_nutrients

N_BOOT = 10000
SEED = 42

PUBLIC_SOURCE = "tastebench_public"
FIT_OOF_DIR = "oof"


def _dbt(model: str, *columns: tuple[str, str]) -> tuple[Column, ...]:
    """Released ``(name, type)`` columns described by the yml of dbt model ``model``."""
    return tuple(Column(name, type_, model=model) for name, type_ in columns)


# --- release-only columns (their one declaration) -------------------------------------------------
_PUBLIC_CODE = Column(
    "public_code",
    "int",
    "Public product code of this release: per category a cryptographically random permutation "
    "of the analogs to 1..n_c; references n_c+1, ... Drawn once, stable across releases.",
)
_PAIR_ID = Column("pair_id", "int", "Row number in (category, public_code_1, public_code_2) order.")
_PUBLIC_CODE_1 = Column("public_code_1", "int", "First listed product.")
_PUBLIC_CODE_2 = Column("public_code_2", "int", "Second listed product.")

# --- the release ----------------------------------------------------------------------------------
PRODUCTS = TableSpec(
    "benchmark/products.csv",
    "Benchmark products under public codes with the gold as a within-category rank (no panel "
    "means, no features).",
    (
        *_dbt("dim_products", ("category", "str")),
        _PUBLIC_CODE,
        *_dbt("dim_products", ("is_reference", "bool")),
        Column(
            "true_rank",
            "float",
            "Within-category average rank of the panel mean among analogs (1 = least similar to "
            "the animal target; ties |delta| < 1e-10 share x.5 ranks); empty for references.",
        ),
        *_dbt("dim_products", ("data_origin", "str")),
    ),
    ("category", "public_code"),
)

CATEGORIES = TableSpec(
    "benchmark/categories.csv",
    "The benchmark categories: subset (feature S order), hierarchical-BT group, counts.",
    _dbt(
        "dim_categories",
        ("category", "str"),
        ("subset", "str"),
        ("subset_order", "int"),
        ("hbt_group", "str"),
        ("domain", "str"),
        ("report_year", "int"),
        ("n_analogs", "int"),
        ("n_references", "int"),
        ("n_within_category_pairs", "int"),
        ("data_origin", "str"),
    ),
    ("category",),
)

GOLD_PAIRS = TableSpec(
    "benchmark/gold_pairs.csv",
    "Every untied within-category analog pair with the higher-rated product, in public codes. "
    "Which product is listed first was drawn at random (secrets) per pair.",
    (
        _PAIR_ID,
        *_dbt("fct_within_category_pairs", ("category", "str")),
        Column("public_code_1", "int", "First listed product (random side)."),
        _PUBLIC_CODE_2,
        Column("public_code_winner", "int", "The product with the higher true_rank."),
        *_dbt("fct_within_category_pairs", ("data_origin", "str")),
    ),
    ("category", "public_code_1", "public_code_2"),
)

# The columns of warehouse.human.baseline.ACCURACY_COLUMNS (their one declaration) less the
# panelist key, described by the mart fct_panelist_block_accuracy; rows sorted by all of them.
# The public type of each (the CSV/Parquet contract) is the release's.
_PANELIST_PUBLIC = tuple(c for c in ACCURACY_COLUMNS if c != "respondent_id")
_PANELIST_TYPES = {"category": "str", "block_id": "int", "n_analogs": "int", "n_pairs": "int"}
PANELIST_ROWS = TableSpec(
    "human_baseline/panelist_block_accuracy.csv",
    "Leave-one-out accuracy of each panelist within each block (own ratings vs the mean of the "
    "block's other respondents). No panelist key of any kind; rows sorted by their values.",
    _dbt(
        "fct_panelist_block_accuracy",
        *((c, _PANELIST_TYPES.get(c, "float")) for c in _PANELIST_PUBLIC),
        ("data_origin", "str"),
    ),
    _PANELIST_PUBLIC,
)

BLOCK_RELIABILITY = TableSpec(
    "human_baseline/block_reliability.csv",
    "Per block: ordinal Krippendorff alpha and Kendall's W over the block's analogs.",
    _dbt(
        "agg_block_reliability",
        ("category", "str"),
        ("block_id", "int"),
        ("n_respondents", "int"),
        ("n_analogs", "int"),
        ("krippendorff_alpha_ordinal", "float"),
        ("kendall_w", "float"),
        ("data_origin", "str"),
    ),
    ("category", "block_id"),
)

SPLIT_HALF = TableSpec(
    "human_baseline/split_half_iterations.csv",
    "Split-half pairwise agreement per iteration (1,000 iterations), pooled over blocks with "
    ">= 4 respondents.",
    _dbt(
        "agg_split_half_reliability",
        ("iteration", "int"),
        ("split_half_pairwise_agreement", "float"),
        ("data_origin", "str"),
    ),
    ("iteration",),
)

GROUP_SIZE_CURVE = TableSpec(
    "human_baseline/group_size_curve.csv",
    "Accuracy of a k-respondent panel mean against the full panel mean, k = 1..75, within blocks.",
    _dbt(
        "agg_group_size_curve",
        ("k", "int"),
        ("median_accuracy", "float"),
        ("q025", "float"),
        ("q975", "float"),
        ("mean_accuracy", "float"),
        ("mean_n_pairs", "float"),
        ("n_blocks_capped", "int"),
        ("pooling", "str"),
        ("data_origin", "str"),
    ),
    ("k",),
)

HUMAN_SUMMARY = TableSpec(
    "human_baseline/summary.csv",
    "Headline human-baseline figures, re-derivable from the three files above "
    "(warehouse.human.summarize_human_baseline).",
    (
        *_dbt("agg_human_baseline", ("metric", "str")),
        Column("value", "float", "Value."),
        *_dbt("agg_human_baseline", ("data_origin", "str")),
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
        *_dbt("fct_oof_predictions", ("model_id", "str"), ("category", "str")),
        _PUBLIC_CODE,
        Column("true_rank", "float", "Gold (as in benchmark/products.csv)."),
        *_dbt("fct_oof_predictions", ("predicted_score", "float"), ("data_origin", "str")),
    ),
    ("model_id", "category", "public_code"),
)

# the columns the model-metrics table and the release audits share with agg_model_metrics
_METRIC_VALUES = (("metric", "str"), ("point", "float"), ("ci_lo", "float"), ("ci_hi", "float"))

MODEL_METRICS = TableSpec(
    "metrics/model_metrics.csv",
    "marts.agg_model_metrics: every model (and trivial policy) x metric x interval method with "
    "point and 95% CI: the published convention (published_bca, main-table BCa, "
    f"{N_BOOT} replicates, seed {SEED}) and the default methods, for the published files and "
    "the warehouse's own fits alike (docs/statistics.md; is_default_ci marks the "
    "default); re-derivable from the OOF files (this release's oof/ and the upstream files of "
    "metrics/upstream_files.csv).",
    _dbt(
        "agg_model_metrics",
        ("model_metric_key", "str"),
        ("model_id", "str"),
        ("metric", "str"),
        ("scope", "str"),
        *_METRIC_VALUES[1:],
        ("ci_method", "str"),
        ("is_degenerate", "bool"),
        ("ci_note", "str"),
        ("is_default_ci", "bool"),
        ("n_products", "int"),
        ("n_pairs", "int"),
        ("is_trivial_policy", "bool"),
        ("chance_value", "float"),
        ("beats_chance", "bool"),
        ("differs_from_chance", "bool"),
        ("source", "str"),
        ("data_origin", "str"),
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
        *_dbt(
            "agg_model_metrics",
            *_METRIC_VALUES,
            ("ci_method", "str"),
            ("n_products", "int"),
            ("n_pairs", "int"),
            ("chance_value", "float"),
            ("beats_chance", "bool"),
            ("differs_from_chance", "bool"),
            ("data_origin", "str"),
        ),
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
        *_dbt("stg_tastebench__competition_products", ("category", "str")),
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
        _PAIR_ID,
        *_dbt("stg_tastebench__competition_products", ("category", "str")),
        _PUBLIC_CODE_1,
        _PUBLIC_CODE_2,
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
        *_dbt("stg_tastebench__competition_products", ("category", "str")),
        _PUBLIC_CODE_1,
        _PUBLIC_CODE_2,
        Column("public_code_winner", "int", "Higher-rated product (empty when Ignored)."),
        Column("usage", "str", "Public | Private | Ignored (a decoy or a gold tie)."),
    ),
    ("pair_id",),
)

COMPETITION_TABLES: tuple[TableSpec, ...] = (COMP_PRODUCTS, COMP_PAIRS, COMP_SAMPLE)

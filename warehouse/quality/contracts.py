"""Building blocks the suites in ``expectations/`` share: raw contracts from the Croissant record
sets, and the column names no public or de-identified table may carry."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from warehouse.config import Settings, project_var

_SETTINGS: ContextVar[Settings | None] = ContextVar("quality_settings", default=None)

# Columns the loader adds to every raw table (warehouse/sources/load.py).
RAW_META_COLUMNS = {"_source_file": "text", "_loaded_at": "timestamp", "data_origin": "text"}

# GX has no "table must not contain column X": ExpectTableColumnsToNotContain with these.
RESPONDENT_COLUMNS = ["respondent", "respondent_id"]
RESPONDENT_REGEX = [r"^(?!n_).*respondent"]  # counts (n_respondents) are fine
GATED_COLUMNS = ["brand", "upc", "join_key", "respondent", "respondent_id", "brand_response"]

# Expectations tagged with this meta only hold at benchmark scale (>= 20 ratings per product,
# blocks of >= 20 respondents): the runner skips them on the tiny test fixture bundle.
BENCHMARK_SCALE = {"scale": "benchmark"}


@contextmanager
def use_settings(settings: Settings) -> Iterator[None]:
    """Settings (data mirror) for suites that read registered files, e.g. the Croissant JSON; the
    runner sets them from its caller's (library code never loads settings itself,
    docs/architecture.md "Settings and the build folder")."""
    token = _SETTINGS.set(settings)
    try:
        yield
    finally:
        _SETTINGS.reset(token)


def croissant_columns(file_name: str) -> dict[str, str]:
    """Column -> kind (integer, float, text, boolean) of one NECTAR file, from its Croissant
    record set (the registered, hash-checked ``tastebench_nectar_croissant``)."""
    from warehouse.sources import registry
    from warehouse.sources.croissant import record_sets

    settings = _SETTINGS.get()
    if settings is None:
        raise RuntimeError(
            "a suite read a registered file without settings: build it inside "
            "warehouse.quality.contracts.use_settings(settings) (run_quality does)"
        )
    path = registry.resolve("tastebench_nectar_croissant", settings)
    return {f.name: f.kind for f in record_sets(path)[file_name]}


def suite_of(model: str, *expectations):
    """The suite of ``model``: ``expectations`` in the order given (the order of its results)."""
    import great_expectations as gx

    suite = gx.ExpectationSuite(name=model)
    for e in expectations:
        suite.add_expectation(e)
    return suite


def raw_contract(file_name: str) -> list:
    """Exact column set and column kinds of a raw NECTAR table (Croissant fields + load meta)."""
    import great_expectations as gx

    from warehouse.quality.expectations import ExpectTableColumnKindsToMatch

    kinds = {**croissant_columns(file_name), **RAW_META_COLUMNS}
    return [
        gx.expectations.ExpectTableColumnsToMatchSet(column_set=list(kinds), exact_match=True),
        ExpectTableColumnKindsToMatch(column_kinds=kinds),
    ]


def product_labels_suite(file_name: str, model: str):
    """Suite of a product-label file (both label files share the schema): the raw contract plus
    a non-null, unique (category, product_code) key."""
    import great_expectations as gx

    E = gx.expectations
    return suite_of(
        model,
        *raw_contract(file_name),
        *(E.ExpectColumnValuesToNotBeNull(column=col) for col in ("category", "product_code")),
        E.ExpectCompoundColumnsToBeUnique(column_list=["category", "product_code"]),
    )


def respondents_per_block(con) -> dict:
    """Suite parameters of the one-row-per-panelist-and-block marts: the expected row count of
    each (category, block) is that block's respondent count in ``marts.dim_blocks``."""
    rows = con.sql(
        "select category, block_id, n_respondents from marts.dim_blocks order by 1, 2"
    ).fetchall()
    return {"respondents_per_block": {f"{c}:{b}": int(n) for c, b, n in rows}}


def one_row_per_panelist_and_block():
    """Expectations of a mart keyed by panelist and block (uses :func:`respondents_per_block`):
    a unique ``panelist_block_key`` and as many rows per block as the block has respondents."""
    import great_expectations as gx

    from warehouse.quality.expectations import ExpectGroupRowCountsToEqual

    return [
        gx.expectations.ExpectColumnValuesToBeUnique(column="panelist_block_key"),
        ExpectGroupRowCountsToEqual(
            group_by=["category", "block_id"],
            expected_counts={"$PARAMETER": "respondents_per_block"},
        ),
    ]


def benchmark_product_keys(con) -> dict:
    """Suite parameters of the one-row-per-benchmark-product marts: every ``product_key`` of
    ``marts.dim_products``."""
    keys = con.sql("select product_key from marts.dim_products order by 1").fetchall()
    return {"product_keys": [k for (k,) in keys]}


def one_row_per_benchmark_product():
    """Expectations of a mart keyed by product (uses :func:`benchmark_product_keys`): a unique
    ``product_key`` whose values are exactly the benchmark products."""
    import great_expectations as gx

    E = gx.expectations
    return [
        E.ExpectColumnValuesToBeUnique(column="product_key"),
        E.ExpectColumnDistinctValuesToEqualSet(
            column="product_key", value_set={"$PARAMETER": "product_keys"}
        ),
    ]


def pair_outcome_consistent():
    """Expectations of a pair mart (the dbt macro ``pair_outcome``): a tie exactly when
    ``|panel_mean_difference|`` is below the dbt var ``tie_tolerance`` (docs/benchmark.md §2),
    and no winner exactly for ties."""
    from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

    tie = project_var("tie_tolerance")  # dbt_project.yml, the one place it is set
    return [
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query=f"is_tie != (abs(panel_mean_difference) < {tie})"
        ),
        ExpectNoRowsToMatchQuery(unexpected_rows_query="winner_product_code.isna() != is_tie"),
    ]


def no_respondent_columns():
    """Marts never carry respondent ids (docs/benchmark.md §7): only staging does."""
    from warehouse.quality.expectations import ExpectTableColumnsToNotContain

    return ExpectTableColumnsToNotContain(
        column_list=RESPONDENT_COLUMNS, column_regex_list=RESPONDENT_REGEX
    )


def no_gated_columns():
    """Public marts carry no brand, UPC, join key, respondent id, raw code or panel mean."""
    from warehouse.quality.expectations import ExpectTableColumnsToNotContain

    return ExpectTableColumnsToNotContain(
        column_list=[*GATED_COLUMNS, "product_code", "product_key", "panel_mean", "panel_sd"],
        column_regex_list=[*RESPONDENT_REGEX, r"brand", r"upc", r"panel_mean", r"product_code"],
    )

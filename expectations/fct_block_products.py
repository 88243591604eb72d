"""Block memberships of products (gated: raw codes): one row per block and product, as many
products per block as dim_blocks says."""

import great_expectations as gx

from warehouse.quality.contracts import no_respondent_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual

MODEL = "marts.fct_block_products"


def parameters(con) -> dict:
    rows = con.sql(
        "select category, block_id, n_analogs + n_references from marts.dim_blocks order by 1, 2"
    ).fetchall()
    return {"products_per_block": {f"{c}:{b}": int(n) for c, b, n in rows}}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="block_product_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["category", "block_id"], expected_counts={"$PARAMETER": "products_per_block"}
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_respondents", min_value=20))
    return suite

-- The benchmark categories with subset, hierarchical-BT group and product counts.
with products as (
    select
        category,
        count(*) filter (where is_analog) as n_analogs,
        count(*) filter (where not is_analog) as n_references,
        any_value(data_origin) as data_origin
    from {{ ref('int_products_selected') }}
    group by category
)

select
    categories.category,
    categories.subset,
    categories.subset_order,
    categories.hbt_group,
    categories.domain,
    categories.report_year,
    products.n_analogs,
    products.n_references,
    cast(products.n_analogs * (products.n_analogs - 1) / 2 as integer) as n_within_category_pairs,
    products.data_origin
from {{ ref('categories') }} as categories
inner join products on categories.category = products.category
where categories.is_benchmark

-- Analog pairs inside each block (a product in two blocks counts in both), gold from the full
-- panel mean; the scope of the within-block accuracy metric (docs/benchmark.md §4).
with block_analogs as (
    select
        block_products.*,
        means.panel_mean
    from {{ ref('fct_block_products') }} as block_products
    inner join {{ ref('fct_panel_means') }} as means
        on
            block_products.category = means.category
            and block_products.product_code = means.product_code
    where not block_products.is_reference
)

select
    a.category || ':' || a.block_id || ':' || a.product_code || ':' || b.product_code
        as block_pair_key,
    a.category,
    a.block_id,
    a.category || ':' || a.block_id as block_key,
    a.product_code as product_code_a,
    b.product_code as product_code_b,
    {{ pair_outcome('a', 'b') }},
    a.data_origin
from block_analogs as a
inner join block_analogs as b
    on a.category = b.category and a.block_id = b.block_id and a.product_code < b.product_code

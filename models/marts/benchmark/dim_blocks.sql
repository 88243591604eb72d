-- Blocks: within a category, the respondents who rated exactly the same product set (>= 20
-- respondents, >= 2 analogs), numbered by descending size from 0 (docs/benchmark.md §2).
select
    block_products.category || ':' || block_products.block_id as block_key,
    block_products.category,
    block_products.block_id,
    any_value(block_products.n_respondents) as n_respondents,
    count(*) filter (where not block_products.is_reference) as n_analogs,
    count(*) filter (where block_products.is_reference) as n_references,
    cast(
        count(*) filter (where not block_products.is_reference)
        * (count(*) filter (where not block_products.is_reference) - 1) / 2 as integer
    ) as n_analog_pairs,
    any_value(block_products.data_origin) as data_origin
from {{ ref('fct_block_products') }} as block_products
group by block_products.category, block_products.block_id

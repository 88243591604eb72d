-- The target: mean similarity per product over 2025/2026 ratings (docs/benchmark.md §2). Ratings of
-- other years are counted (n_ratings_other_years) but never averaged in.
with ratings as (
    select * from {{ ref('stg_nectar__ratings') }}
    where is_benchmark_category
)

select
    products.product_key,
    products.category,
    products.product_code,
    products.is_analog,
    avg(ratings.similarity) filter (where ratings.is_benchmark_year) as panel_mean,
    stddev_samp(ratings.similarity) filter (where ratings.is_benchmark_year) as panel_sd,
    count(ratings.similarity) filter (where ratings.is_benchmark_year) as n_ratings,
    count(ratings.similarity) filter (where not ratings.is_benchmark_year) as n_ratings_other_years,
    products.data_origin
from {{ ref('dim_products') }} as products
inner join ratings on products.product_key = ratings.product_key
group by all

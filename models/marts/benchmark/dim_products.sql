-- Benchmark products (analogs and references), one row each; gated (raw product codes).
select
    product_key,
    category,
    product_code,
    subset,
    is_analog,
    not is_analog as is_reference,
    is_reference_label,
    product_type,
    has_meat,
    has_dairy,
    cleaned_ingredients,
    label_year,
    n_ratings,
    data_origin
from {{ ref('int_products_selected') }}
where category in (
    select categories.category from {{ ref('categories') }} as categories
    where categories.is_benchmark
)

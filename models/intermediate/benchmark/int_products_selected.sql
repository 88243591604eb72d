-- One row per benchmark product (docs/benchmark.md §1, "Product inclusion"): at least one rating in
-- the benchmark years, labels from the bundle, the latest-year ingredient row, and the analog rule
-- (an analog unless a meat category's product has meat or a dairy category's product has dairy).
with rated as (
    select
        product_key,
        count(*) as n_ratings,
        any_value(data_origin) as data_origin
    from {{ ref('stg_nectar__ratings') }}
    where is_benchmark_year and is_benchmark_category and similarity is not null
    group by product_key
),

latest_row as (
    select *
    from {{ ref('stg_nectar__products') }}
    qualify row_number() over (partition by product_key order by product_year desc) = 1
),

auto_labels as (
    select * from {{ ref('stg_nectar__product_labels') }}
    where label_source = 'auto'
),

manual_labels as (
    select * from {{ ref('stg_nectar__product_labels') }}
    where label_source = 'manual'
),

categories as (
    select * from {{ ref('categories') }}
)

select
    auto_labels.product_key,
    auto_labels.category,
    auto_labels.product_code,
    categories.subset,
    categories.domain,
    auto_labels.product_type,
    auto_labels.has_meat,
    auto_labels.has_dairy,
    auto_labels.is_reference as is_reference_label,
    not(
        (categories.domain = 'meat' and coalesce(auto_labels.has_meat, false))
        or (categories.domain = 'dairy' and coalesce(auto_labels.has_dairy, false))
    ) as is_analog,
    coalesce(manual_labels.cleaned_ingredients, auto_labels.cleaned_ingredients)
        as cleaned_ingredients,
    latest_row.product_year as label_year,
    latest_row.ingredient_list,
    rated.n_ratings,
    rated.data_origin
from rated
inner join auto_labels on rated.product_key = auto_labels.product_key
inner join categories on auto_labels.category = categories.category
left join manual_labels on rated.product_key = manual_labels.product_key
left join latest_row on rated.product_key = latest_row.product_key

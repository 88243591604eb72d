-- Nutrition block N per product (BENCHMARK.md §2): six label nutrients scaled to per 100 g with the
-- serving size, sodium in g; a missing value (or no usable serving size) becomes 0 and is flagged.
-- subset_distance_vector holds the product's subset columns (seeds/nutrition_subset_columns.csv)
-- in column_order, for the distance baseline. has_implausible_label flags labels whose fat +
-- carbohydrate + protein exceed the serving size by > 5% (the public competition file has 16).
{%- set nutrients = [
    ('total_fat_g', 'total_fat_g', 1), ('sodium_mg', 'sodium_g', 1000),
    ('protein_g', 'protein_g', 1), ('dietary_fiber_g', 'dietary_fiber_g', 1),
    ('total_carbohydrate_g', 'total_carbohydrate_g', 1), ('total_sugars_g', 'total_sugars_g', 1),
] %}

with latest as (
    select products.*
    from {{ ref('stg_nectar__products') }} as products
    inner join {{ ref('dim_products') }} as dim on products.product_key = dim.product_key
    qualify row_number() over (
        partition by products.product_key order by products.product_year desc
    ) = 1
),

scaled as (
    select
        {%- for label_column, out, unit in nutrients %}
        case
            when serving_size_g > 0 then {{ label_column }} / {{ unit }} / serving_size_g * 100
        end as {{ out }}_per_100g_raw,
        {%- endfor %}
        product_key,
        category,
        product_code,
        product_year,
        serving_size_g,
        coalesce(serving_size_g, 0) > 0 as has_serving_size
    from latest
),

imputed as (
    select
        {%- for _, out, _ in nutrients %}
        coalesce({{ out }}_per_100g_raw, 0) as {{ out }}_per_100g,
        {{ out }}_per_100g_raw is null as is_imputed_{{ out }},
        {%- endfor %}
        scaled.*
    from scaled
),

long_form as (
    unpivot imputed
    on
    total_fat_g_per_100g, sodium_g_per_100g, protein_g_per_100g, dietary_fiber_g_per_100g,
    total_carbohydrate_g_per_100g, total_sugars_g_per_100g
    into name nutrient_column value nutrient_value
),

vectors as (
    select
        long_form.product_key,
        list(long_form.nutrient_value order by subset_columns.column_order)
            as subset_distance_vector
    from long_form
    inner join {{ ref('categories') }} as categories on long_form.category = categories.category
    inner join {{ ref('nutrition_subset_columns') }} as subset_columns
        on
            categories.subset = subset_columns.subset
            and long_form.nutrient_column = subset_columns.nutrient_column
    group by long_form.product_key
)

select
    imputed.product_key,
    imputed.category,
    imputed.product_code,
    dim.is_analog,
    categories.subset,
    imputed.product_year as label_year,
    imputed.serving_size_g,
    imputed.total_fat_g_per_100g,
    imputed.sodium_g_per_100g,
    imputed.protein_g_per_100g,
    imputed.dietary_fiber_g_per_100g,
    imputed.total_carbohydrate_g_per_100g,
    imputed.total_sugars_g_per_100g,
    imputed.is_imputed_total_fat_g,
    imputed.is_imputed_sodium_g,
    imputed.is_imputed_protein_g,
    imputed.is_imputed_dietary_fiber_g,
    imputed.is_imputed_total_carbohydrate_g,
    imputed.is_imputed_total_sugars_g,
    (
        imputed.is_imputed_total_fat_g or imputed.is_imputed_sodium_g
        or imputed.is_imputed_protein_g or imputed.is_imputed_dietary_fiber_g
        or imputed.is_imputed_total_carbohydrate_g or imputed.is_imputed_total_sugars_g
    ) as has_imputed_values,
    (
        coalesce(latest.total_fat_g, 0) + coalesce(latest.total_carbohydrate_g, 0)
        + coalesce(latest.protein_g, 0)
    ) > 1.05 * latest.serving_size_g as has_implausible_label,
    vectors.subset_distance_vector,
    dim.data_origin
from imputed
inner join {{ ref('dim_products') }} as dim on imputed.product_key = dim.product_key
inner join latest on imputed.product_key = latest.product_key
inner join {{ ref('categories') }} as categories on imputed.category = categories.category
left join vectors on imputed.product_key = vectors.product_key

-- Nutrition block N per product (docs/benchmark.md §2): six label nutrients scaled to per 100 g
-- with the serving size, sodium in g; a missing value (or no usable serving size) becomes 0 and is flagged.
-- subset_distance_vector holds the product's subset columns (seeds/nutrition_subset_columns.csv)
-- in column_order, for the distance baseline. has_implausible_label flags labels whose fat +
-- carbohydrate + protein exceed the serving size by > 5% (the public competition file has 16).
-- The six nutrients, their label columns and units: var nutrition_block (dbt_project.yml).
{%- set nutrients = var('nutrition_block') %}

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
        {%- for n in nutrients %}
        case
            when serving_size_g > 0
                then {{ n.label_column }} / {{ n.label_unit_divisor }} / serving_size_g * 100
        end as {{ n.nutrient }}_per_100g_raw,
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
        {%- for n in nutrients %}
        coalesce({{ n.nutrient }}_per_100g_raw, 0) as {{ n.nutrient }}_per_100g,
        {{ n.nutrient }}_per_100g_raw is null as is_imputed_{{ n.nutrient }},
        {%- endfor %}
        scaled.*
    from scaled
),

long_form as (
    unpivot imputed
    on
    {%- for n in nutrients %}
    {{ n.nutrient }}_per_100g{{ "," if not loop.last }}
    {%- endfor %}
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
    {%- for n in nutrients %}
    imputed.{{ n.nutrient }}_per_100g,
    {%- endfor %}
    {%- for n in nutrients %}
    imputed.is_imputed_{{ n.nutrient }},
    {%- endfor %}
    (
        {%- for n in nutrients %}
        {{ "or " if not loop.first }}imputed.is_imputed_{{ n.nutrient }}
        {%- endfor %}
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

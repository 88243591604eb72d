-- One product-year row of the ingredients and nutrition file (per-serving label values).
with source as (
    select * from {{ source('nectar', 'nectar_consolidated_ingredients_nutrition') }}
),

renamed as (
    select
        {{ canonical_category('source."Category"') }} as category,
        source."Category" as category_raw,
        cast(source."Product_Code" as integer) as product_code,
        cast(source."Year" as integer) as product_year,
        source.join_key,
        source."Brand" as brand,
        source."UPC" as upc,
        source."Ingredient List" as ingredient_list,
        source."Manually Cleaned Ingredients" as manually_cleaned_ingredients,
        cast(source."Servings Per Container (#)" as double) as servings_per_container,
        {{ label_nutrients('source') }}
        source.data_origin,
        source._source_file as source_file
    from source
)

select
    category || ':' || product_code || ':' || product_year as product_year_key,
    category || ':' || product_code as product_key,
    *
from renamed

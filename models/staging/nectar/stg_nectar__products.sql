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
        cast(source."Serving Size (g)" as double) as serving_size_g,
        cast(source."Servings Per Container (#)" as double) as servings_per_container,
        cast(source."Calories" as double) as calories_kcal,
        cast(source."Total Fat (g)" as double) as total_fat_g,
        cast(source."Saturated Fat (g)" as double) as saturated_fat_g,
        cast(source."Trans Fat (g)" as double) as trans_fat_g,
        cast(source."Polyunsaturated Fat (g)" as double) as polyunsaturated_fat_g,
        cast(source."Monounsaturated Fat (g)" as double) as monounsaturated_fat_g,
        cast(source."Cholesterol (mg)" as double) as cholesterol_mg,
        cast(source."Sodium (mg)" as double) as sodium_mg,
        cast(source."Total Carbohydrate (g)" as double) as total_carbohydrate_g,
        cast(source."Dietary Fiber (g)" as double) as dietary_fiber_g,
        cast(source."Total Sugars (g)" as double) as total_sugars_g,
        cast(source."Added Sugars (g)" as double) as added_sugars_g,
        cast(source."Protein (g)" as double) as protein_g,
        cast(source."Vitamin D (mcg)" as double) as vitamin_d_mcg,
        cast(source."Calcium (mg)" as double) as calcium_mg,
        cast(source."Iron (mg)" as double) as iron_mg,
        cast(source."Potassium (mg)" as double) as potassium_mg,
        source.data_origin,
        source._source_file as source_file
    from source
)

select
    category || ':' || product_code || ':' || product_year as product_year_key,
    category || ':' || product_code as product_key,
    *
from renamed

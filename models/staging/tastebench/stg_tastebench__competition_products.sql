-- The public competition's products (rated analogs interleaved with decoys; codes renumbered).
select
    cast(source."Product code" as integer) as competition_product_code,
    source."Category" as category,
    source."Ingredient List" as ingredient_list,
    cast(source."Serving Size (g)" as double) as serving_size_g,
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
    source.image_path,
    images.local_path as image_local_path,
    images.original_sha256 as image_original_sha256,
    source.data_origin
from {{ source('tastebench', 'tastebench_competition_products') }} as source
left join {{ source('tastebench', 'tastebench_competition_images') }} as images
    on source.image_path = images.image_path

-- The public competition's products (rated analogs interleaved with decoys; codes renumbered),
-- each with its photo from the image manifest.
select
    products.competition_product_code,
    products.category,
    products.ingredient_list,
    products.serving_size_g,
    products.calories_kcal,
    products.total_fat_g,
    products.saturated_fat_g,
    products.trans_fat_g,
    products.polyunsaturated_fat_g,
    products.monounsaturated_fat_g,
    products.cholesterol_mg,
    products.sodium_mg,
    products.total_carbohydrate_g,
    products.dietary_fiber_g,
    products.total_sugars_g,
    products.added_sugars_g,
    products.protein_g,
    products.vitamin_d_mcg,
    products.calcium_mg,
    products.iron_mg,
    products.potassium_mg,
    products.image_path,
    images.image_local_path,
    images.original_sha256 as image_original_sha256,
    products.data_origin
from {{ ref('base_tastebench__competition_products') }} as products
left join {{ ref('base_tastebench__competition_images') }} as images
    on products.image_path = images.image_path

-- The public competition's products (rated analogs interleaved with decoys; codes renumbered).
select
    cast(source."Product code" as integer) as competition_product_code,
    source."Category" as category,
    source."Ingredient List" as ingredient_list,
    {{ label_nutrients('source') }}
    source.image_path,
    images.local_path as image_local_path,
    images.original_sha256 as image_original_sha256,
    source.data_origin
from {{ source('tastebench', 'tastebench_competition_products') }} as source
left join {{ source('tastebench', 'tastebench_competition_images') }} as images
    on source.image_path = images.image_path

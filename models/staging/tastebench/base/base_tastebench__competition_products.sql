-- The public competition's products.csv (rated analogs interleaved with decoys; codes renumbered).
select
    cast(source."Product code" as integer) as competition_product_code,
    source."Category" as category,
    source."Ingredient List" as ingredient_list,
    {{ label_nutrients('source') }}
    source.image_path,
    source._file_row as file_row_number,
    source.data_origin
from {{ source('tastebench', 'tastebench_competition_products') }} as source

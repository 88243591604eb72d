-- One product photo in the bundle; folder spellings mapped to the canonical category.
select
    source.relative_path as image_key,
    {{ canonical_category('source.category_folder') }} || ':' || source.product_code as product_key,
    {{ canonical_category('source.category_folder') }} as category,
    source.category_folder,
    cast(source.product_code as integer) as product_code,
    cast(source.year as integer) as image_year,
    source.view as image_view,
    source.relative_path,
    cast(source.bytes as bigint) as file_bytes,
    regexp_replace(source._source_file, '/images/?$', '') as bundle_dir,
    source.data_origin
from {{ source('nectar', 'nectar_images') }} as source

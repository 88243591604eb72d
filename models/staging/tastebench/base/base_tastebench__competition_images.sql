-- Manifest of the competition photos (images_256_SOURCE.csv): the downscaled copy in the mirror
-- and the size and sha256 of the original.
select
    image_path,
    local_path as image_local_path,
    cast(original_width as integer) as original_width,
    cast(original_height as integer) as original_height,
    original_sha256,
    _file_row as file_row_number,
    data_origin
from {{ source('tastebench', 'tastebench_competition_images') }}

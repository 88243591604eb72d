-- Published per-block coincidence matrices (ordinal Krippendorff alpha inputs).
select
    category || ':' || block_id || ':' || value_a || ':' || value_b as coincidence_key,
    category,
    cast(block_id as integer) as block_id,
    cast(value_a as integer) as value_a,
    cast(value_b as integer) as value_b,
    cast(coincidence as double) as coincidence,
    data_origin
from {{ source('tastebench', 'tastebench_alpha_coincidence') }}

-- Published between-block statistics for products rated in two or more blocks.
select
    unit || ':' || "group" as unit_group_key,
    unit as unit_id,
    cast("group" as integer) as group_index,
    cast(n as integer) as n_ratings,
    cast(mean_centered as double) as mean_centered,
    cast(sd as double) as sd,
    data_origin
from {{ source('tastebench', 'tastebench_block_group_stats') }}

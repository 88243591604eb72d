-- Published LOO panelist accuracy, one row per panelist-block observation. There is no panelist key:
-- observation_number is the row's position within its block in the published file.
select
    category || ':' || block_id || ':' || row_number() over (
        partition by category, block_id order by _row_order
    ) as observation_key,
    category,
    cast(block_id as integer) as block_id,
    cast(n_analogs as integer) as n_analogs,
    cast(n_pairs as integer) as n_pairs,
    cast(pairwise_accuracy as double) as pairwise_accuracy,
    cast(spearman as double) as spearman,
    cast(recall_at_1 as double) as recall_at_1,
    cast(recall_at_3 as double) as recall_at_3,
    data_origin
from (
    select *, row_number() over () as _row_order
    from {{ source('tastebench', 'tastebench_panelist_block_accuracy') }}
)

-- Published LOO panelist accuracy, one row per panelist-block observation. There is no panelist key:
-- the observation number is the row's position within its block in the published file (its file
-- row, so the key never depends on scan order).
select
    category || ':' || block_id || ':' || row_number() over (
        partition by category, block_id order by _file_row
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
from {{ source('tastebench', 'tastebench_panelist_block_accuracy') }}

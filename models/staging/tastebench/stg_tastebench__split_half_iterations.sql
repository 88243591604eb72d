-- Published split-half reliability, one value per bootstrap iteration.
select
    cast(iteration as integer) as iteration,
    cast(split_half_pairwise_agreement as double) as split_half_pairwise_agreement,
    data_origin
from {{ source('tastebench', 'tastebench_split_half_iterations') }}

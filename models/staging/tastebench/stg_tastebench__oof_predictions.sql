-- Published out-of-fold predictions, one row per (model file, product).
select
    file_stem || ':' || category || ':' || product_code as prediction_key,
    file_stem as model_file_stem,
    model_name,
    feature_set,
    is_bench_variant,
    category,
    cast(product_code as integer) as product_code,
    category || ':' || product_code as product_key,
    cast(true_rank as double) as true_rank,
    cast(true_score as double) as true_score,
    cast(predicted_score as double) as predicted_score,
    case when true_rank is not null then 'true_rank' else 'true_score' end as gold_column,
    data_origin,
    _source_file as source_file
from {{ source('tastebench', 'tastebench_oof_predictions') }}

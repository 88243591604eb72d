-- Every model's out-of-fold predictions, one row per (model, product), with the gold each is
-- scored against: the nine public out-of-fold files (source = 'tastebench_public', gold = the
-- file's true_rank, public product codes) and the warehouse's own fits (source =
-- 'warehouse_fit', fit_id set, model_id = '<model>_<feature set>:<fit_id[:12]>', gold = the
-- panel mean of fct_panel_means, the build's product codes) from fct_food_oof_predictions,
-- appended with `union all by name`; the metrics marts score every model_id on its own rows and
-- gold, so they need no change.
with public_oof as (
    select
        model_file_stem as model_id,
        model_file_stem,
        model_name,
        feature_set,
        is_bench_variant,
        'tastebench_public' as source,
        cast(null as varchar) as fit_id,
        category,
        product_code,
        product_key,
        gold_column,
        coalesce(true_rank, true_score) as gold_value,
        true_rank,
        true_score,
        predicted_score,
        data_origin,
        source_file
    from {{ ref('stg_tastebench__oof_predictions') }}
),

warehouse_fit as (
    select
        model_id,
        model_file_stem,
        model_name,
        feature_set,
        is_bench_variant,
        source,
        fit_id,
        category,
        product_code,
        product_key,
        gold_column,
        gold_value,
        true_rank,
        true_score,
        predicted_score,
        data_origin,
        source_file
    from {{ ref('fct_food_oof_predictions') }}
),

all_oof as (
    select * from public_oof
    union all by name
    select * from warehouse_fit
)

select
    model_id || ':' || category || ':' || product_code as prediction_key,
    *
from all_oof

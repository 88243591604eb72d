-- One sensory rating: (year, category, respondent, product). Respondent ids stay in staging and the
-- gated marts; no public table carries them (docs/benchmark.md §7).
with source as (
    select * from {{ source('nectar', 'nectar_consolidated_sensory_rating') }}
),

categories as (
    select * from {{ ref('categories') }}
),

renamed as (
    select
        {{ canonical_category('source.product_category') }} as category,
        source.product_category as category_raw,
        cast(source.year as integer) as rating_year,
        cast(source.respondent as bigint) as respondent_id,
        cast(source.product_code as integer) as product_code,
        source.join_key,
        cast(source.similarity as double) as similarity,
        cast(source.liking as double) as liking,
        cast(source.flavor as double) as flavor,
        cast(source.texture as double) as texture,
        cast(source.appearance as double) as appearance,
        cast(source.nutrition_purchase_intent as double) as nutrition_purchase_intent,
        {{ null_if_no_response('source.purchase_intent') }} as purchase_intent,
        {{ null_if_no_response('source.brand') }} as brand_response,
        {{ null_if_no_response('source.meatiness') }} as meatiness,
        {{ null_if_no_response('source.greasiness') }} as greasiness,
        {{ null_if_no_response('source.color') }} as color,
        {{ null_if_no_response('source.smokiness') }} as smokiness,
        {{ null_if_no_response('source.sweetness') }} as sweetness,
        {{ null_if_no_response('source.saltiness') }} as saltiness,
        {{ null_if_no_response('source.juiciness') }} as juiciness,
        {{ null_if_no_response('source.firmness') }} as firmness,
        {{ null_if_no_response('source.aftertaste_strength') }} as aftertaste_strength,
        {{ null_if_no_response('source.aftertaste_pleasantness') }} as aftertaste_pleasantness,
        {{ null_if_no_response('source.crispiness') }} as crispiness,
        {{ null_if_no_response('source.breading_flavor') }} as breading_flavor,
        source.data_origin,
        source._source_file as source_file,
        source._loaded_at as loaded_at
    from source
)

select
    renamed.rating_year || ':' || renamed.category || ':' || renamed.respondent_id || ':'
    || renamed.product_code as rating_key,
    renamed.category || ':' || renamed.product_code as product_key,
    renamed.*,
    coalesce(categories.is_benchmark, false) as is_benchmark_category,
    renamed.rating_year in ({{ var('benchmark_years') | join(', ') }}) as is_benchmark_year
from renamed
left join categories on renamed.category = categories.category

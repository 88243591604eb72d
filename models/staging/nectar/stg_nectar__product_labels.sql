-- One product per label file: the automatic labels and the hand-cleaned copy, stacked and tagged.
with auto_labels as (
    select *, 'auto' as label_source from {{ source('nectar', 'nectar_product_labels') }}
),

manual_labels as (
    select *, 'manual' as label_source from {{ source('nectar', 'product_labels_manually_cleaned') }}
),

unioned as (
    select
        label_source, category, product_code, product_type, has_meat, has_dairy,
        cleaned_ingredients, is_reference, data_origin, _source_file
    from auto_labels
    union all
    select
        label_source, category, product_code, product_type, has_meat, has_dairy,
        cleaned_ingredients, is_reference, data_origin, _source_file
    from manual_labels
)

select
    label_source || ':' || {{ canonical_category('unioned.category') }} || ':'
        || unioned.product_code as label_key,
    {{ canonical_category('unioned.category') }} || ':' || unioned.product_code as product_key,
    unioned.label_source,
    {{ canonical_category('unioned.category') }} as category,
    cast(unioned.product_code as integer) as product_code,
    unioned.product_type,
    cast(unioned.has_meat as boolean) as has_meat,
    cast(unioned.has_dairy as boolean) as has_dairy,
    unioned.cleaned_ingredients,
    cast(unioned.is_reference as boolean) as is_reference,
    unioned.data_origin,
    unioned._source_file as source_file
from unioned

-- One product per label file: the automatic labels and the hand-cleaned copy, stacked and tagged.
with auto_labels as (
    select
        'auto' as label_source,
        *
    from {{ ref('base_nectar__product_labels') }}
),

manual_labels as (
    select
        'manual' as label_source,
        *
    from {{ ref('base_nectar__product_labels_manually_cleaned') }}
),

unioned as (
    select
        label_source,
        product_key,
        category,
        product_code,
        product_type,
        has_meat,
        has_dairy,
        cleaned_ingredients,
        is_reference,
        data_origin,
        source_file
    from auto_labels
    union all
    select
        label_source,
        product_key,
        category,
        product_code,
        product_type,
        has_meat,
        has_dairy,
        cleaned_ingredients,
        is_reference,
        data_origin,
        source_file
    from manual_labels
)

select
    label_source || ':' || product_key as label_key,
    product_key,
    label_source,
    category,
    product_code,
    product_type,
    has_meat,
    has_dairy,
    cleaned_ingredients,
    is_reference,
    data_origin,
    source_file
from unioned

-- One product per label file: the automatic labels and the hand-cleaned copy, stacked and tagged.
{%- set label_files = [
    ('auto', 'base_nectar__product_labels'),
    ('manual', 'base_nectar__product_labels_manually_cleaned'),
] %}
{%- for label_source, base_model in label_files %}
select
    '{{ label_source }}:' || product_key as label_key,
    product_key,
    '{{ label_source }}' as label_source,
    category,
    product_code,
    product_type,
    has_meat,
    has_dairy,
    cleaned_ingredients,
    is_reference,
    data_origin,
    source_file
from {{ ref(base_model) }}
{%- if not loop.last %}
union all
{%- endif %}
{%- endfor %}

{#- One product of a NECTAR label file (the automatic labels and the hand-cleaned copy share the
    schema): canonical category spelling, typed flags and code. `source_table` is the raw table
    of `source('nectar', ...)`. -#}
{% macro product_labels(source_table) -%}
select
    {{ canonical_category('source.category') }} || ':' || source.product_code as product_key,
    {{ canonical_category('source.category') }} as category,
    source.category as category_raw,
    cast(source.product_code as integer) as product_code,
    source.product_type,
    cast(source.has_meat as boolean) as has_meat,
    cast(source.has_dairy as boolean) as has_dairy,
    source.cleaned_ingredients,
    cast(source.is_reference as boolean) as is_reference,
    source.data_origin,
    source._source_file as source_file
from {{ source('nectar', source_table) }} as source
{%- endmacro %}

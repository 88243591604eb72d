{#- Map any accepted spelling to the canonical category via the alias seed. -#}
{% macro canonical_category(column) -%}
    coalesce(
        (select a.category from {{ ref('category_aliases') }} as a where a.alias = {{ column }}),
        {{ column }}
    )
{%- endmacro %}

{#- Literal "No response" (and blanks) mean missing in NECTAR text columns. -#}
{% macro null_if_no_response(column) -%}
    nullif(nullif(trim({{ column }}), 'No response'), '')
{%- endmacro %}

{#- The 17 label nutrients per serving (plus serving size), typed and snake_case with units.
    Shared by every source that carries a US nutrition label in these column names; the columns
    are the var label_nutrients of dbt_project.yml. -#}
{% macro label_nutrients(alias) -%}
    {%- set columns = var('label_nutrients') -%}
    {%- for n in columns %}
        cast({{ alias }}."{{ n.label }}" as double) as {{ n.column }},
    {%- endfor %}
{%- endmacro %}

{#- Gold outcome of a product pair from two panel means: the difference, the tie flag
    (|difference| < var('tie_tolerance')) and the winner's code (null for ties). -#}
{% macro pair_outcome(a, b) -%}
    {{ a }}.panel_mean - {{ b }}.panel_mean as panel_mean_difference,
    abs({{ a }}.panel_mean - {{ b }}.panel_mean) < {{ var('tie_tolerance') }} as is_tie,
    case
        when abs({{ a }}.panel_mean - {{ b }}.panel_mean) < {{ var('tie_tolerance') }} then null
        when {{ a }}.panel_mean > {{ b }}.panel_mean then {{ a }}.product_code
        else {{ b }}.product_code
    end as winner_product_code
{%- endmacro %}

{#- Scaled simulated bundles (`tastebench simulate --scale K`) copy every category K times as
    `<Category>_s<k>`, k = 2..K. The build passes `simulation_scale` (from the bundle's
    simulation_manifest.json) and these post-hooks add the copies to the category seeds, with the
    attributes of their base category; the Python loader accepts exactly the same spellings
    (warehouse/sources/seeds.py). Without the var (every real or fixture bundle) nothing is added.
    dbt reloads a seed from its CSV before the hook runs, so the copies are added once. -#}
{% macro scaled_category_copies(kind) -%}
    {%- set scale = var('simulation_scale', 1) | int -%}
    {%- if scale > 1 and kind == 'categories' -%}
        insert into {{ this }}
        select
            base.category || '_s' || copies.k, base.subset, base.subset_order, base.hbt_group,
            base.domain, base.report_year, base.is_benchmark
        from {{ this }} as base cross join range(2, {{ scale + 1 }}) as copies (k)
    {%- elif scale > 1 and kind == 'aliases' -%}
        insert into {{ this }}
        select base.alias || '_s' || copies.k, base.category || '_s' || copies.k
        from {{ this }} as base cross join range(2, {{ scale + 1 }}) as copies (k)
    {%- else -%}
        select 1 as no_scaled_copies
    {%- endif -%}
{%- endmacro %}

{#- Fails when the model's row count differs from another model's (e.g. one row per product). -#}
{% test row_count_equals_ref(model, compare_model) %}
with counts as (
    select
        (select count(*) from {{ model }}) as n_model,
        (select count(*) from {{ compare_model }}) as n_compare
)
select * from counts where n_model != n_compare
{% endtest %}

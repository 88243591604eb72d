{#- Generic test: the model has exactly `expected` rows (optionally where `where_sql`). -#}
{% test row_count_equals(model, expected, where_sql=none) %}
select n_rows from (
    select count(*) as n_rows from {{ model }}
    {% if where_sql %} where {{ where_sql }} {% endif %}
) where n_rows <> {{ expected }}
{% endtest %}

-- Every within-category analog pair (C(n_c, 2) per category) with the gold winner; a pair is tied
-- when |difference of panel means| < var('tie_tolerance') (1e-10).
with analogs as (
    select * from {{ ref('fct_panel_means') }} where is_analog
)

select
    a.category || ':' || a.product_code || ':' || b.product_code as pair_key,
    a.category,
    a.product_code as product_code_a,
    b.product_code as product_code_b,
    a.panel_mean as panel_mean_a,
    b.panel_mean as panel_mean_b,
    a.panel_mean - b.panel_mean as panel_mean_difference,
    abs(a.panel_mean - b.panel_mean) < {{ var('tie_tolerance') }} as is_tie,
    case
        when abs(a.panel_mean - b.panel_mean) < {{ var('tie_tolerance') }} then null
        when a.panel_mean > b.panel_mean then a.product_code
        else b.product_code
    end as winner_product_code,
    a.data_origin
from analogs as a
inner join analogs as b
    on a.category = b.category and a.product_code < b.product_code

-- Every within-category analog pair (C(n_c, 2) per category) with the gold winner; a pair is tied
-- when |difference of panel means| < var('tie_tolerance') (1e-10).
with analogs as (
    select * from {{ ref('fct_panel_means') }}
    where is_analog
)

select
    a.category || ':' || a.product_code || ':' || b.product_code as pair_key,
    a.category,
    a.product_code as product_code_a,
    b.product_code as product_code_b,
    a.panel_mean as panel_mean_a,
    b.panel_mean as panel_mean_b,
    {{ pair_outcome('a', 'b') }},
    a.data_origin
from analogs as a
inner join analogs as b
    on a.category = b.category and a.product_code < b.product_code

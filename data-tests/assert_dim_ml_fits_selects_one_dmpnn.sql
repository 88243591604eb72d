-- Exactly one registered D-MPNN fit is the selected encoder (none when none is registered), it is
-- a D-MPNN, and it has the highest validation macro-F1 of the D-MPNN fits (the grid's rule).
-- Returns a row when that is violated; the test passes when none comes back.
with fits as (select * from {{ ref('dim_ml_fits') }}),

summary as (
    select
        count(*) filter (where family = 'dmpnn') as n_dmpnn,
        count(*) filter (where is_selected_dmpnn) as n_selected,
        count(*) filter (where is_selected_dmpnn and family != 'dmpnn') as n_selected_not_dmpnn,
        max(val_macro_f1) filter (where family = 'dmpnn') as best_val_macro_f1,
        max(val_macro_f1) filter (where is_selected_dmpnn) as selected_val_macro_f1
    from fits
)

select *
from summary
where
    n_selected != least(n_dmpnn, 1)
    or n_selected_not_dmpnn > 0
    or selected_val_macro_f1 is distinct from best_val_macro_f1

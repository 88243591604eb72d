-- fct_compound_embeddings and dim_ml_fits choose the D-MPNN encoder independently (both from the
-- training registry): the D-MPNN vectors must carry the checkpoint hash of the fit flagged
-- is_selected_dmpnn, and exist exactly when one is flagged. Returns the mismatches.
with embedded as (
    select distinct fit_hash
    from {{ ref('fct_compound_embeddings') }}
    where encoder like 'chemprop%'
),

selected as (
    select artifact_sha256
    from {{ ref('dim_ml_fits') }}
    where is_selected_dmpnn
)

select
    embedded.fit_hash,
    selected.artifact_sha256
from embedded
full outer join selected on embedded.fit_hash = selected.artifact_sha256
where embedded.fit_hash is null or selected.artifact_sha256 is null

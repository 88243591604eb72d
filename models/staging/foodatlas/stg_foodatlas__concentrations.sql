-- Concentrations behind FoodAtlas 'contains' edges: one row per (edge, attestation), value and
-- unit as stored (block C converts them to mg/100 g before averaging; docs/features.md). Only
-- v4 carries concentrations (attestations.parquet); the v1 extracts have none, so they add no
-- rows. edge_id matches stg_foodatlas__edges.
with triplet_attestations as (
    select
        'v4:' || triplets.head_id || ':'
        || coalesce(relationships.relationship_name, triplets.relationship_id)
        || ':' || triplets.tail_id as edge_id,
        coalesce(relationships.relationship_name, triplets.relationship_id) as relationship,
        unnest(
            cast(json_extract_string(triplets.attestation_ids_text, '$[*]') as varchar[])
        ) as attestation_id,
        triplets.data_origin
    from {{ ref('base_foodatlas__v4_triplets') }} as triplets
    left join {{ ref('base_foodatlas__v4_relationships') }} as relationships
        on triplets.relationship_id = relationships.relationship_id
    where triplets.attestation_ids_text like '[%'
)

select
    triplet_attestations.edge_id || ':' || triplet_attestations.attestation_id
        as concentration_key,
    triplet_attestations.edge_id,
    'v4' as kg_version,
    triplet_attestations.attestation_id,
    try_cast(attestations.conc_value as double) as conc_value,
    nullif(trim(cast(attestations.conc_unit as varchar)), '') as conc_unit,
    cast(attestations.conc_value_raw as varchar) as conc_value_raw,
    cast(attestations.conc_unit_raw as varchar) as conc_unit_raw,
    triplet_attestations.data_origin
from triplet_attestations
inner join {{ ref('base_foodatlas__v4_attestations') }} as attestations
    on triplet_attestations.attestation_id = attestations.attestation_id
where triplet_attestations.relationship = 'contains'

-- FoodAtlas v4.0 triplets.parquet, one row per (head, relationship, tail) edge.
select
    head_id || ':' || relationship_id || ':' || tail_id as triplet_key,
    head_id,
    relationship_id,
    tail_id,
    source as triplet_source,
    attestation_ids as attestation_ids_text,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v4_triplets') }}

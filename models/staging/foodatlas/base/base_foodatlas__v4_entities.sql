-- FoodAtlas v4.0 entities.parquet, one row per entity (empty when no v4 bundle is configured).
select
    foodatlas_id,
    entity_type,
    common_name,
    scientific_name,
    synonyms as synonyms_text,
    external_ids as external_ids_text,
    attributes as attributes_text,
    coalesce(
        try_cast(json_extract_string(external_ids, '$.pubchem_compound[0]') as bigint),
        try_cast(json_extract_string(external_ids, '$.pubchem_compound') as bigint)
    ) as pubchem_cid,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v4_entities') }}

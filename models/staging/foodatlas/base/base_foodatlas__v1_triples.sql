-- FoodAtlas v1 'contains' triples of the cocoa and garlic extracts, one row per file row: the food
-- (head), the chemical (tail) and the chemical's identifiers as stored.
select
    head || ':' || relation || ':' || tail as triple_key,
    extract_food,
    head as head_id,
    relation as relation_id,
    tail as tail_id,
    foodatlas_id as chemical_foodatlas_id,
    type as chemical_type,
    name as chemical_name,
    synonyms as synonyms_text,
    other_db_ids as external_ids_text,
    try_cast(pubchem_id as bigint) as pubchem_cid,
    mesh_id,
    inchikey,
    inchikey_structure_code,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v1_triples') }}

-- FoodAtlas v4.0 attestations.parquet, one row per attestation: renamed, values as stored.
select
    attestation_id,
    evidence_id,
    source as attestation_source,
    head_name_raw as food_name_raw,
    tail_name_raw as chemical_name_raw,
    conc_value,
    conc_unit,
    conc_value_raw,
    conc_unit_raw,
    food_part,
    food_processing,
    filter_score,
    validated,
    validated_correct,
    head_candidates as head_candidates_text,
    tail_candidates as tail_candidates_text,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v4_attestations') }}

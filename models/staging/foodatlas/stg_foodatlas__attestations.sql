-- FoodAtlas v4.0 attestations: one extracted statement that a food contains a chemical, with the
-- concentration as published (standardized value + unit, and the text it was parsed from). Empty
-- when no v4 bundle is configured. Casts are strict: a value of the wrong type fails the build.
select
    attestation_id,
    evidence_id,
    source as attestation_source,
    head_name_raw as food_name_raw,
    tail_name_raw as chemical_name_raw,
    cast(conc_value as double) as concentration_value,
    conc_unit as concentration_unit,
    cast(conc_value_raw as varchar) as concentration_value_raw,
    conc_unit_raw as concentration_unit_raw,
    food_part,
    food_processing,
    cast(filter_score as double) as filter_score,
    cast(validated as boolean) as is_validated,
    cast(validated_correct as boolean) as is_validated_correct,
    head_candidates as head_candidates_text,
    tail_candidates as tail_candidates_text,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v4_attestations') }}

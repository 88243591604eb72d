-- FoodAtlas v4.0 attestations: one extracted statement that a food contains a chemical, with the
-- concentration as published (standardized value + unit, and the text it was parsed from). Empty
-- when no v4 bundle is configured. Casts are strict: a value of the wrong type fails the build.
select
    attestation_id,
    evidence_id,
    attestation_source,
    food_name_raw,
    chemical_name_raw,
    cast(conc_value as double) as concentration_value,
    cast(conc_unit as varchar) as concentration_unit,
    cast(conc_value_raw as varchar) as concentration_value_raw,
    cast(conc_unit_raw as varchar) as concentration_unit_raw,
    food_part,
    food_processing,
    cast(filter_score as double) as filter_score,
    cast(validated as boolean) as is_validated,
    cast(validated_correct as boolean) as is_validated_correct,
    head_candidates_text,
    tail_candidates_text,
    file_row_number,
    data_origin
from {{ ref('base_foodatlas__v4_attestations') }}

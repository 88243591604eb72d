-- FoodAtlas entities from every loaded KG version, keyed '<version>:<id>': v1 chemicals and foods
-- from the triples, v4 entities as published.
with v1_chemicals as (
    select
        'v1:' || tail_id as entity_id,
        'v1' as kg_version,
        tail_id as source_entity_id,
        'chemical' as entity_type,
        chemical_name as entity_name,
        synonyms_text,
        external_ids_text,
        pubchem_cid,
        inchikey,
        data_origin
    from {{ ref('base_foodatlas__v1_triples') }}
    -- a chemical's identifiers are the same on each of its rows; the first by extract, food and
    -- file row represents it
    qualify row_number() over (
        partition by tail_id order by extract_food, head_id, file_row_number
    ) = 1
),

v1_foods as (
    select distinct
        'v1:' || head_id as entity_id,
        'v1' as kg_version,
        head_id as source_entity_id,
        'food' as entity_type,
        extract_food || ' (' || head_id || ')' as entity_name,
        cast(null as varchar) as synonyms_text,
        cast(null as varchar) as external_ids_text,
        cast(null as bigint) as pubchem_cid,
        cast(null as varchar) as inchikey,
        data_origin
    from {{ ref('base_foodatlas__v1_triples') }}
),

v4 as (
    select
        'v4:' || foodatlas_id as entity_id,
        'v4' as kg_version,
        foodatlas_id as source_entity_id,
        entity_type,
        common_name as entity_name,
        synonyms_text,
        external_ids_text,
        pubchem_cid,
        cast(null as varchar) as inchikey,
        data_origin
    from {{ ref('base_foodatlas__v4_entities') }}
)

select * from v1_chemicals
union all
select * from v1_foods
union all
select * from v4

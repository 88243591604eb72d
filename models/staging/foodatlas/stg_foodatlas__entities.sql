-- FoodAtlas entities from every loaded KG version, keyed '<version>:<id>'.
with v1_chemicals as (
    select
        'v1:' || tail as entity_id,
        'v1' as kg_version,
        tail as source_entity_id,
        'chemical' as entity_type,
        name as entity_name,
        synonyms as synonyms_text,
        other_db_ids as external_ids_text,
        try_cast(pubchem_id as bigint) as pubchem_cid,
        inchikey,
        data_origin
    from {{ source('foodatlas', 'foodatlas_v1_triples') }}
    qualify row_number() over (partition by tail order by extract_food, head) = 1
),

v1_foods as (
    select distinct
        'v1:' || head as entity_id,
        'v1' as kg_version,
        head as source_entity_id,
        'food' as entity_type,
        extract_food || ' (' || head || ')' as entity_name,
        cast(null as varchar) as synonyms_text,
        cast(null as varchar) as external_ids_text,
        cast(null as bigint) as pubchem_cid,
        cast(null as varchar) as inchikey,
        data_origin
    from {{ source('foodatlas', 'foodatlas_v1_triples') }}
),

v4 as (
    select
        'v4:' || foodatlas_id as entity_id,
        'v4' as kg_version,
        foodatlas_id as source_entity_id,
        entity_type,
        common_name as entity_name,
        synonyms as synonyms_text,
        external_ids as external_ids_text,
        coalesce(
            try_cast(json_extract_string(external_ids, '$.pubchem_compound[0]') as bigint),
            try_cast(json_extract_string(external_ids, '$.pubchem_compound') as bigint)
        ) as pubchem_cid,
        cast(null as varchar) as inchikey,
        data_origin
    from {{ source('foodatlas', 'foodatlas_v4_entities') }}
)

select * from v1_chemicals
union all
select * from v1_foods
union all
select * from v4

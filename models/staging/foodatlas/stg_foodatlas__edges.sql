-- FoodAtlas edges (head -> relationship -> tail) from every loaded KG version.
with v1 as (
    select
        'v1:' || head || ':contains:' || tail as edge_id,
        'v1' as kg_version,
        'v1:' || head as head_entity_id,
        case relation when 'r0' then 'contains' else relation end as relationship,
        'v1:' || tail as tail_entity_id,
        'FoodAtlas v1 ' || extract_food || ' extract' as edge_source,
        data_origin
    from {{ source('foodatlas', 'foodatlas_v1_triples') }}
),

v4 as (
    select
        'v4:' || triplets.head_id || ':' || coalesce(relationships.name, triplets.relationship_id)
            || ':' || triplets.tail_id as edge_id,
        'v4' as kg_version,
        'v4:' || triplets.head_id as head_entity_id,
        coalesce(relationships.name, triplets.relationship_id) as relationship,
        'v4:' || triplets.tail_id as tail_entity_id,
        triplets.source as edge_source,
        triplets.data_origin
    from {{ source('foodatlas', 'foodatlas_v4_triplets') }} as triplets
    left join {{ source('foodatlas', 'foodatlas_v4_relationships') }} as relationships
        on triplets.relationship_id = relationships.foodatlas_id
)

select * from v1
union all
select * from v4

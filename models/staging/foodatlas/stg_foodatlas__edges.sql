-- FoodAtlas edges (head -> relationship -> tail) from every loaded KG version: the v1 triples and
-- the v4 triplets with their relationship names.
with v1 as (
    select
        'v1:' || head_id || ':contains:' || tail_id as edge_id,
        'v1' as kg_version,
        'v1:' || head_id as head_entity_id,
        case relation_id when 'r0' then 'contains' else relation_id end as relationship,
        'v1:' || tail_id as tail_entity_id,
        'FoodAtlas v1 ' || extract_food || ' extract' as edge_source,
        data_origin
    from {{ ref('base_foodatlas__v1_triples') }}
),

v4 as (
    select
        'v4:' || triplets.head_id || ':'
        || coalesce(relationships.relationship_name, triplets.relationship_id)
        || ':' || triplets.tail_id as edge_id,
        'v4' as kg_version,
        'v4:' || triplets.head_id as head_entity_id,
        coalesce(relationships.relationship_name, triplets.relationship_id) as relationship,
        'v4:' || triplets.tail_id as tail_entity_id,
        triplets.triplet_source as edge_source,
        triplets.data_origin
    from {{ ref('base_foodatlas__v4_triplets') }} as triplets
    left join {{ ref('base_foodatlas__v4_relationships') }} as relationships
        on triplets.relationship_id = relationships.relationship_id
)

select * from v1
union all
select * from v4

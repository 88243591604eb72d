-- FoodAtlas v4.0 relationships.parquet: relationship id -> name.
select
    foodatlas_id as relationship_id,
    name as relationship_name,
    _file_row as file_row_number,
    data_origin
from {{ source('foodatlas', 'foodatlas_v4_relationships') }}

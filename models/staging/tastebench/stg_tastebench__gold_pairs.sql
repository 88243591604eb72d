-- The public gold pairs: winner and loser of every untied within-category analog pair.
select
    cast(pair_id as integer) as pair_id,
    category,
    cast(product_code_1 as integer) as product_code_1,
    cast(product_code_2 as integer) as product_code_2,
    cast(higher_rated_product as integer) as winner_product_code,
    cast(
        case when higher_rated_product = product_code_1 then product_code_2 else product_code_1 end
        as integer
    ) as loser_product_code,
    category || ':' || higher_rated_product as winner_product_key,
    data_origin
from {{ source('tastebench', 'tastebench_gold_pairs') }}

-- product_labels_manually_cleaned.csv (the hand-cleaned copy of the labels): one product,
-- canonical category spelling.
{{ product_labels('product_labels_manually_cleaned') }}

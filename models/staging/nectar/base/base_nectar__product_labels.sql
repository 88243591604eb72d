-- nectar_product_labels.csv (the automatic labels): one product, canonical category spelling.
{{ product_labels('nectar_product_labels') }}

{#- The 17 label nutrients per serving (plus serving size), typed and snake_case with units.
    Shared by every source that carries a US nutrition label in these column names. -#}
{% macro label_nutrients(alias) -%}
    {%- set columns = [
        ('Serving Size (g)', 'serving_size_g'), ('Calories', 'calories_kcal'),
        ('Total Fat (g)', 'total_fat_g'), ('Saturated Fat (g)', 'saturated_fat_g'),
        ('Trans Fat (g)', 'trans_fat_g'), ('Polyunsaturated Fat (g)', 'polyunsaturated_fat_g'),
        ('Monounsaturated Fat (g)', 'monounsaturated_fat_g'), ('Cholesterol (mg)', 'cholesterol_mg'),
        ('Sodium (mg)', 'sodium_mg'), ('Total Carbohydrate (g)', 'total_carbohydrate_g'),
        ('Dietary Fiber (g)', 'dietary_fiber_g'), ('Total Sugars (g)', 'total_sugars_g'),
        ('Added Sugars (g)', 'added_sugars_g'), ('Protein (g)', 'protein_g'),
        ('Vitamin D (mcg)', 'vitamin_d_mcg'), ('Calcium (mg)', 'calcium_mg'),
        ('Iron (mg)', 'iron_mg'), ('Potassium (mg)', 'potassium_mg'),
    ] -%}
    {%- for source_name, target_name in columns %}
        cast({{ alias }}."{{ source_name }}" as double) as {{ target_name }},
    {%- endfor %}
{%- endmacro %}

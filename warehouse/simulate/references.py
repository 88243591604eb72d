"""Plausible animal reference products (label text and nutrition per serving), written for the
simulation from general label knowledge; no real product or brand is copied.

One declaration per category (:data:`REFERENCES`): its product noun, typical package size (g)
and reference labels, each a serving size (g), an ingredient list and nutrients per serving in
``schema.NUTRIENT_COLUMNS`` order (None = not on the label). A second label is the second
reference of the categories in ``design.TWO_REFERENCE_CATEGORIES``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReferenceCategory:
    """A category's animal side: ``noun`` names its products (``product_type`` "plant-based
    <noun>" / "animal <noun>", branded label text), ``package_g`` is its typical package weight
    (servings per container = package / serving size), ``labels`` its references' labels
    (serving size g, ingredient list, nutrients per serving)."""

    noun: str
    package_g: int
    labels: tuple[tuple[float, str, tuple], ...]


# nutrients: Calories, Total Fat, Sat Fat, Trans Fat, Poly, Mono, Cholesterol, Sodium, Carb,
# Fiber, Total Sugars, Added Sugars, Protein, Vitamin D, Calcium, Iron, Potassium
N = None

REFERENCES: dict[str, ReferenceCategory] = {
    "Bacon": ReferenceCategory(
        "bacon",
        170,
        (
            (
                16.0,
                "Pork Cured With Water, Salt, Sugar, Smoke Flavoring, Sodium Phosphate, Sodium "
                "Erythorbate, Sodium Nitrite",
                (80, 6.0, 2.0, 0.0, N, N, 15, 290, 0, 0, 0, 0, 5, N, N, N, N),
            ),
            (
                15.0,
                "Turkey, Water, Contains 2% or Less of Salt, Sugar, Natural Smoke Flavor, Sodium "
                "Phosphate, Sodium Erythorbate, Sodium Nitrite",
                (35, 2.5, 0.5, 0.0, N, N, 15, 180, 0, 0, 0, 0, 3, N, N, N, N),
            ),
        ),
    ),
    "Barista_Milk": ReferenceCategory(
        "barista milk",
        946,
        (
            (
                240.0,
                "Grade A Milk, Vitamin D3",
                (150, 8.0, 5.0, 0.0, N, N, 35, 120, 12, 0, 12, 0, 8, 2.5, 300, 0.0, 380),
            ),
        ),
    ),
    "Bratwurst": ReferenceCategory(
        "bratwurst",
        400,
        (
            (
                85.0,
                "Pork, Water, Contains 2% or Less of Salt, Corn Syrup, Spices, Dextrose, Natural "
                "Flavors, Sodium Phosphate, Monosodium Glutamate, in a Pork Casing",
                (250, 22.0, 8.0, 0.0, N, N, 55, 640, 2, 0, 1, 1, 12, N, N, N, N),
            ),
        ),
    ),
    "Breaded_Chicken_Filet": ReferenceCategory(
        "breaded chicken filet",
        300,
        (
            (
                112.0,
                "Boneless Skinless Chicken Breast With Rib Meat, Water, Seasoning (Salt, Spice), "
                "Breaded With: Wheat Flour, Water, Yellow Corn Flour, Modified Corn Starch, Salt, "
                "Spices, Dextrose, Leavening, Nonfat Milk. Breading Set in Vegetable Oil",
                (230, 11.0, 2.0, 0.0, N, N, 35, 480, 14, 1, 1, 0, 17, N, N, N, N),
            ),
        ),
    ),
    "Breakfast_Sausages": ReferenceCategory(
        "breakfast sausage",
        230,
        (
            (
                46.0,
                "Pork, Water, Salt, Spices, Sugar, Natural Flavors",
                (170, 15.0, 5.0, 0.0, N, N, 35, 380, 0, 0, 0, 0, 8, N, N, N, N),
            ),
        ),
    ),
    "Burgers": ReferenceCategory(
        "burger",
        226,
        (
            (
                112.0,
                "Ground Beef (80% Lean, 20% Fat)",
                (290, 23.0, 9.0, 1.5, N, N, 80, 75, 0, 0, 0, 0, 19, 0.1, 20, 2.2, 280),
            ),
            (
                112.0,
                "Ground Beef (85% Lean, 15% Fat)",
                (240, 17.0, 7.0, 1.0, N, N, 75, 75, 0, 0, 0, 0, 21, 0.1, 20, 2.4, 300),
            ),
        ),
    ),
    "Butter": ReferenceCategory(
        "butter",
        454,
        (
            (
                14.0,
                "Pasteurized Cream, Salt",
                (100, 11.0, 7.0, 0.5, N, N, 30, 90, 0, 0, 0, 0, 0, N, N, N, N),
            ),
        ),
    ),
    "Cheddar_Cheese": ReferenceCategory(
        "cheddar cheese",
        200,
        (
            (
                21.0,
                "Pasteurized Milk, Cheese Culture, Salt, Enzymes, Annatto (Color)",
                (80, 6.0, 3.5, 0.0, N, N, 20, 130, 0, 0, 0, 0, 5, N, 150, 0.0, N),
            ),
        ),
    ),
    "Chicken_Strips": ReferenceCategory(
        "chicken strips",
        255,
        (
            (
                84.0,
                "Chicken Breast With Rib Meat, Water, Contains 2% or Less of Salt, Sodium "
                "Phosphates",
                (110, 2.5, 0.5, 0.0, N, N, 50, 400, 1, 0, 0, 0, 20, N, N, N, N),
            ),
        ),
    ),
    "Cream_Cheese": ReferenceCategory(
        "cream cheese",
        227,
        (
            (
                28.0,
                "Pasteurized Milk and Cream, Salt, Carob Bean Gum, Cheese Culture",
                (90, 9.0, 5.0, 0.0, N, N, 30, 90, 1, 0, 1, 0, 2, N, 30, 0.0, 40),
            ),
        ),
    ),
    "Creamer": ReferenceCategory(
        "creamer",
        473,
        (
            (15.0, "Milk, Cream", (20, 1.5, 1.0, 0.0, N, N, 5, 10, 1, 0, 1, 0, 0, N, 20, 0.0, 20)),
            (
                15.0,
                "Heavy Cream, Carrageenan",
                (50, 5.0, 3.5, 0.0, N, N, 20, 5, 0, 0, 0, 0, 0, N, 10, 0.0, 10),
            ),
        ),
    ),
    "Deli_Ham": ReferenceCategory(
        "deli ham",
        155,
        (
            (
                56.0,
                "Ham Cured With Water, Contains 2% or Less of Salt, Sugar, Sodium Phosphate, "
                "Sodium Erythorbate, Sodium Nitrite",
                (60, 1.5, 0.5, 0.0, N, N, 25, 500, 1, 0, 1, 1, 10, N, N, N, N),
            ),
        ),
    ),
    "Deli_Turkey": ReferenceCategory(
        "deli turkey",
        155,
        (
            (
                56.0,
                "Turkey Breast, Water, Contains 2% or Less of Salt, Sugar, Sodium Phosphate, "
                "Carrageenan, Natural Flavor",
                (50, 1.0, 0.0, 0.0, N, N, 25, 460, 1, 0, 1, 1, 10, N, N, N, N),
            ),
            (
                56.0,
                "Turkey Breast, Water, Salt, Cane Sugar, Natural Smoke Flavor",
                (60, 1.0, 0.0, 0.0, N, N, 25, 520, 1, 0, 1, 1, 11, N, N, N, N),
            ),
        ),
    ),
    "Hot_Dogs": ReferenceCategory(
        "hot dog",
        300,
        (
            (
                49.0,
                "Beef, Water, Contains 2% or Less of Salt, Spices, Sodium Lactate, Paprika, "
                "Sodium Diacetate, Sodium Erythorbate, Sodium Nitrite, Garlic Powder",
                (150, 14.0, 6.0, 0.5, N, N, 30, 480, 1, 0, 0, 0, 6, N, N, N, N),
            ),
            (
                45.0,
                "Mechanically Separated Chicken, Pork, Water, Corn Syrup, Contains 2% or Less of "
                "Salt, Flavor, Sodium Lactate, Sodium Phosphates, Sodium Diacetate, Sodium Nitrite",
                (130, 12.0, 4.0, 0.0, N, N, 45, 430, 2, 0, 1, 1, 5, N, N, N, N),
            ),
        ),
    ),
    "Ice_Cream_Hard_Serve": ReferenceCategory(
        "ice cream",
        420,
        (
            (
                88.0,
                "Cream, Skim Milk, Cane Sugar, Egg Yolks, Vanilla Extract",
                (250, 16.0, 10.0, 0.5, N, N, 85, 50, 22, 0, 21, 15, 4, N, 100, 0.0, 150),
            ),
            (
                88.0,
                "Cream, Skim Milk, Cane Sugar, Cocoa Processed With Alkali, Egg Yolks",
                (260, 16.0, 10.0, 0.5, N, N, 75, 45, 24, 1, 22, 16, 5, N, 100, 0.7, 220),
            ),
        ),
    ),
    "Meatballs": ReferenceCategory(
        "meatballs",
        283,
        (
            (
                85.0,
                "Beef, Pork, Water, Bread Crumbs (Wheat Flour, Sugar, Yeast, Salt), Parmesan "
                "Cheese (Milk, Cheese Culture, Salt, Enzymes), Eggs, Onion, Garlic, Spices",
                (230, 17.0, 7.0, 0.5, N, N, 60, 480, 6, 0, 1, 0, 13, N, 40, 1.4, N),
            ),
        ),
    ),
    "Milk": ReferenceCategory(
        "milk",
        1890,
        (
            (
                240.0,
                "Grade A Pasteurized Whole Milk, Vitamin D3",
                (150, 8.0, 5.0, 0.0, N, N, 35, 125, 12, 0, 12, 0, 8, 2.5, 300, 0.0, 390),
            ),
            (
                240.0,
                "Grade A Reduced Fat Milk, Vitamin A Palmitate, Vitamin D3",
                (120, 5.0, 3.0, 0.0, N, N, 20, 125, 12, 0, 12, 0, 8, 2.5, 310, 0.0, 390),
            ),
        ),
    ),
    "Mozzarella": ReferenceCategory(
        "mozzarella",
        200,
        (
            (
                28.0,
                "Pasteurized Part-Skim Milk, Cheese Culture, Salt, Enzymes",
                (80, 6.0, 3.5, 0.0, N, N, 20, 190, 1, 0, 0, 0, 7, N, 200, 0.0, N),
            ),
        ),
    ),
    "Nuggets": ReferenceCategory(
        "nuggets",
        300,
        (
            (
                86.0,
                "Chicken Breast With Rib Meat, Water, Salt, Breaded With: Enriched Wheat Flour, "
                "Water, Yellow Corn Flour, Modified Corn Starch, Salt, Spices, Leavening, "
                "Dextrose. Breading Set in Vegetable Oil",
                (200, 12.0, 2.5, 0.0, N, N, 35, 400, 11, 1, 0, 0, 12, N, N, N, N),
            ),
        ),
    ),
    "Pulled_Pork": ReferenceCategory(
        "pulled pork",
        283,
        (
            (
                85.0,
                "Pork, Barbecue Sauce (Tomato Puree, High Fructose Corn Syrup, Vinegar, Molasses, "
                "Salt, Spices, Onion, Garlic, Natural Smoke Flavor), Water, Salt, Sodium Phosphate",
                (160, 6.0, 2.0, 0.0, N, N, 45, 520, 12, 0, 10, 9, 14, N, N, N, N),
            ),
        ),
    ),
    "Sour_Cream": ReferenceCategory(
        "sour cream",
        340,
        (
            (
                30.0,
                "Cultured Pasteurized Grade A Cream, Enzymes",
                (60, 5.0, 3.5, 0.0, N, N, 20, 15, 1, 0, 1, 0, 1, N, 30, 0.0, 40),
            ),
        ),
    ),
    "Steak": ReferenceCategory(
        "steak",
        227,
        (
            (
                112.0,
                "Beef Sirloin Steak",
                (200, 11.0, 4.5, 0.5, N, N, 75, 60, 0, 0, 0, 0, 24, 0.1, 20, 2.0, 350),
            ),
        ),
    ),
    "Unbreaded_Chicken_Breast": ReferenceCategory(
        "chicken breast",
        227,
        (
            (
                112.0,
                "Boneless Skinless Chicken Breast, Water, Salt",
                (120, 2.5, 0.5, 0.0, N, N, 75, 330, 0, 0, 0, 0, 24, N, N, N, N),
            ),
        ),
    ),
    "Yogurt": ReferenceCategory(
        "yogurt",
        450,
        (
            (
                170.0,
                "Cultured Pasteurized Whole Milk, Live Active Cultures",
                (190, 10.0, 6.0, 0.0, N, N, 35, 70, 7, 0, 6, 0, 18, N, 200, 0.0, 240),
            ),
            (
                170.0,
                "Cultured Pasteurized Nonfat Milk, Live Active Cultures",
                (90, 0.0, 0.0, 0.0, N, N, 10, 65, 6, 0, 5, 0, 17, N, 190, 0.0, 240),
            ),
        ),
    ),
}

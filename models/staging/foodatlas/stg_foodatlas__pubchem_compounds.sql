-- PubChem compound records of the KGv2 seed: the bridge from CIDs to structures (SMILES).
select
    cast("CID" as bigint) as pubchem_cid,
    "IUPACName" as iupac_name,
    nullif("CanonicalSmiles", 'NoneElement(attributes={})') as pubchem_canonical_smiles,
    nullif("IsomericSmiles", 'NoneElement(attributes={})') as pubchem_isomeric_smiles,
    "MolecularFormula" as molecular_formula,
    try_cast("MolecularWeight" as double) as molecular_weight,
    "InChIKey" as inchikey,
    "InChI" as inchi,
    data_origin
from {{ source('foodatlas', 'foodatlas_kgv2_pubchem_compounds') }}
